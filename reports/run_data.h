// A run directory loaded for the reports: summary.json, every readable findings.jsonl line,
// inject.json.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::reports {

struct InstabilitySite {
  std::string kind;
  std::string site;  // file:line
  long long count = 0;
};

// One findings.jsonl line with the fields the reports use. Optional fields the runner leaves out
// (CESTAC ones for black-box targets, the planted bug for non-injected ones) stay empty or NaN.
struct Finding {
  int line = 0;  // 1-based line in findings.jsonl
  // impl_kind: reference, injected or library; kind: what the finding is (accuracy, overflow,
  // nan, underflow, nondeterminism, crash, hang), and kind_detail why an underflow is one.
  std::string target, impl, impl_kind, kind, kind_detail, dtype, regime, severity, engine, replay;
  std::vector<std::string> detectors;
  uint64_t seed = 0;
  long long case_index = -1;
  double max_ulp = 0, error_over_tolerance = 0, tolerance_ulps = 0, cond = 0, max_cond = 0;
  long long worst_index = 0;
  std::string computed, exact;  // hex floats
  double computed_dec = 0, exact_dec = 0;
  bool nonfinite = false, undecidable = false;
  bool has_cestac = false;
  double digits = 0, expected_digits = 0, min_digits = 0;
  std::string self_validation;
  std::vector<InstabilitySite> instabilities;
  long long n = 0, original_n = 0, shrink_steps = 0;
  std::vector<double> input;                       // every input value, all arguments joined
  double magnitude = 0;                            // max |x| over the finite input values
  std::string plants, fails_where, suggested_fix;  // injected targets only
  // Isolated targets: "crash", "timeout", "exception" or "stdout" when the call left no output to
  // judge (then the numerical fields stay 0), and how it ended ("signal SIGSEGV (...)").
  std::string failure, failure_detail;

  double digits_lost() const;  // expected - digits, >= 0; 0 without CESTAC
  int severity_rank() const;   // critical 3, major 2, minor 1, else 0
};

// One implementation x dtype row of summary.json.
struct ImplSummary {
  std::string family, impl, impl_kind, dtype;
  long long inputs = 0, failing_inputs = 0, findings = 0, undecidable = 0;
  long long oracle_detections = 0, cestac_detections = 0;
  double max_ulp = 0, max_error_over_tolerance = 0;
  std::optional<double> min_digits;  // absent for targets without CESTAC
  double seconds = 0;
  std::map<std::string, long long> failing_by_kind;  // failing inputs per finding kind
  std::optional<bool> failed_flag;                   // as the run decided it (--fail-on)
  // Library targets: summary.json's "blackbox" (harness/pipeline/blackbox.h), absent for others.
  bool has_blackbox = false;
  std::optional<double> bb_min_digits;  // absent when no input was measured
  long long bb_sensitive_inputs = 0, bb_nondeterministic_inputs = 0;

  bool injected() const { return impl_kind == "injected"; }
  // As the run decided it: a reference or library target with a failing input of a kind that
  // fails the run, an injected one when nothing fired. Runs older than finding kinds: any
  // failing input.
  bool failed() const {
    if (failed_flag) return *failed_flag;
    return injected() ? failing_inputs == 0 : failing_inputs > 0;
  }
};

struct RunData {
  std::string dir;
  std::string target;
  uint64_t seed = 0;
  double seconds = 0;
  std::vector<ImplSummary> results;
  std::vector<Finding> findings;      // file order
  std::vector<std::string> problems;  // "DIR/findings.jsonl:LINE: what" for each skipped line
  std::optional<json::Value> inject;  // inject.json, when the run was `stabfuzz inject`

  // Findings of one implementation (every dtype), worst first.
  std::vector<const Finding*> worst_first(const std::string& impl) const;
  // Implementations in summary order, each once.
  std::vector<std::string> impls() const;
};

// The finding kinds in the order the reports list them (harness/pipeline/verdict.h decides them).
inline constexpr const char* kFindingKinds[] = {"accuracy",       "overflow", "nan", "underflow",
                                                "nondeterminism", "crash",    "hang"};

// "accuracy 3, underflow 2": counts per kind, in kFindingKinds order (unknown kinds last); "" when
// there are none.
std::string kinds_text(const std::map<std::string, long long>& counts);

// The verdict of a summary row in words: "UNSTABLE (accuracy 3)", "ok (policy: underflow 4)",
// "ok", "detected (planted)", "NOT DETECTED (planted)".
std::string verdict_text(const ImplSummary& r);

// Parses one findings.jsonl object; throws json::ParseError when impl, dtype or severity is
// missing or a field has the wrong type.
Finding parse_finding(const json::Value& v);

// Fills run's target, seed, seconds and results from a summary.json object; throws
// json::ParseError when a field has the wrong type.
void parse_summary(const json::Value& s, RunData& run);

// The text of a summary.json (read from `path`) into run's target, seed, seconds and results.
// Throws InputError "path: what is wrong" when it is not valid JSON or a field has the wrong type.
void read_summary(const std::string& text, const std::string& path, RunData& run);
// The lines of a findings.jsonl (read from `path`) appended to run's findings, each with its line
// number; a corrupt or truncated line goes to `problems` ("path:line: skipped: ...").
void read_findings(const std::string& text, const std::string& path, RunData& run);

// Loads DIR. Throws InputError when DIR or its summary.json is missing or summary.json is not
// valid JSON; a corrupt or truncated findings.jsonl line is recorded in `problems` and skipped.
RunData load_run(const std::string& dir);

// 1 when `a` is the worse finding, -1 when `b` is, 0 when neither: severity, then a non-finite
// output, then error / tolerance, then digits lost.
int compare_badness(const Finding& a, const Finding& b);
// Worst first (ties: file order), for sorting.
bool worse(const Finding& a, const Finding& b);

// Short decimal text of a double ("1.5e+08", "inf").
std::string num(double v, int digits = 3);

}  // namespace stabfuzz::reports
