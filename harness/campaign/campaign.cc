// `stabfuzz campaign`: rounds of units (one implementation, one engine, one slice of the budget)
// run by worker processes; every finished unit is checkpointed so that --resume after a kill
// continues where the campaign stopped, and no finding is lost or written twice.
#include "harness/campaign/campaign.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "harness/campaign/campaign_state.h"
#include "harness/campaign/dir_lock.h"
#include "harness/campaign/merge.h"
#include "harness/campaign/status_line.h"
#include "harness/core/duration.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {
namespace {

// The last non-empty line of a text.
std::string last_line(const std::string& text) {
  std::string last;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) last = line;
  return last;
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_signal(int) { g_interrupted = 1; }

// While it lives, SIGINT and SIGTERM only set g_interrupted; the previous handlers come back after.
class StopSignals {
 public:
  StopSignals() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

struct Running {
  pid_t pid = 0;
  size_t round = 0, unit = 0;
  Clock::time_point start, guard;
  bool guard_killed = false;
};

class Campaign {
 public:
  Campaign(const Registry& reg, CampaignOptions o, std::ostream& out, std::ostream& progress)
      : reg_(reg), o_(std::move(o)), out_(out), progress_(progress) {}

  int run();

 private:
  void open_state();
  void rebuild_stats();
  bool plan_next_round();
  void merge_round_corpora();
  std::vector<std::string> unit_argv(const UnitRecord& u, double budget) const;
  void launch(size_t round, size_t unit);
  void finish_unit(const Running& r, int status);
  void add_failure_finding(const UnitRecord& u, const std::string& failure,
                           const std::string& detail);
  void save() {
    state_.elapsed_s = elapsed();
    save_state(state_, o_.out_dir);
  }
  double elapsed() const {
    return elapsed_before_ + std::chrono::duration<double>(Clock::now() - session_start_).count();
  }
  double time_left() const {
    return o_.time_s > 0 ? o_.time_s - elapsed() : std::numeric_limits<double>::infinity();
  }
  void print_progress(bool force);
  void print_banner();
  bool start_pending_units();  // true while units of the current round wait for a worker
  void reap_units();
  void run_rounds();
  void stop_units();       // kills and reaps the running units; they are pending again
  int stop_interrupted();  // stop_units(), saves, writes summary.json, says how to resume; 130
  int finish();

  const Registry& reg_;
  CampaignOptions o_;
  std::ostream& out_;
  std::ostream& progress_;
  StatusLine status_{progress_, o_.progress_tty};
  CampaignState state_;
  std::vector<WorkItem> items_;
  std::vector<ItemStats> stats_;
  std::map<std::string, size_t> item_of_;
  std::set<std::string> seen_;
  std::unique_ptr<reports::FindingsWriter> writer_;
  std::vector<Running> running_;
  Clock::time_point session_start_ = Clock::now(), next_progress_ = Clock::now();
  double elapsed_before_ = 0;
  int64_t findings_total_ = 0, findings_claiming_ = 0;  // claiming: reference and library
};

void Campaign::open_state() {
  const std::string state_path = o_.out_dir + "/campaign.json";
  std::error_code ec;
  const bool exists = fs::exists(state_path, ec);
  if (o_.resume) {
    if (!exists)
      throw InputError("--resume: " + o_.out_dir + " holds no campaign.json (nothing to resume)");
    state_ = load_state(o_.out_dir);
    const int jobs = o_.jobs;
    o_.time_s = state_.time_s;
    o_.runs = state_.runs;
    o_.seed = state_.seed;
    o_.targets = state_.targets;
    o_.shard = parse_shard(state_.shard);
    o_.baseline = state_.baseline;
    o_.unit_flags = state_.unit_flags;
    o_.jobs = jobs > 0 ? jobs : state_.jobs;
    state_.jobs = o_.jobs;
    if (state_.finished)
      progress_ << "stabfuzz campaign: " << o_.out_dir << " is finished; rewriting its reports\n";
  } else {
    if (exists)
      throw InputError(
          o_.out_dir +
          " already holds a campaign: continue it with --resume, or give another --out");
    state_.seed = o_.seed;
    state_.targets = o_.targets;
    state_.time_s = o_.time_s;
    state_.runs = o_.runs;
    state_.jobs = o_.jobs;
    state_.shard = std::to_string(o_.shard.index) + "/" + std::to_string(o_.shard.count);
    state_.baseline = o_.baseline;
    state_.unit_flags = o_.unit_flags;
  }
  std::vector<std::string> unavailable;
  items_ = take_shard(work_list(reg_, o_.targets, &unavailable), o_.shard);
  if (o_.resume) {
    // The same implementations in the same order, or the units' item numbers mean something else.
    std::vector<std::string> now;
    for (const auto& it : items_) now.push_back(it.impl);
    if (now != state_.impls)
      throw InputError("--resume: the registered implementations differ from when " + o_.out_dir +
                       " started (another build or other plugins); start a new campaign");
  } else {
    for (const auto& it : items_) state_.impls.push_back(it.impl);
    state_.unavailable = unavailable;
  }
  if (items_.empty())
    throw InputError("--targets " + o_.targets + " leaves nothing to run in shard " + state_.shard);
  for (size_t k = 0; k < items_.size(); ++k) item_of_[items_[k].impl] = k;
  fs::create_directories(o_.out_dir + "/units", ec);
  if (ec) throw InputError("cannot create directory " + o_.out_dir + "/units: " + ec.message());
  fs::create_directories(o_.out_dir + "/corpus", ec);
  elapsed_before_ = state_.elapsed_s;
  const std::string findings_path = o_.out_dir + "/findings.jsonl";
  cut_torn_tail(findings_path);
  std::vector<std::string> problems;
  for (const auto& f : read_findings(findings_path, &problems)) seen_.insert(finding_identity(f));
  for (const auto& p : problems) progress_ << "stabfuzz campaign: " << p << "\n";
  writer_ = std::make_unique<reports::FindingsWriter>(findings_path);
  // Units that were running when the campaign was killed start again from nothing.
  for (auto& r : state_.rounds)
    for (auto& u : r.units)
      if (u.status == "running") u.status = "pending";
  save();
}

void Campaign::rebuild_stats() {
  stats_.assign(items_.size(), ItemStats{});
  for (const auto& f : read_findings(o_.out_dir + "/findings.jsonl", nullptr)) {
    auto it = item_of_.find(f.at("impl").as_string());
    if (it == item_of_.end()) continue;
    ++stats_[it->second].findings;
    stats_[it->second].detected = true;
  }
  findings_total_ = 0, findings_claiming_ = 0;
  for (size_t k = 0; k < items_.size(); ++k) {
    findings_total_ += stats_[k].findings;
    if (items_[k].kind != TargetKind::injected) findings_claiming_ += stats_[k].findings;
    if (items_[k].kind == TargetKind::injected)
      stats_[k].findings = 0;  // only "detected" steers them
  }
  for (const auto& r : state_.rounds)
    for (const auto& u : r.units) {
      if (u.status == "pending" || u.status == "skipped") continue;
      ItemStats& s = stats_[u.item];
      ++s.units;
      if (u.engine == Engine::fuzz) {
        if (u.status == "error") s.fuzz_failed = true;
        if (u.executions > 0)
          s.corpus_growth = static_cast<double>(u.corpus_added) / static_cast<double>(u.executions);
      }
    }
  if (!o_.baseline.empty()) {
    const std::string text = reports::read_text(o_.baseline + "/summary.json");
    try {
      const json::Value b = json::parse(text);
      for (const auto& row : b.at("results").as_array()) {
        auto it = item_of_.find(row.at("impl").as_string());
        if (it != item_of_.end())
          stats_[it->second].baseline_findings += json::integer<int64_t>(row.at("findings"));
      }
    } catch (const std::exception& e) {
      throw InputError("--baseline " + o_.baseline + ": summary.json unreadable: " + e.what());
    }
  }
}

void Campaign::merge_round_corpora() {
  for (auto& r : state_.rounds)
    for (auto& u : r.units) {
      if (u.engine != Engine::fuzz || u.corpus_merged ||
          (u.status != "done" && u.status != "crashed" && u.status != "hung"))
        continue;
      merge_corpus_dir(o_.out_dir + "/" + u.dir + "/corpus",
                       o_.out_dir + "/corpus/" + slug(items_[u.item].impl), false);
      std::error_code ec;
      fs::remove_all(o_.out_dir + "/" + u.dir + "/corpus", ec);
      u.corpus_merged = true;
    }
}

bool Campaign::plan_next_round() {
  merge_round_corpora();
  const int number = static_cast<int>(state_.rounds.size()) + 1;
  std::vector<PlannedUnit> planned;
  if (o_.runs > 0) {
    if (number > 2) return false;  // --runs: one property round, one fuzz round
    for (size_t k = 0; k < items_.size(); ++k)
      if (!(round_engine(number) == Engine::fuzz && stats_[k].fuzz_failed))
        planned.push_back({k, 0});
  } else {
    PlanInput in;
    in.round = number;
    in.jobs = o_.jobs;
    in.worker_seconds_total = o_.time_s * o_.jobs;
    in.worker_seconds_left = std::max(0.0, time_left() - 0.5) * o_.jobs;
    // What units really cost beyond their slice on this machine today (load, shrinking, start-up).
    double over = 0;
    int n = 0;
    for (const auto& r : state_.rounds)
      for (const auto& u : r.units)
        if (u.status == "done") over += std::max(0.0, u.seconds - u.budget_s), ++n;
    in.overhead_s = n > 0 ? over / n : kUnitOverheadS;
    planned = plan_round(items_, stats_, in);
  }
  if (planned.empty()) return false;
  RoundRecord round;
  round.number = number;
  round.engine = round_engine(number);
  for (size_t i = 0; i < planned.size(); ++i) {
    UnitRecord u;
    u.item = planned[i].item;
    u.engine = round.engine;
    u.round = number;
    u.budget_s = planned[i].budget_s;
    u.seed = unit_seed(o_.seed, items_[u.item].impl, number);
    char name[64];
    std::snprintf(name, sizeof name, "units/r%02d-%04zu", number, i);
    u.dir = name;
    round.units.push_back(u);
  }
  state_.rounds.push_back(std::move(round));
  save();
  return true;
}

std::vector<std::string> Campaign::unit_argv(const UnitRecord& u, double budget) const {
  const WorkItem& it = items_[u.item];
  const std::string dir = o_.out_dir + "/" + u.dir;
  std::vector<std::string> a;
  if (u.engine == Engine::fuzz) a.push_back("fuzz");
  a.insert(a.end(), {"--target", it.family, "--impl", it.impl, "--seed", std::to_string(u.seed)});
  if (o_.runs > 0) {
    a.insert(a.end(), {"--runs", std::to_string(o_.runs)});
  } else {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", budget);
    a.insert(a.end(), {u.engine == Engine::fuzz ? "--time" : "--budget-s", b});
  }
  a.insert(a.end(), {"--out", dir, "--quiet", "--no-reports"});
  if (u.engine == Engine::fuzz) a.push_back("--keep-going");
  a.insert(a.end(), o_.unit_flags.begin(), o_.unit_flags.end());
  if (u.engine == Engine::fuzz) {
    // libFuzzer writes new inputs into the first directory and reads the others.
    a.insert(a.end(), {"--", dir + "/corpus", o_.out_dir + "/corpus/" + slug(it.impl)});
    std::error_code ec;
    const std::string base = o_.baseline + "/corpus/" + slug(it.impl);
    if (!o_.baseline.empty() && fs::is_directory(base, ec)) a.push_back(base);
  }
  return a;
}

void Campaign::launch(size_t round, size_t unit) {
  UnitRecord& u = state_.rounds[round].units[unit];
  double budget = u.budget_s;
  if (o_.runs <= 0) budget = std::min(budget, time_left() - 0.2);
  const std::string dir = o_.out_dir + "/" + u.dir;
  std::error_code ec;
  fs::remove_all(dir, ec);  // a unit cut short by a kill starts again from nothing
  fs::create_directories(dir + "/corpus", ec);
  if (ec) throw InputError("cannot create directory " + dir + ": " + ec.message());
  fs::create_directories(o_.out_dir + "/corpus/" + slug(items_[u.item].impl), ec);
  const std::vector<std::string> args = unit_argv(u, budget);
  u.command = "stabfuzz";
  for (const auto& a : args) u.command += " " + shell_word(a);
  u.status = "running";
  u.budget_s = budget;
  std::vector<std::string> full = {o_.binary};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : full) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string log = dir + "/log.txt";
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("campaign: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a campaign killed with -9 takes its units with it
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDONLY);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    if (null >= 0) ::dup2(null, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    // The campaign's own binary, even when a rebuild has replaced the file since it started.
    ::execv("/proc/self/exe", argv.data());
    const char msg[] = "stabfuzz campaign: cannot execute the unit\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  Running r;
  r.pid = pid;
  r.round = round;
  r.unit = unit;
  r.start = Clock::now();
  const double guard = o_.runs > 0 ? 600.0 : 3 * budget + 30;
  r.guard = r.start + std::chrono::milliseconds(static_cast<int64_t>(guard * 1000));
  running_.push_back(r);
  save();
}

void Campaign::add_failure_finding(const UnitRecord& u, const std::string& failure,
                                   const std::string& detail) {
  const WorkItem& it = items_[u.item];
  json::Value f;
  f.set("target", it.family);
  f.set("impl", it.impl);
  f.set("impl_kind", target_kind_name(it.kind));
  f.set("kind", failure == "timeout" ? "hang" : "crash");
  f.set("dtype",
        std::string(dtype_name(it.dtypes.front())));  // the unit ran every dtype; its first
  f.set("seed", u.seed);
  f.set("case", -1);
  f.set("engine", engine_name(u.engine));
  f.set("regime", "");
  f.set("detectors", "campaign");
  f.set("severity", "critical");
  f.set("failure", failure);
  f.set("failure_detail", detail + " (the unit tested every dtype of the implementation; log: " +
                              o_.out_dir + "/" + u.dir + "/log.txt)");
  f.set("replay", u.command);
  if (!seen_.insert(finding_identity(f)).second) return;
  writer_->append(f);
  ++findings_total_;
  if (it.kind != TargetKind::injected) ++findings_claiming_;
}

void Campaign::finish_unit(const Running& r, int status) {
  UnitRecord& u = state_.rounds[r.round].units[r.unit];
  u.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  const std::string dir = o_.out_dir + "/" + u.dir;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    // The unit could not write its outputs (a full disk): the campaign stops with that line and
    // the unit, still running in the checkpoint, runs again on --resume.
    const std::string last = last_line(reports::read_text(dir + "/log.txt"));
    const std::string prefix = "stabfuzz: error: ";
    if (last.rfind(prefix + "cannot write ", 0) == 0) throw InputError(last.substr(prefix.size()));
  }
  // Whatever the unit found before it ended is kept, even when it crashed.
  int64_t found = 0, added = 0;
  for (const auto& f : read_findings(dir + "/findings.jsonl", nullptr)) {
    ++found;
    if (!seen_.insert(finding_identity(f)).second) continue;
    writer_->append(f);
    ++added;
    ++findings_total_;
    if (impl_kind_of(f) != "injected") ++findings_claiming_;
    stats_[u.item].detected = true;
    if (items_[u.item].kind != TargetKind::injected) ++stats_[u.item].findings;
  }
  u.findings = found;
  u.new_findings = added;
  if (r.guard_killed) {
    u.status = "hung";
    add_failure_finding(u, "timeout",
                        "the unit ran past its guard of " + format_duration(u.seconds));
  } else if (WIFSIGNALED(status)) {
    u.status = "crashed";
    add_failure_finding(u, "crash", std::string("signal ") + ::strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1)) {
    u.status = "done";
  } else {
    u.status = "error";
    u.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string last = last_line(reports::read_text(dir + "/log.txt"));
    u.problem = last;
    status_.clear();
    progress_ << "stabfuzz campaign: unit " << u.dir << " (" << items_[u.item].impl << ", "
              << engine_name(u.engine) << ") ended with exit status " << u.exit_code << ": " << last
              << "\n";
    if (u.engine == Engine::fuzz) stats_[u.item].fuzz_failed = true;
  }
  if (u.engine == Engine::fuzz) {
    const std::string s = reports::read_text(dir + "/summary.json");
    try {
      if (!s.empty()) u.executions = json::integer<int64_t>(json::parse(s).at("executions"));
    } catch (const std::exception&) {
    }
    std::error_code ec;
    u.corpus_added = 0;
    for (const auto& e : fs::directory_iterator(dir + "/corpus", ec))
      if (e.is_regular_file(ec)) ++u.corpus_added;
    if (u.executions > 0)
      stats_[u.item].corpus_growth =
          static_cast<double>(u.corpus_added) / static_cast<double>(u.executions);
  }
  ++stats_[u.item].units;
  save();
}

void Campaign::print_progress(bool force) {
  const auto now = Clock::now();
  if (!force && now < next_progress_) return;
  next_progress_ =
      now + std::chrono::milliseconds(
                o_.progress_tty ? 500 : static_cast<int64_t>(o_.progress_every_s * 1000));
  size_t done = 0, total = 0;
  for (const auto& r : state_.rounds)
    for (const auto& u : r.units) {
      ++total;
      done += u.status != "pending" && u.status != "running";
    }
  const std::string round = "round " + std::to_string(state_.rounds.size()),
                    engine = state_.rounds.empty() ? "" : engine_name(state_.rounds.back().engine),
                    units = std::to_string(done) + "/" + std::to_string(total),
                    left = format_duration(std::max(0.0, time_left()));
  std::ostringstream full, compact;
  full << "campaign " << round << (engine.empty() ? "" : " (" + engine + ")") << ": units " << units
       << ", findings " << findings_total_ << " (" << findings_claiming_
       << " in refs/libs), elapsed " << format_duration(elapsed());
  if (o_.time_s > 0) full << ", left " << left;
  compact << round << " " << engine << ": " << units << " units, " << findings_total_
          << " findings, "
          << (o_.time_s > 0 ? left + " left" : format_duration(elapsed()) + " elapsed");
  status_.show(full.str(), compact.str());
}

void Campaign::print_banner() {
  progress_ << "stabfuzz campaign: " << items_.size() << " implementations (shard " << state_.shard
            << "), seed " << o_.seed << ", " << o_.jobs << " workers, ";
  if (o_.runs > 0)
    progress_ << o_.runs << " inputs per unit";
  else
    progress_ << format_duration(o_.time_s)
              << (o_.resume ? " (" + format_duration(time_left()) + " left)" : "");
  progress_ << ", out " << o_.out_dir << std::endl;
  if (!state_.unavailable.empty())
    progress_ << "stabfuzz campaign: " << state_.unavailable.size()
              << " implementations unavailable here (listed in summary.json)\n";
}

bool Campaign::start_pending_units() {
  bool pending = false;
  if (state_.rounds.empty()) return false;
  const size_t ri = state_.rounds.size() - 1;
  auto& units = state_.rounds[ri].units;
  for (size_t ui = 0; ui < units.size() && static_cast<int>(running_.size()) < o_.jobs; ++ui) {
    if (units[ui].status != "pending") continue;
    if (o_.runs <= 0 && time_left() - 0.2 < kMinSliceS) {
      units[ui].status = "skipped";  // the budget is spent
      continue;
    }
    launch(ri, ui);
  }
  for (const auto& u : units) pending |= u.status == "pending";
  return pending;
}

void Campaign::reap_units() {
  for (size_t i = 0; i < running_.size();) {
    int status = 0;
    const pid_t p = ::waitpid(running_[i].pid, &status, WNOHANG);
    if (p == running_[i].pid) {
      const Running r = running_[i];
      running_.erase(running_.begin() + static_cast<long>(i));
      finish_unit(r, status);
      continue;
    }
    if (!running_[i].guard_killed && Clock::now() > running_[i].guard) {
      ::kill(running_[i].pid, SIGKILL);
      running_[i].guard_killed = true;
    }
    ++i;
  }
}

void Campaign::stop_units() {
  for (auto& r : running_) ::kill(r.pid, SIGKILL);
  for (auto& r : running_) {
    int st = 0;
    while (::waitpid(r.pid, &st, 0) < 0 && errno == EINTR) {
    }
    state_.rounds[r.round].units[r.unit].status = "pending";
  }
  running_.clear();
}

int Campaign::stop_interrupted() {
  stop_units();
  save();
  writer_.reset();  // flushed and closed: findings.jsonl ends with a whole line
  // A summary of what is done so far: the units not run show as not covered until --resume.
  write_campaign_summary(state_, items_, o_.out_dir, o_.fail_on);
  status_.keep();
  progress_ << "stabfuzz campaign: interrupted; " << findings_total_ << " findings kept in "
            << o_.out_dir << "/findings.jsonl; continue with: stabfuzz campaign --resume --out "
            << shell_word(o_.out_dir) << std::endl;
  return 130;
}

// The rounds, until the campaign is finished, out of budget or interrupted.
void Campaign::run_rounds() {
  bool more_rounds = !state_.finished;
  while (!state_.finished) {
    if (g_interrupted) break;
    const bool pending = start_pending_units();  // while workers are free
    if (running_.empty() && !pending) {
      if (more_rounds && (o_.runs > 0 || time_left() > kMinSliceS + 0.5))
        more_rounds = plan_next_round();
      else
        more_rounds = false;
      if (!more_rounds) break;
      continue;
    }
    reap_units();  // finished units; kill those past their guard
    print_progress(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int Campaign::run() {
  std::error_code ec;
  if (o_.resume && !fs::exists(o_.out_dir + "/campaign.json", ec))
    throw InputError("--resume: " + o_.out_dir + " holds no campaign.json (" +
                     (ec ? ec.message() : "nothing to resume") + ")");
  const DirLock lock(o_.out_dir);  // before the state is read: no other campaign writes here now
  open_state();
  rebuild_stats();
  print_banner();
  {
    const StopSignals signals;
    try {
      run_rounds();
    } catch (const InputError&) {
      // A write that failed (a full disk): no unit goes on writing. The checkpoint on disk is the
      // last one saved, where the units not merged are pending or running: --resume runs them
      // again once there is room, and findings already in findings.jsonl are not written twice.
      stop_units();
      throw;
    }
    if (g_interrupted) return stop_interrupted();
  }
  merge_round_corpora();
  for (auto& r : state_.rounds)
    for (auto& u : r.units)
      if (u.status == "pending") u.status = "skipped";
  state_.finished = true;
  save();
  print_progress(true);
  status_.keep();  // the last progress line stays; the summary starts on a line of its own
  return finish();
}

int Campaign::finish() {
  writer_.reset();
  const CampaignSummary s = write_campaign_summary(state_, items_, o_.out_dir, o_.fail_on);
  std::vector<std::string> reports;
  if (o_.write_reports) reports = reports::write_reports(o_.out_dir, progress_);
  print_campaign_summary(s, state_, items_, o_.out_dir, out_);
  int code = s.exit_code;
  if (!o_.baseline.empty()) {
    out_ << "\ndiff against " << o_.baseline << ":\n";
    code = diff_against_baseline(o_.baseline, o_.out_dir, out_);
  }
  print_campaign_files(o_.out_dir, reports, !o_.baseline.empty(), out_);
  return code;
}

}  // namespace

int run_campaign(const Registry& reg, CampaignOptions o, std::ostream& out,
                 std::ostream& progress) {
  Campaign c(reg, std::move(o), out, progress);
  return c.run();
}

}  // namespace stabfuzz::campaign
