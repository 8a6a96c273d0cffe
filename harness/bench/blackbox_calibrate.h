// `stabfuzz calibrate --blackbox`: do the digits from the four rounding modes
// (harness/pipeline/blackbox.h) agree with the true digits the oracle measures?
//
// Every reference, injected and (non-isolated) library target of every family runs as a black box
// through pipeline::blackbox::measure on the family's regime cases (and, for sum, var and dot, on
// the rows whose condition number spans 1 to 1e12 that the CESTAC calibration uses), f64 and f32.
// Per output the black-box digits are compared with -log10 |r_nearest - exact| / |exact|.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::calibrate {

// One line of the table: a group of targets (all, a kind, a library, a family).
struct BlackBoxGroup {
  std::string name;
  int64_t inputs = 0;         // measured inputs
  int64_t not_measured = 0;   // the target threw, the oracle could not decide
  int64_t spread_inputs = 0;  // inputs on which the four modes did not agree bit for bit
  int64_t sensitive_inputs = 0;
  int64_t oracle_findings = 0;     // inputs on which the oracle detector fires
  int64_t sensitive_findings = 0;  // ... that the black box also calls rounding-sensitive
  int64_t outputs = 0, agree = 0, overclaim = 0;            // |bb - true| <= 1, bb > true + 1
  int64_t lossy = 0, lossy_agree = 0, lossy_overclaim = 0;  // outputs with true < full - 1
  double max_spread_ulps = 0;  // over inputs: the largest spread of an output, in its ULPs
};

struct BlackBoxSummary {
  // "all" first, then kinds and libraries, then families, then each target x dtype
  // ("lib-impl ID DTYPE" for libraries, "impl ID DTYPE")
  std::vector<BlackBoxGroup> groups;
  double seconds = 0;
};

// `per` regime cases (and `per` conditioned cases where the family has them) per target x dtype;
// `family` empty: every family.
BlackBoxSummary run_blackbox(int per, uint64_t seed, const std::string& family,
                             std::ostream& progress);
json::Value to_json(const BlackBoxSummary& s);
// A table of docs/blackbox.md, rates in percent: the groups whose name starts with `prefix`
// ("family ", "lib-impl " for library targets, "impl " for the others), or with "" all, the
// kinds and the libraries.
std::string markdown_table(const BlackBoxSummary& s, const std::string& prefix);

}  // namespace stabfuzz::calibrate
