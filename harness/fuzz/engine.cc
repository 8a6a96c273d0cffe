// The libFuzzer driver: callback, findings, crash files, progress, summary; libFuzzer's process.
#include "harness/fuzz/engine.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "harness/corpus/corpus.h"
#include "harness/corpus/replay.h"
#include "harness/fuzz/executor.h"
#include "harness/pipeline/record.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

#ifdef STABFUZZ_HAVE_LIBFUZZER
extern "C" int LLVMFuzzerRunDriver(int* argc, char*** argv,
                                   int (*user_cb)(const uint8_t* data, size_t size));
#endif

namespace stabfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

// libFuzzer calls a plain function: the run's state lives here, one run per process.
struct State {
  const Registry* registry = nullptr;
  FuzzOptions opts;
  TablePrinter table = nullptr;
  std::optional<Executor> exec;
  std::unique_ptr<reports::FindingsWriter> writer;
  std::map<std::pair<std::string, DType>, pipeline::ImplResult> results;  // by (impl, dtype)
  std::vector<std::pair<std::string, DType>> order;                       // first-seen order
  Clock::time_point start, next_progress;
  int64_t execs = 0, invalid = 0, findings = 0;
  int64_t first_finding_exec = -1;
  double first_finding_s = -1;
  double max_ratio = 0;
  bool finished = false;
  std::string findings_path, summary_path;
};
State* g = nullptr;

double elapsed() { return std::chrono::duration<double>(Clock::now() - g->start).count(); }

pipeline::ImplResult& row(const Target& t, DType d) {
  const auto key = std::make_pair(t.id, d);
  auto it = g->results.find(key);
  if (it == g->results.end()) {
    pipeline::ImplResult r;
    r.family = g->exec->family().name;
    r.impl = t.id;
    r.kind = t.kind;
    r.dtype = d;
    r.has_cestac = static_cast<bool>(t.cestac);
    r.min_digits = dtype_max_digits(d);
    it = g->results.emplace(key, r).first;
    g->order.push_back(key);
  }
  return it->second;
}

std::string hex_digest(const uint8_t* data, size_t size) {
  const uint64_t h = hash_str(std::string_view(reinterpret_cast<const char*>(data), size));
  std::ostringstream os;
  os << std::hex << std::setw(16) << std::setfill('0') << h;
  return os.str();
}

// Shrinks the failing input, writes it as a corpus file (and the raw bytes beside it) and appends
// the finding; the replay line is `stabfuzz replay` of that file, checked before it is written.
void record_finding(const Target& t, const Execution& ex, const Verdict& v, const uint8_t* data,
                    size_t size) {
  const Family& fam = g->exec->family();
  const Input& in = ex.decoded.input;
  // With --time, one shrink may take a tenth of it (at least 0.5 s), so short runs stay short.
  auto [small, steps, sv] = g->exec->shrink(
      t, in, v, g->opts.shrink_evals, g->opts.time_s > 0 ? std::max(0.5, g->opts.time_s / 10) : 0);
  corpus::Entry e;
  e.family = fam.name;
  e.impl = t.id;
  e.input = small;
  e.expect = corpus::Expect::detected;
  e.seed = g->exec->seed();
  e.note = "stabfuzz fuzz finding: execution " + std::to_string(g->execs) + ", regime " +
           fam.regimes[ex.decoded.regime].name + ", " + std::to_string(in.total_size()) +
           " values shrunk to " + std::to_string(small.total_size()) + ", seed " +
           std::to_string(g->exec->seed());
  std::string variant = t.id.substr(fam.name.size() + 1);
  for (char& c : variant)
    if (c == '/') c = '-';
  const std::string base = g->opts.out_dir + "/crashes/" + variant + "_" +
                           std::string(dtype_name(in.dtype)) + "_" + hex_digest(data, size);
  const std::string path = base + ".txt";
  corpus::write_file(path, e);
  if (FILE* f = std::fopen((base + ".bin").c_str(), "wb")) {  // the bytes, for libFuzzer and AFL++
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  const corpus::ReplayOutcome check = corpus::check(*g->registry, corpus::read_file(path), path);
  if (!check.ok)
    std::cerr << "stabfuzz: warning: " << path << " does not replay: " << check.message << "\n";
  const pipeline::CaseKey key{fam.name, t.id, in.dtype, g->exec->seed(), g->execs - 1};
  json::Value j =
      pipeline::finding_json(fam, t, key, fam.regimes[ex.decoded.regime].name, small, sv,
                             in.total_size(), steps, "fuzz", "stabfuzz replay " + path);
  j.set("feedback", g->opts.feedback == Feedback::error ? "error" : "coverage");
  j.set("execution", static_cast<long long>(g->execs));
  j.set("crash_file", path);
  g->writer->append(j);
  if (!g->opts.quiet)
    std::cerr << "stabfuzz fuzz: finding on " << t.id << " " << dtype_name(in.dtype)
              << " at execution " << g->execs << " (" << sv.detectors() << ", error "
              << sv.max_ratio << " x tolerance): " << path << std::endl;
}

json::Value summary() {
  json::Value s;
  s.set("target", g->opts.family);
  s.set("engine", "fuzz");
  s.set("feedback", g->opts.feedback == Feedback::error ? "error" : "coverage");
  s.set("generator", g->opts.base == Base::uniform ? "uniform" : "regimes");
  s.set("seed", static_cast<unsigned long long>(g->opts.seed));
  s.set("seconds", elapsed());
  s.set("executions", static_cast<long long>(g->execs));
  s.set("invalid_inputs", static_cast<long long>(g->invalid));
  s.set("executions_per_second", g->execs / std::max(elapsed(), 1e-9));
  s.set("first_finding_execution", static_cast<long long>(g->first_finding_exec));
  s.set("first_finding_seconds", g->first_finding_s);
  s.set("max_error_over_tolerance", g->max_ratio);
  return s;
}

// Writes summary.json and the reports, prints the table. Once, from whichever path ends the run.
int finish() {
  if (g->finished || g->opts.child) return 0;
  g->finished = true;
  campaign::RunResult res;
  res.fail_on = g->opts.fail_on;
  res.findings_path = g->findings_path;
  res.summary_path = g->summary_path;
  for (const auto& key : g->order) {
    pipeline::ImplResult r = g->results.at(key);
    if (r.kind != TargetKind::injected && r.fails(g->opts.fail_on)) res.exit_code = 1;
    res.results.push_back(r);
  }
  json::Value s = summary();
  json::Array rows;
  for (const auto& r : res.results) rows.push_back(pipeline::impl_result_json(r, g->opts.fail_on));
  s.set("results", std::move(rows));
  s.set("fail_on", g->opts.fail_on.str());
  s.set("exit_code", res.exit_code);
  reports::write_json_atomically(res.summary_path, s);
  static std::ostringstream sink;
  std::ostream& log = g->opts.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  if (g->opts.write_reports) res.report_paths = reports::write_reports(g->opts.out_dir, log);
  if (g->opts.progress_tty) std::cerr << "\r\033[K";
  std::cerr << "stabfuzz fuzz: " << g->execs << " executions in " << std::fixed
            << std::setprecision(1) << elapsed() << " s (" << std::setprecision(0)
            << g->execs / std::max(elapsed(), 1e-9) << " exec/s), " << g->findings << " findings"
            << std::defaultfloat << std::endl;
  g->table(res, std::cout);
  std::cout << "findings: " << res.findings_path << "\nsummary:  " << res.summary_path << "\n";
  for (const auto& p : res.report_paths) std::cout << "report:   " << p << "\n";
  std::cout << std::flush;
  return res.exit_code;
}

[[noreturn]] void finish_and_exit() {
  const int code = finish();
  std::fflush(nullptr);
  std::_Exit(code);  // not exit(): libFuzzer's exit handler would call this a crash
}

void progress() {
  const auto now = Clock::now();
  if (g->opts.quiet || g->opts.child || now < g->next_progress) return;
  g->next_progress =
      now + (g->opts.progress_tty ? std::chrono::milliseconds(250) : std::chrono::seconds(5));
  std::ostringstream line;
  line << "fuzz " << g->opts.family << ": " << g->execs << " execs ("
       << static_cast<int64_t>(g->execs / std::max(elapsed(), 1e-9)) << "/s), " << g->findings
       << " findings, max error " << std::setprecision(3) << g->max_ratio << " x tolerance, "
       << static_cast<int>(elapsed()) << " s";
  if (g->opts.time_s > 0) line << " of " << g->opts.time_s;
  if (g->opts.progress_tty)
    std::cerr << "\r\033[K" << line.str() << std::flush;
  else
    std::cerr << "  " << line.str() << std::endl;
}

// A SIGINT, SIGTERM or SIGHUP received by libFuzzer's process (Ctrl-C, timeout, the parent passing
// one on): the run ends at the next execution as at its own limits, with its summary and reports.
// One that comes 2 s or more after the first (an execution that does not end) ends the process at
// once; copies of the first (the terminal's and the parent's) do not.
volatile std::sig_atomic_t g_interrupt = 0;
std::atomic<int64_t> g_interrupt_ms{0};

int64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

[[maybe_unused]] void on_interrupt(int sig) {
  const int64_t now = monotonic_ms();
  if (g_interrupt && now - g_interrupt_ms.load() >= 2000) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  if (!g_interrupt) g_interrupt_ms.store(now);
  g_interrupt = sig;
}

[[maybe_unused]] int callback(const uint8_t* data, size_t size) {
  if (g_interrupt) {
    std::cerr << "\nstabfuzz fuzz: interrupted (" << strsignal(g_interrupt)
              << "): the run ends here" << std::endl;
    finish_and_exit();
  }
  const Execution ex = g->exec->run(data, size);
  ++g->execs;
  if (!ex.decoded.valid) {  // the regime broke its own contract: counted, the cell 0 still touched
    ++g->invalid;
    return 0;
  }
  if (g->opts.child) return 0;
  bool stop = false;
  for (const auto& tv : ex.verdicts) {
    const Verdict& v = tv.verdict;
    pipeline::ImplResult& r = row(*tv.target, ex.decoded.input.dtype);
    ++r.inputs;
    ++r.regime_inputs[g->exec->family().regimes[ex.decoded.regime].name];
    r.seconds = elapsed();
    if (v.undecidable) ++r.undecidable;
    r.max_ulp = std::max(r.max_ulp, v.max_ulp);
    r.max_ratio = std::max(r.max_ratio, v.max_ratio);
    g->max_ratio = std::max(g->max_ratio, v.max_ratio);
    if (v.has_cestac) r.min_digits = std::min(r.min_digits, v.min_digits);
    if (!v.finding()) continue;
    ++r.failing_inputs;
    ++r.failing_by_kind[static_cast<size_t>(v.kind)];
    r.oracle_detections += v.oracle_fired;
    r.cestac_detections += v.cestac_fired;
    if (g->first_finding_exec < 0) {
      g->first_finding_exec = g->execs;
      g->first_finding_s = elapsed();
    }
    if (r.findings >= (g->opts.keep_going ? g->opts.max_findings : 1)) continue;
    record_finding(*tv.target, ex, v, data, size);
    ++r.findings;
    ++g->findings;
    // A kind that does not fail the run (underflow by default) is recorded without ending it.
    if (!g->opts.keep_going && g->opts.fail_on.has(v.kind)) stop = true;
  }
  progress();
  if (stop || (g->opts.runs > 0 && g->execs >= g->opts.runs) ||
      (g->opts.time_s > 0 && elapsed() >= g->opts.time_s))
    finish_and_exit();
  return 0;
}

bool has_flag(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a.rfind("-" + name + "=", 0) == 0) return true;
  return false;
}

}  // namespace

bool passive_mode(const std::vector<std::string>& args) {
  for (const char* f : {"merge", "set_cover_merge", "merge_inner", "merge_control_file", "fork",
                        "jobs", "workers", "minimize_crash", "cleanse_crash"})
    for (const auto& a : args)
      if (a.rfind(std::string("-") + f + "=", 0) == 0 && a != std::string("-") + f + "=0")
        return true;
  return false;
}

// The run's output directory, its findings writer and the opening line (not in passive modes,
// where libFuzzer's merge or fork driver owns the process and records nothing).
[[maybe_unused]] void open_outputs(State& state, const FuzzOptions& opts) {
  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir + "/crashes", ec);
  if (ec) throw InputError("cannot create directory " + opts.out_dir + "/crashes: " + ec.message());
  const std::string prev = reports::move_previous_run(opts.out_dir);
  if (!prev.empty())
    std::cerr << "stabfuzz: " << opts.out_dir << " held an earlier run; moved its files to " << prev
              << "\n";
  state.findings_path = opts.out_dir + "/findings.jsonl";
  state.summary_path = opts.out_dir + "/summary.json";
  state.writer = std::make_unique<reports::FindingsWriter>(state.findings_path);
  std::cerr << "stabfuzz fuzz " << opts.family << (opts.impl.empty() ? "" : " --impl " + opts.impl)
            << ": seed " << opts.seed << ", feedback "
            << (opts.feedback == Feedback::error ? "error" : "coverage")
            << (opts.base == Base::uniform ? ", uniform values" : "");
  if (opts.time_s > 0) std::cerr << ", " << opts.time_s << " s";
  if (opts.runs > 0) std::cerr << ", " << opts.runs << " executions";
  std::cerr << ", " << state.exec->targets().size() << " implementations" << std::endl;
}

// argv for libFuzzer: the real binary first (merge and fork re-run it), our defaults, the
// user's flags (later ones win in libFuzzer), then the corpus directory.
std::vector<std::string> libfuzzer_args(const FuzzOptions& opts, bool passive) {
  std::vector<std::string> args;
  std::error_code ec;
  args.push_back(std::filesystem::read_symlink("/proc/self/exe", ec).string());
  if (ec) args.back() = "stabfuzz";
  if (!has_flag(opts.libfuzzer_args, "seed"))
    args.push_back("-seed=" + std::to_string(opts.seed % 4294967295ULL));
  // Inputs are a header and edits of a few values: let mutations reach a few dozen edits at once
  // instead of growing lengths slowly from zero (measured: ~50 instead of >3000 executions to
  // the softmax overflow from uniform values).
  if (!has_flag(opts.libfuzzer_args, "max_len"))
    args.push_back("-max_len=" + std::to_string(kDefaultMaxLen));
  if (!has_flag(opts.libfuzzer_args, "len_control")) args.push_back("-len_control=0");
  // Comparison tracing feeds operands into mutations; in numeric kernels many are heap pointers,
  // which ASLR changes per process, so a seed no longer replays its run (measured: kl_div's
  // mutant found at execution 40 or 161 from one seed; 21 every time without it).
  if (!has_flag(opts.libfuzzer_args, "use_cmp")) args.push_back("-use_cmp=0");
  // A target that crashes leaves libFuzzer's crash-<sha1> file with the run's crash files.
  if (!passive && !has_flag(opts.libfuzzer_args, "artifact_prefix"))
    args.push_back("-artifact_prefix=" + opts.out_dir + "/crashes/");
  if (opts.quiet && !passive) args.push_back("-verbosity=0");
  if (!passive) args.push_back("-print_final_stats=0");
  // Our handlers end an interrupted run with its summary (on_interrupt); libFuzzer's would _Exit.
  if (!passive && !has_flag(opts.libfuzzer_args, "handle_int")) args.push_back("-handle_int=0");
  if (!passive && !has_flag(opts.libfuzzer_args, "handle_term")) args.push_back("-handle_term=0");
  bool positional = false;
  for (const auto& a : opts.libfuzzer_args) {
    args.push_back(a);
    positional |= !a.empty() && a[0] != '-';
  }
  if (!opts.corpus_dir.empty() && !positional) args.push_back(opts.corpus_dir);
  return args;
}

#ifdef STABFUZZ_HAVE_LIBFUZZER
pid_t g_fuzzer_pid = 0;

// The parent passes a signal meant for the run (timeout's SIGTERM, a kill -INT of this process)
// on to libFuzzer's process, which ends the run as its own limits do.
void forward_signal(int sig) {
  if (g_fuzzer_pid > 0) ::kill(g_fuzzer_pid, sig);
}

// libFuzzer ends its process itself (exit() at its limits, _Exit on our own): it gets a process of
// its own, and this one waits and returns the run's exit code (128 + N for a signal N).
int wait_for_fuzzer(pid_t pid) {
  g_fuzzer_pid = pid;
  struct sigaction sa = {}, old_int = {}, old_term = {}, old_hup = {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  g_fuzzer_pid = 0;
  if (r < 0)
    throw std::runtime_error("fuzz: lost libFuzzer's process: " + std::string(strerror(errno)));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
#endif

int run(const Registry& registry, const FuzzOptions& opts, TablePrinter table) {
#ifndef STABFUZZ_HAVE_LIBFUZZER
  (void)registry, (void)opts, (void)table;
  throw InputError("this build has no libFuzzer: configure with clang (STABFUZZ_LIBFUZZER)");
#else
  static State state;
  g = &state;
  state.registry = &registry;
  state.opts = opts;
  state.table = table;
  state.exec.emplace(registry, opts.family, opts.impl, opts.dtypes, opts.feedback, opts.seed,
                     opts.cestac, opts.base);
  const bool passive = opts.child || passive_mode(opts.libfuzzer_args);
  state.opts.child = passive;
  if (!passive) open_outputs(state, opts);
  if (!opts.corpus_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.corpus_dir, ec);
    if (ec) throw InputError("cannot create directory " + opts.corpus_dir + ": " + ec.message());
  }
  static std::vector<std::string> args = libfuzzer_args(opts, passive);
  static std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  char** pargv = argv.data();
  for (const Target* t : state.exec->targets())  // library modules load before the clock starts
    if (t->prepare) t->prepare();
  // A libFuzzer worker (opts.child: libFuzzer's -fork/-merge re-ran this binary) already is a
  // process libFuzzer started and ends; any other run hands libFuzzer a process of its own.
  if (!opts.child) {
    std::cout << std::flush;
    std::cerr << std::flush;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fuzz: cannot fork: " + std::string(strerror(errno)));
    if (pid > 0) {
      state.writer.reset();  // the findings file belongs to the fuzzing process now
      return wait_for_fuzzer(pid);
    }
  }
  if (!passive) {
    struct sigaction sa = {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  }
  state.start = Clock::now();
  state.next_progress = state.start + std::chrono::seconds(opts.progress_tty ? 1 : 5);
  if (!passive)  // libFuzzer's own limits (-runs, -max_total_time) end with exit(0)
    std::atexit([] {
      const int code = finish();
      std::fflush(nullptr);
      std::_Exit(code);  // the run's exit code, as when our own limits end it
    });
  std::fflush(nullptr);
  LLVMFuzzerRunDriver(&argc, &pargv, callback);
  finish_and_exit();
#endif
}

}  // namespace stabfuzz::fuzz
