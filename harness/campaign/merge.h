// Joining runs: a finding's identity, summary rows summed over units and shards, `stabfuzz merge`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/pipeline/finding_kind.h"
#include "reports/json.h"

namespace stabfuzz::campaign {

// What makes two findings the same: implementation, dtype and the exact (shrunk) input with its
// parameters, hashed; a failure without an input (a unit that crashed) is keyed by its replay line.
// "softmax/cpu/stable f32 9a3c...".
std::string finding_identity(const json::Value& finding);

// Every parseable line of a findings.jsonl, in file order. A corrupt or torn line (a run killed
// mid-write) is named in `problems` ("PATH:LINE: skipped: why") and left out. A missing file is
// empty.
std::vector<json::Value> read_findings(const std::string& path, std::vector<std::string>* problems);

// Summary rows (summary.json "results") keyed by implementation and dtype, combined: counts and
// seconds add up, max_ulp and error/tolerance take the maximum, min_digits the minimum.
class RowMerger {
 public:
  void add(const json::Value& row);
  // The rows in first-seen order; "findings" becomes the count in `findings_per_pair`
  // ("impl dtype" -> deduplicated findings) when given.
  json::Array rows(const std::map<std::string, int64_t>* findings_per_pair = nullptr) const;
  size_t size() const { return order_.size(); }

 private:
  std::vector<std::string> order_;
  std::map<std::string, json::Value> rows_;
};

// "impl dtype" of a finding or a row.
std::string pair_of(const json::Value& v);

// Moves (or, with `copy`, copies) every file of `from` that `to` lacks into `to`, each through a
// temporary name and rename(), so `to` never holds half a file. Returns the number added.
int64_t merge_corpus_dir(const std::string& from, const std::string& to, bool copy);

// The target kind (reference, injected, library) and the finding kind (accuracy, ..., hang) of a
// findings.jsonl object or a summary row. Lines written before finding kinds had the target kind
// in "kind"; their finding kind follows from "failure" (crash, hang), else accuracy.
std::string impl_kind_of(const json::Value& v);
std::string finding_kind_of(const json::Value& f);

// Exit status of a joined run without a baseline: 1 when a reference or library implementation has
// a finding of a kind in `fail_on` (a planted bug is expected to have findings), else 0.
int findings_exit_code(const std::vector<json::Value>& findings,
                       const KindSet& fail_on = KindSet::defaults());

// The morning answer of a campaign, per implementation x dtype: fuzzing finds other inputs of a
// known bug every night, so what a nightly job acts on is a reference or library pair that fails
// now and did not (or was not tested), or whose worst finding got more severe.
struct PairDiff {
  std::vector<std::string> newly_failing, worse, fixed, lost_detection;  // "impl dtype: detail"
  // Failing last time, not now, but tested on fewer than half as many inputs: no verdict.
  std::vector<std::string> undertested;
  size_t unchanged_failing = 0;  // reference/library pairs failing on both nights
  int exit_code() const { return newly_failing.empty() && worse.empty() ? 0 : 1; }
};

// Writes OUT/diff.md (the pair summary, then every finding matched as `report --diff` does) and
// OUT/diff.json, prints the pair summary on `out` (at most `max_lines` entries per list), and
// returns PairDiff::exit_code().
int diff_against_baseline(const std::string& baseline, const std::string& out_dir,
                          std::ostream& out, size_t max_lines = 15);

struct MergeOptions {
  std::vector<std::string> dirs;  // run or campaign directories (shards)
  std::string out_dir;
  std::string baseline;  // optional
  bool write_reports = true;
};

// `stabfuzz merge DIR... --out OUT`: findings deduplicated by identity (the first directory's copy
// wins), rows combined, corpora joined; warns about missing or repeated shards. Returns the exit
// status.
int merge_runs(const MergeOptions& o, std::ostream& out, std::ostream& log);

}  // namespace stabfuzz::campaign
