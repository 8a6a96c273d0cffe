// The Campaign behind `stabfuzz campaign` (harness/campaign/campaign.h), shared by its two
// files: campaign.cc (the state, the rounds, progress, the run and its end) and campaign_units.cc
// (the units: worker processes, their command lines, their results and failures). Internal to
// harness/campaign.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/status_line.h"
#include "reports/findings.h"

namespace stabfuzz::campaign::detail {

using Clock = std::chrono::steady_clock;

// A unit's worker process.
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

}  // namespace stabfuzz::campaign::detail
