// `stabfuzz bench`: the cost of CESTAC against native code, the same template at the same
// optimization level, measured in one run.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::bench {

struct Measurement {
  std::string op;
  std::string dtype;
  double elements = 0;   // per call: values for row operators, multiply-adds for gemm
  double native_ns = 0;  // per element
  double cestac_ns = 0;  // per element, Stoch<T, 3> with instability detection on
  double ratio = 0;
};

struct Options {
  double seconds_per_measurement = 0.2;  // each timing repeats calls for at least this long
  int repeats = 5;                       // the minimum over repeats is kept
  bool detect = true;                    // CESTAC instability detection
};

std::vector<Measurement> run(const Options& opts, std::ostream& progress);
double geomean_ratio(const std::vector<Measurement>& ms, const std::string& dtype);
json::Value to_json(const std::vector<Measurement>& ms);

}  // namespace stabfuzz::bench
