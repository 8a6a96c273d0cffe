// stabfuzz: command-line entry point. The only place that decides the process's exit code.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "harness/bench/bench.h"
#include "harness/bench/calibrate.h"
#include "harness/campaign/campaign_cli.h"
#include "harness/campaign/inject.h"
#include "harness/campaign/runner.h"
#include "harness/cli/options.h"
#include "harness/core/duration.h"
#include "harness/core/memory.h"
#include "harness/corpus/replay.h"
#include "harness/fuzz/fuzz_cli.h"
#include "harness/monitor/command.h"
#include "harness/plugin/loader.h"
#include "reports/diff.h"
#include "reports/findings.h"
#include "reports/json.h"
#include "reports/report.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"
#include "stabfuzz/version.h"

namespace stabfuzz::cli {
namespace {

json::Value list_json() {
  json::Value out;
  json::Array fams;
  for (const auto& f : default_registry().families()) {
    json::Value jf;
    jf.set("name", f.name);
    jf.set("summary", f.summary);
    json::Array regimes;
    for (const auto& r : f.regimes) {
      json::Value jr;
      jr.set("name", r.name);
      jr.set("description", r.description);
      regimes.push_back(std::move(jr));
    }
    jf.set("regimes", std::move(regimes));
    json::Array targets;
    for (const auto& t : f.targets) {
      json::Value jt;
      jt.set("id", t.id);
      jt.set("kind", target_kind_name(t.kind));
      json::Array dts;
      for (DType d : t.dtypes) dts.emplace_back(dtype_name(d));
      jt.set("dtypes", std::move(dts));
      jt.set("cestac", static_cast<bool>(t.cestac));
      if (t.isolated) jt.set("isolated", true);  // runs in a child process (plugins)
      jt.set("description", t.description);
      if (t.injection) {
        jt.set("plants", t.injection->plants);
        jt.set("fails_where", t.injection->fails_where);
        jt.set("fix", t.injection->fix);
      }
      targets.push_back(std::move(jt));
    }
    jf.set("targets", std::move(targets));
    fams.push_back(std::move(jf));
  }
  out.set("families", std::move(fams));
  json::Array unavailable;
  for (const auto& u : default_registry().unavailable()) {
    json::Value ju;
    ju.set("id", u.id);
    ju.set("reason", u.reason);
    unavailable.push_back(std::move(ju));
  }
  out.set("unavailable", std::move(unavailable));
  out.set("build", build_configuration());
  return out;
}

// Writes `v` to PATH, or to standard output for "-".
void emit_json(const std::string& path, const json::Value& v) {
  if (path == "-") {
    std::cout << json::dump(v, 2) << "\n";
  } else {
    reports::write_json_atomically(path, v);
  }
}

int list_targets(std::ostream& os) {
  const Registry& reg = default_registry();
  size_t w = 36;  // library ids run longer (attention/torch/scaled_dot_product_attention)
  for (const auto& f : reg.families())
    for (const auto& t : f.targets) w = std::max(w, t.id.size() + 2);
  for (const auto& u : reg.unavailable()) w = std::max(w, u.id.size() + 2);
  for (const auto& f : reg.families()) {
    os << f.name << " — " << f.summary << "\n";
    os << "  regimes: ";
    for (size_t i = 0; i < f.regimes.size(); ++i) os << (i ? ", " : "") << f.regimes[i].name;
    os << "\n";
    for (const auto& t : f.targets) {
      os << "  " << std::left << std::setw(static_cast<int>(w)) << t.id << std::setw(10)
         << target_kind_name(t.kind);
      std::string dts;
      for (DType d : t.dtypes) dts += (dts.empty() ? "" : ",") + std::string(dtype_name(d));
      os << std::setw(17) << dts << (t.cestac ? "cestac+oracle" : "oracle") << "  " << t.description
         << "\n";
    }
  }
  if (!reg.unavailable().empty()) {
    os << "unavailable here:\n";
    for (const auto& u : reg.unavailable())
      os << "  " << std::left << std::setw(static_cast<int>(w)) << u.id << u.reason << "\n";
  }
  os << "build: " << build_configuration() << "\n";
  return 0;
}

std::string default_out_dir(const std::string& family, uint64_t seed) {
  return "runs/" + family + "-" + local_timestamp() + "-s" + std::to_string(seed) + "-p" +
         std::to_string(::getpid());
}

std::string fmt(double v, int prec) {
  if (std::isinf(v)) return "inf";
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// 1.08e+17: large ULP errors keep the table's column width.
std::string sci(double v) {
  std::ostringstream os;
  os << std::scientific << std::setprecision(2) << v;
  return os.str();
}

void print_table(const campaign::RunResult& res, std::ostream& os) {
  size_t w = 36;  // library ids run longer (attention/torch/scaled_dot_product_attention)
  for (const auto& r : res.results) w = std::max(w, r.impl.size() + 2);
  os << std::left << std::setw(static_cast<int>(w)) << "implementation" << std::setw(10) << "kind"
     << std::setw(6) << "dtype" << std::right << std::setw(7) << "inputs" << std::setw(9)
     << "failing" << std::setw(10) << "findings" << std::setw(11) << "max_ulp" << std::setw(10)
     << "err/tol" << std::setw(11) << "min_digits"
     << "  verdict\n";
  for (const auto& r : res.results) {
    std::string verdict;
    if (r.kind == TargetKind::injected)
      verdict = r.failing_inputs ? "detected (planted)" : "NOT DETECTED (planted)";
    else
      verdict = r.failing_inputs ? "UNSTABLE" : "ok";
    if (r.crashes + r.timeouts + r.exceptions > 0)  // isolated targets: how they failed
      verdict += " (" + std::to_string(r.crashes) + " crashed, " + std::to_string(r.timeouts) +
                 " timed out, " + std::to_string(r.exceptions) + " threw)";
    os << std::left << std::setw(static_cast<int>(w)) << r.impl << std::setw(10)
       << target_kind_name(r.kind) << std::setw(6) << dtype_name(r.dtype) << std::right
       << std::setw(7) << r.inputs << std::setw(9) << r.failing_inputs << std::setw(10)
       << r.findings << std::setw(11)
       << (r.max_ulp >= 1e9 && std::isfinite(r.max_ulp) ? sci(r.max_ulp) : fmt(r.max_ulp, 0))
       << std::setw(10)  // the worst ULP error over its tolerance at the input's conditioning
       << (r.max_ratio >= 1e5 && std::isfinite(r.max_ratio) ? sci(r.max_ratio)
                                                            : fmt(r.max_ratio, 2))
       << std::setw(11) << (r.has_cestac ? fmt(r.min_digits, 1) : "-") << "  " << verdict << "\n";
    if (r.undecidable)
      os << "    " << r.undecidable << " inputs undecidable by the oracle (no oracle verdict)\n";
  }
}

int run_bench(const Options& o) {
  if (o.command.size() > 1) throw InputError("bench takes no arguments besides flags");
  bench::Options bo;
  if (o.budget_s > 0) bo.seconds_per_measurement = o.budget_s / 24;  // 12 kernels x native, cestac
  static std::ostringstream sink;
  std::ostream& progress = o.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  progress << "stabfuzz bench: ns per element, native vs Stoch<T,3> (detection on), same template"
           << std::endl;
  const auto ms = bench::run(bo, progress);
  std::cout << std::left << std::setw(20) << "op" << std::setw(6) << "dtype" << std::right
            << std::setw(12) << "native_ns" << std::setw(12) << "cestac_ns" << std::setw(9)
            << "ratio"
            << "\n";
  for (const auto& m : ms)
    std::cout << std::left << std::setw(20) << m.op << std::setw(6) << m.dtype << std::right
              << std::setw(12) << fmt(m.native_ns, 3) << std::setw(12) << fmt(m.cestac_ns, 3)
              << std::setw(9) << fmt(m.ratio, 2) << "\n";
  std::cout << "geomean ratio: f64 " << fmt(bench::geomean_ratio(ms, "f64"), 2) << ", f32 "
            << fmt(bench::geomean_ratio(ms, "f32"), 2) << "\n";
  // The oracle next to the native stable target, per family (f64, regime inputs of <= 4096 values).
  const auto oc = bench::oracle_costs(o.budget_s > 0 && o.budget_s < 5 ? 2 : 12, 4096, progress);
  std::cout << "\n"
            << std::left << std::setw(20) << "oracle (f64)" << std::right << std::setw(12)
            << "native_ns" << std::setw(12) << "oracle_ns" << std::setw(9) << "ratio"
            << "\n";
  for (const auto& c : oc)
    std::cout << std::left << std::setw(20) << c.family << std::right << std::setw(12)
              << fmt(c.native_ns, 3) << std::setw(12) << fmt(c.oracle_ns, 1) << std::setw(9)
              << fmt(c.ratio, 0) << "\n";
  // What one fuzz execution costs (CESTAC and oracle on), rows of at most 64 values.
  const auto ft = bench::fuzz_throughput(o.budget_s > 0 && o.budget_s < 5 ? 0.1 : 1.0, progress);
  std::cout << "\n"
            << std::left << std::setw(24) << "fuzz (rows <= 64)" << std::setw(6) << "dtype"
            << std::right << std::setw(12) << "exec/s" << std::setw(9) << "values"
            << "\n";
  for (const auto& f : ft)
    std::cout << std::left << std::setw(24) << f.impl << std::setw(6) << f.dtype << std::right
              << std::setw(12) << fmt(f.execs_per_s, 0) << std::setw(9) << fmt(f.mean_values, 1)
              << "\n";
  if (!o.json.empty()) emit_json(o.json, bench::to_json(ms, oc, ft));
  return 0;
}

int run_calibrate(const Options& o) {
  if (o.command.size() > 1) throw InputError("calibrate takes no arguments besides flags");
  static std::ostringstream sink;
  std::ostream& progress = o.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  const uint64_t seed = o.seed_given && o.seed != 0 ? o.seed : 1;
  progress << "stabfuzz calibrate: CESTAC digits vs the oracle's true digits, seed " << seed
           << std::endl;
  const auto s = calibrate::run(static_cast<int>(o.runs), seed, progress);
  std::cout << "cases: " << s.cases.size()
            << "\nagree within 1 digit: " << fmt(100 * s.agree_within_1, 1)
            << " %\noverclaim by more than 1 digit: " << fmt(100 * s.overclaim, 1) << " %\n";
  if (!o.json.empty()) emit_json(o.json, calibrate::to_json(s));
  return 0;
}

// `report DIR` re-renders a run; `report --diff OLD NEW` compares two (exit 1: regression).
int run_report(const Options& o) {
  if (o.diff) {
    if (o.command.size() != 3) throw InputError("report --diff takes two run directories: OLD NEW");
    const reports::RunData before = reports::load_run(o.command[1]);
    const reports::RunData after = reports::load_run(o.command[2]);
    const reports::RunDiff d = reports::diff_runs(before, after);
    std::cout << reports::render_diff(d, before, after);
    if (!o.json.empty()) emit_json(o.json, reports::diff_json(d, before, after));
    return d.exit_code();
  }
  if (o.command.size() != 2) throw InputError("report takes one run directory (or --diff OLD NEW)");
  for (const auto& p : reports::write_reports(o.command[1], std::cerr)) std::cout << p << "\n";
  return 0;
}

uint64_t run_seed(const Options& o) {
  return o.seed_given && o.seed != 0
             ? o.seed
             : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() %
                                     1000000007ULL) +
                   1;
}

// stabfuzz inject: recall of the detectors over the planted bugs, false positives of the
// reference targets; a table on stdout, JSON to <out>/inject.json and --json.
int run_inject(const Options& o) {
  if (o.command.size() > 1) throw InputError("inject takes no arguments besides flags");
  campaign::InjectOptions io;
  io.family = o.family;
  io.budget_s = o.budget_s;
  io.seed = run_seed(o);
  const auto g = campaign::parse_generator(o.generator);
  if (!g) throw InputError("unknown --generator '" + o.generator + "' (regimes or uniform)");
  io.generator = *g;
  io.shrink_evals = o.shrink_evals;
  if (o.cancel_digits < 1 || o.cancel_digits > 15)
    throw InputError("--cancel-digits must be in 1..15");
  io.cestac.cancel_digits = o.cancel_digits;
  io.save_corpus = o.save_corpus;
  static std::ostringstream sink;
  std::ostream& progress = o.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  const campaign::InjectResult r = campaign::run_inject(default_registry(), io, progress);
  std::ostream& table = o.json == "-" ? std::cerr : std::cout;  // keep stdout pure JSON
  campaign::print_inject_table(r, table);
  const json::Value j = campaign::inject_json(r);
  const std::string out =
      o.out.empty() ? default_out_dir("inject-" + o.family + "-" + o.generator, io.seed) : o.out;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("cannot create directory " + out + ": " + ec.message());
  reports::write_json_atomically(out + "/inject.json", j);
  table << "json: " << out << "/inject.json\n";
  if (!o.json.empty()) emit_json(o.json, j);
  int undetected = 0;
  for (const auto& m : r.mutants) undetected += !m.detected;
  return undetected > 0 || r.false_positive_targets > 0 ? 1 : 0;
}

// stabfuzz replay PATH...: the regression suite over corpus files.
int run_replay(const Options& o) {
  if (o.command.size() < 2) throw InputError("replay needs at least one file or directory");
  const std::vector<std::string> paths(o.command.begin() + 1, o.command.end());
  return corpus::replay(default_registry(), paths, std::cout, o.junit, o.timeout_ms);
}

// --plugin LIB.so...: their targets join the registry before anything reads it.
void load_plugins(const Options& o) {
  for (const auto& p : o.plugin) plugin::load(mutable_default_registry(), p);
}

// The plugins as a replay line names them: absolute paths, so the line works from any directory.
std::vector<std::pair<std::string, std::string>> plugin_flags(const Options& o) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& p : o.plugin) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(p, ec);
    flags.emplace_back("plugin", ec ? p : abs.lexically_normal().string());
  }
  if (o.timeout_ms != Options{}.timeout_ms)
    flags.emplace_back("timeout-ms", std::to_string(o.timeout_ms));
  return flags;
}

int run(const Options& o) {
  if (o.help) {
    std::cout << help_text();
    return 0;
  }
  if (o.version) {
    std::cout << "stabfuzz " << kVersion << " (" << build_configuration() << ")\n";
    return 0;
  }
  load_plugins(o);
  if (!o.command.empty() && o.command[0] == "bench") return run_bench(o);
  if (!o.command.empty() && o.command[0] == "calibrate") return run_calibrate(o);
  if (!o.command.empty() && o.command[0] == "report") return run_report(o);
  if (!o.command.empty() && o.command[0] == "inject") return run_inject(o);
  if (!o.command.empty() && o.command[0] == "replay") return run_replay(o);
  if (!o.command.empty() && o.command[0] == "monitor") return monitor::run_monitor(o);
  if (!o.command.empty() && o.command[0] == "campaign") return campaign::campaign_command(o);
  if (!o.command.empty() && o.command[0] == "merge") return campaign::merge_command(o);
  if (!o.command.empty()) throw InputError("unknown command '" + o.command[0] + "' (see --help)");
  if (o.list) {
    if (!o.json.empty()) {
      emit_json(o.json, list_json());
      return 0;
    }
    return list_targets(std::cout);
  }
  if (o.target.empty()) throw InputError("no --target given (stabfuzz --list shows the families)");

  campaign::RunOptions ro;
  ro.family = o.target;
  ro.impl = o.impl;
  if (o.dtype != "all") {
    auto d = parse_dtype(o.dtype);
    if (!d) throw InputError("unknown --dtype '" + o.dtype + "' (f64, f32, f16, bf16 or all)");
    ro.dtypes = {*d};
  }
  if (o.runs_given && o.runs <= 0) throw InputError("--runs must be positive");
  if (o.budget_s < 0) throw InputError("--budget-s must not be negative");
  if (o.max_findings < 0) throw InputError("--max-findings must not be negative");
  ro.runs = (o.budget_s > 0 && !o.runs_given) ? 0 : o.runs;
  ro.budget_s = o.budget_s;
  ro.seed = o.seed_given && o.seed != 0
                ? o.seed
                : static_cast<uint64_t>(
                      std::chrono::system_clock::now().time_since_epoch().count() % 1000000007ULL) +
                      1;
  ro.only_case = o.case_index;
  ro.max_findings = o.max_findings;
  ro.shrink_evals = o.shrink_evals;
  if (o.cancel_digits < 1 || o.cancel_digits > 15)
    throw InputError("--cancel-digits must be in 1..15");
  ro.cestac.cancel_digits = o.cancel_digits;
  ro.out_dir = o.out.empty() ? default_out_dir(o.target, ro.seed) : o.out;
  const int cancel = o.cancel_digits;
  ro.timeout_ms = o.timeout_ms;
  ro.write_reports = !o.no_reports;
  ro.replay_command = [cancel, extra = plugin_flags(o)](const campaign::CaseKey& k) {
    std::vector<std::pair<std::string, std::string>> flags = extra;
    flags.insert(flags.end(), {{"target", k.family},
                               {"impl", k.impl},
                               {"dtype", std::string(dtype_name(k.dtype))},
                               {"seed", std::to_string(k.seed)},
                               {"case", std::to_string(k.index)}});
    if (cancel != cestac::kDefaultCancelDigits)
      flags.emplace_back("cancel-digits", std::to_string(cancel));
    return command_line(flags);
  };

  static std::ostringstream sink;
  std::ostream& progress = o.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  ro.progress_tty = !o.quiet && ::isatty(STDERR_FILENO);
  const campaign::RunResult res = campaign::run_family(default_registry(), ro, progress);
  print_table(res, std::cout);
  std::cout << "findings: " << res.findings_path << "\nsummary:  " << res.summary_path << "\n";
  for (const auto& p : res.report_paths) std::cout << "report:   " << p << "\n";
  if (!o.json.empty()) emit_json(o.json, json::parse(reports::read_text(res.summary_path)));
  return res.exit_code;
}

}  // namespace
}  // namespace stabfuzz::cli

int main(int argc, char** argv) {
  stabfuzz::keep_freed_memory();
  try {
    if (auto code = stabfuzz::fuzz::libfuzzer_child(argc, argv, stabfuzz::cli::print_table))
      return *code;
    const stabfuzz::cli::Options o = stabfuzz::cli::parse(argc, argv);
    if (!o.command.empty() && o.command[0] == "fuzz")
      return stabfuzz::fuzz::command(o, argc, argv, stabfuzz::cli::print_table);
    if (!o.command.empty() && o.command[0] == "fuzz-compare")
      return stabfuzz::fuzz::compare_command(o);
    return stabfuzz::cli::run(o);
  } catch (const stabfuzz::InputError& e) {
    std::cerr << "stabfuzz: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "stabfuzz: internal error: " << e.what() << "\n";
    return 3;
  }
}
