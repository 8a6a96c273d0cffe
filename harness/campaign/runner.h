// The run loop of `stabfuzz --target FAMILY`: generate, run native and CESTAC, ask the oracle,
// judge, shrink, write findings, summarize.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/verdict.h"
#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

// What identifies one generated input, enough to rebuild it and its CESTAC stream.
struct CaseKey {
  std::string family;
  std::string impl;
  DType dtype;
  uint64_t seed;
  int64_t index;
};

// Filled by the default run (harness/cli/run_command.cc), whose flags hold the defaults.
struct RunOptions {
  std::string family;
  std::string impl;           // empty: every implementation of the family
  std::vector<DType> dtypes;  // empty: every dtype the implementation supports
  int64_t runs = 0;           // inputs per implementation x dtype; <= 0: until the budget
  double budget_s = 0;        // seconds for the whole run; <= 0: no time limit
  uint64_t seed = 0;
  int64_t only_case = -1;    // >= 0: run just this input index (replay)
  int64_t max_findings = 0;  // findings recorded per implementation x dtype
  int64_t shrink_evals = 0;  // verdict evaluations one shrink may spend
  int64_t timeout_ms = 0;    // isolated targets: per input; <= 0: no limit
  cestac::Config cestac;     // cancellation threshold, detection on/off
  std::string out_dir;
  bool progress_tty = false;  // progress goes to a terminal: one refreshing status line
  bool write_reports = true;  // report.md, report.html, junit.xml at the end of the run
  bool move_previous = true;  // move an earlier run in out_dir to out_dir/previous-N first
  // The command line that replays one case (built by the CLI from its flag table).
  std::function<std::string(const CaseKey&)> replay_command;
};

struct ImplResult {
  std::string family;
  std::string impl;
  TargetKind kind = TargetKind::reference;
  DType dtype = DType::f64;
  int64_t inputs = 0;
  int64_t failing_inputs = 0;
  int64_t findings = 0;  // recorded in findings.jsonl
  int64_t undecidable = 0;
  int64_t oracle_detections = 0;
  int64_t cestac_detections = 0;
  int64_t crashes = 0;     // isolated targets: inputs that killed the child (a signal, an exit)
  int64_t timeouts = 0;    // ... that ran past --timeout-ms
  int64_t exceptions = 0;  // ... on which the target threw instead of answering
  double max_ulp = 0;
  double max_ratio = 0;
  double min_digits = 0;
  bool has_cestac = false;
  double seconds = 0;
  std::map<std::string, int64_t> regime_inputs;  // inputs generated per value regime
};

struct RunResult {
  std::vector<ImplResult> results;
  std::string findings_path;
  std::string summary_path;
  std::string previous_run;               // where an earlier run in out_dir was moved, or ""
  std::vector<std::string> report_paths;  // report.md, report.html, junit.xml
  // 1 when an implementation that claims stability (reference or library) has a finding.
  int exit_code = 0;
};

// FNV-1a of a name: the platform-independent hash that keys replayable streams (std::hash is not).
uint64_t hash_str(std::string_view s);

// Evaluates one input on one target: native run, oracle, CESTAC, verdict.
Verdict evaluate(const Family& family, const Target& target, const Input& in,
                 const CestacRequest& req);

// Rebuilds input `index` of a run: the same for every implementation of the family.
Input make_case(const Family& family, DType d, uint64_t seed, int64_t index);

// Greedy shrink of a failing input (the run loop's): the simplest input that is still a finding,
// and the number of shrink steps taken, within `budget` evaluations and, when `max_seconds` > 0,
// that much time (a time-budgeted run must not spend minutes shrinking one large input).
std::pair<Input, int64_t> shrink_failing(const Family& family, const Target& target,
                                         const Input& in, const CestacRequest& req, int64_t budget,
                                         double max_seconds = 0);

// One findings.jsonl line: the finding on `in` (after shrinking from original_n values), found by
// `engine` ("property", "fuzz"), with the command line that replays it. Shared by every engine.
json::Value finding_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Verdict& v,
                         size_t original_n, int64_t shrink_steps, const std::string& engine,
                         const std::string& replay);

// One row of summary.json's "results" (what reports::load_run reads back).
json::Value impl_result_json(const ImplResult& r);

// Runs one family, or every family when opts.family is "all". Throws InputError for an unknown
// family or implementation, or an unsupported dtype.
RunResult run_family(const Registry& registry, const RunOptions& opts, std::ostream& progress);

}  // namespace stabfuzz::campaign
