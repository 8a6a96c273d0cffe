// The units of a campaign: each one a worker process (`stabfuzz` on one implementation, one engine,
// one slice of the budget) started, watched, reaped, stopped; its result folded into the campaign
// state, and a unit that fails becomes a finding of its own (harness/campaign/campaign_run.h).
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/campaign/campaign_run.h"
#include "harness/campaign/merge.h"
#include "harness/core/duration.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign::detail {
namespace {

namespace fs = std::filesystem;

// The last non-empty line of a text.
std::string last_line(const std::string& text) {
  std::string last;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

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

}  // namespace stabfuzz::campaign::detail
