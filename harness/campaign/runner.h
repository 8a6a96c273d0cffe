// The run loop of `stabfuzz --target SELECTOR`: generate, run native and CESTAC, ask the oracle,
// judge, shrink, write findings, summarize.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/pipeline/case.h"
#include "harness/pipeline/record.h"
#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

using pipeline::CaseKey;
using pipeline::ImplResult;

// Filled by the default run (harness/cli/run_command.cc), whose flags hold the defaults.
struct RunOptions {
  std::string family;         // --target: selectors, e.g. softmax or onednn (core/select.h)
  std::string impl;           // empty: every selected implementation
  std::vector<DType> dtypes;  // empty: every dtype the implementation supports
  int64_t runs = 0;           // inputs per implementation x dtype; <= 0: until the budget
  double budget_s = 0;        // seconds for the whole run; <= 0: no time limit
  uint64_t seed = 0;
  int64_t only_case = -1;                 // >= 0: run just this input index (replay)
  int64_t max_findings = 0;               // findings recorded per implementation x dtype
  int64_t shrink_evals = 0;               // verdict evaluations one shrink may spend
  int64_t timeout_ms = 0;                 // isolated targets: per input; <= 0: no limit
  cestac::Config cestac;                  // cancellation threshold, detection on/off
  KindSet fail_on = KindSet::defaults();  // finding kinds that make the exit code 1
  std::string out_dir;
  bool progress_tty = false;  // progress goes to a terminal: one refreshing status line
  bool write_reports = true;  // report.md, report.html, junit.xml at the end of the run
  bool move_previous = true;  // move an earlier run in out_dir to out_dir/previous-N first
  // The command line that replays one case (built by the CLI from its flag table).
  std::function<std::string(const CaseKey&)> replay_command;
  // Library targets: digits from the four rounding modes and nondeterminism per input.
  bool blackbox = true;
};

struct RunResult {
  std::vector<ImplResult> results;
  std::string findings_path;
  std::string summary_path;
  std::string previous_run;               // where an earlier run in out_dir was moved, or ""
  std::vector<std::string> report_paths;  // report.md, report.html, junit.xml
  KindSet fail_on = KindSet::defaults();  // the kinds that failed the run
  // 1 when an implementation that claims stability (reference or library) has a failing input of
  // a kind in RunOptions::fail_on.
  int exit_code = 0;
};

// FNV-1a of a name: the platform-independent hash that keys replayable streams (std::hash is not).
RunResult run_family(const Registry& registry, const RunOptions& opts, std::ostream& progress);

}  // namespace stabfuzz::campaign
