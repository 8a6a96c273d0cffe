// report --diff OLD NEW: new, fixed and changed findings between two runs (regression tracking).
#pragma once

#include <string>
#include <vector>

#include "reports/json.h"
#include "reports/run_data.h"

namespace stabfuzz::reports {

// Findings are matched by implementation, dtype and case when both runs share a seed (the same
// inputs), else by implementation, dtype and regime (the worst finding of each).
struct DiffEntry {
  std::string key;
  const Finding* before = nullptr;  // in OLD
  const Finding* after = nullptr;   // in NEW
  int badness = 0;                  // changed entries: 1 NEW's is worse, -1 better, 0 neither
};

struct RunDiff {
  bool same_seed = false;
  std::vector<DiffEntry> added;        // only in NEW
  std::vector<DiffEntry> fixed;        // only in OLD, and NEW recorded every failing input
  std::vector<DiffEntry> unconfirmed;  // only in OLD, but NEW left failing inputs unrecorded
  std::vector<DiffEntry> changed;      // in both, with another severity, detectors or ULP error
  std::vector<std::string> lost_detection;      // injected impl x dtype detected in OLD, not in NEW
  std::vector<std::string> only_old, only_new;  // impl x dtype tested in one run only
  // 1 when NEW has a new or worse finding in a reference or library implementation, or a planted
  // bug OLD detected went undetected; else 0.
  int exit_code() const;
};

// The result points into `before` and `after`, which must outlive it.
RunDiff diff_runs(const RunData& before, const RunData& after);
std::string render_diff(const RunDiff& d, const RunData& before, const RunData& after);
json::Value diff_json(const RunDiff& d, const RunData& before, const RunData& after);

}  // namespace stabfuzz::reports
