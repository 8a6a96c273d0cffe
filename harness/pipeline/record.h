// Records: a finding and a pair's result as the JSON objects findings.jsonl and summary.json hold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "harness/pipeline/blackbox.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/verdict.h"
#include "reports/findings.h"
#include "reports/json.h"
#include "reports/run_data.h"
#include "stabfuzz/family.h"

namespace stabfuzz::pipeline {

// What one implementation x dtype pair of a run came to.
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
                           // or on which the target wrote on stdout
  int64_t timeouts = 0;    // ... that ran past --timeout-ms
  int64_t exceptions = 0;  // ... on which the target threw instead of answering
  double max_ulp = 0;
  double max_ratio = 0;
  double min_digits = 0;
  bool has_cestac = false;
  double seconds = 0;
  std::map<std::string, int64_t> regime_inputs;  // inputs generated per value regime
  // Failing inputs per finding kind (indexed by FindingKind), counted before max_findings.
  std::array<int64_t, kAllFindingKinds.size()> failing_by_kind{};

  int64_t failing(FindingKind k) const { return failing_by_kind[static_cast<size_t>(k)]; }
  // Whether the pair fails the run: an injected one when nothing fired on it, any other when it
  // has a failing input of a kind in `fail_on`.
  bool fails(const KindSet& fail_on) const;
  // Library targets: digits from the four rounding modes, nondeterminism (blackbox.h).
  std::optional<blackbox::Totals> blackbox;
};

// The exact input of a finding: tensors as shapes and hex floats, and its scalar parameters (eps,
// target, ...), which replaying it needs.
void set_input_json(json::Value& j, const Input& in);

// The fields every findings.jsonl line opens with: which case of which implementation, found by
// which engine, from which regime.
json::Value case_json(const Family& f, const Target& t, const CaseKey& key,
                      const std::string& engine, const std::string& regime);

// One line of findings.jsonl.
json::Value finding_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Verdict& v,
                         size_t original_n, int64_t shrink_steps, const std::string& engine,
                         const std::string& replay);

// One row of summary.json's results; `failed` says r.fails(fail_on).
json::Value impl_result_json(const ImplResult& r, const KindSet& fail_on);

// The recorder of one run: each finding is appended (and flushed) to DIR/findings.jsonl as it is
// found and kept in memory exactly as written; the summary is written atomically to
// DIR/summary.json. The reports render from run(), the data it holds, not from the disk.
class Recorder {
 public:
  explicit Recorder(const std::string& dir);
  void finding(const json::Value& j);
  void summary(const json::Value& s);
  const reports::RunData& run() const { return run_; }
  const std::string& findings_path() const { return writer_.path(); }
  const std::string& summary_path() const { return summary_path_; }

 private:
  reports::FindingsWriter writer_;
  std::string summary_path_;
  reports::RunData run_;
  int lines_ = 0;
};

}  // namespace stabfuzz::pipeline
