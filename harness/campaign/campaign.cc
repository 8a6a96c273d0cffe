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

#include "harness/campaign/campaign_run.h"
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

namespace fs = std::filesystem;

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

}  // namespace

namespace detail {

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

}  // namespace detail

int run_campaign(const Registry& reg, CampaignOptions o, std::ostream& out,
                 std::ostream& progress) {
  detail::Campaign c(reg, std::move(o), out, progress);
  return c.run();
}

}  // namespace stabfuzz::campaign
