// `stabfuzz calibrate`: does CESTAC's digit count agree with the true digits the oracle measures?
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"

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

// -log10 |mean - exact| / |exact|, capped at the format's digits (exact != 0).
double true_digits(double mean, double exact, DType d);

// An input of `family` (sum, var or dot) whose condition number is about 10^log10_cond: the rows
// the calibration spans 1 to 1e12 with; nullopt for other families.
std::optional<Input> conditioned_input(const std::string& family, DType d, Entropy& e,
                                       double log10_cond);

Summary run(int cases_per_impl_dtype, uint64_t seed, std::ostream& progress);
json::Value to_json(const Summary& s);

}  // namespace stabfuzz::calibrate
