// The hand-written softmax run the report tests render: four result rows (a reference and a planted
// bug, two dtypes each) and four findings (minor, critical, and two planted ones).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "tests/reports/run_fixture.h"

namespace stabfuzz::testing {

inline const std::vector<FixtureResult> kResults = {
    {"softmax/cpu/stable", "reference", "f32", 100, 2, 2},
    {"softmax/cpu/stable", "reference", "f64", 100, 0, 0},
    {"softmax/injected/no_max_subtract", "injected", "f32", 100, 40, 2},
    {"softmax/injected/no_max_subtract", "injected", "f16", 100, 0, 0},
};

inline std::vector<FixtureFinding> fixture_findings() {
  FixtureFinding minor;  // reference, cancellation only: no catalog row for softmax matches it
  minor.case_index = 3;
  minor.severity = "minor";
  minor.max_ulp = 9;
  minor.ratio = 2;
  minor.kinds = {"cancellation"};
  FixtureFinding major = minor;  // reference, overflow: the catalog's max-shift row
  major.case_index = 7;
  major.severity = "critical";
  major.max_ulp = 4e6;
  major.ratio = 1e6;
  major.digits = 0;
  major.kinds = {"overflow"};
  major.input = {100.0, 0x1.8p+6, -3.0};
  FixtureFinding planted;
  planted.impl = "softmax/injected/no_max_subtract";
  planted.impl_kind = "injected";
  planted.case_index = 11;
  planted.severity = "critical";
  planted.max_ulp = INFINITY;
  planted.ratio = INFINITY;
  planted.digits = 0;
  planted.kinds = {"overflow", "invalid_operation"};
  planted.fix = "subtract the row max before exp (planted fix)";
  FixtureFinding planted2 = planted;
  planted2.case_index = 12;
  planted2.severity = "major";
  planted2.max_ulp = 300;
  planted2.ratio = 50;
  planted2.digits = -1;  // no CESTAC fields
  return {minor, major, planted, planted2};
}

inline std::string fixture_dir(const std::string& extra = "") {
  return write_run(temp_dir("run"), kResults, fixture_findings(), extra);
}

}  // namespace stabfuzz::testing
