// `stabfuzz calibrate`: does CESTAC's digit count agree with the true digits the oracle measures?
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::calibrate {

struct Case {
  std::string impl;
  std::string dtype;
  double log10_cond = 0;  // of the problem at this input
  double cestac_digits = 0;
  double true_digits = 0;  // -log10 |mean - exact| / |exact|, capped at the format's digits
};

struct Summary {
  std::vector<Case> cases;
  double agree_within_1 = 0;  // fraction with |cestac - true| <= 1
  double overclaim = 0;       // fraction with cestac > true + 1 (the dangerous direction)
};

Summary run(int cases_per_impl_dtype, uint64_t seed, std::ostream& progress);
json::Value to_json(const Summary& s);

}  // namespace stabfuzz::calibrate
