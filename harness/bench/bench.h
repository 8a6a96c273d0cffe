// `stabfuzz bench`: the cost of CESTAC against native code, the same template at the same
// optimization level, measured in one run.
#pragma once

#include <cstdint>
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

// Cost of one family's oracle next to its stable target, per input element, over inputs drawn
// from every regime (f64, the family's own shapes).
struct OracleCost {
  std::string family;
  int64_t inputs = 0;
  double elements = 0;   // input values over all inputs
  double native_ns = 0;  // per element, the stable target natively
  double oracle_ns = 0;  // per element, the MPFR oracle (Ziv's loop included)
  double ratio = 0;
};

// What `stabfuzz fuzz` does per input (decode, native + CESTAC + oracle, verdict, feedback) for one
// implementation, on decoded rows of at most 64 values.
struct FuzzThroughput {
  std::string impl;
  std::string dtype;
  int64_t inputs = 0;      // distinct byte strings timed, each decoding to <= 64 values
  double mean_values = 0;  // values per input, on average
  double execs_per_s = 0;  // thread CPU time
};

struct Options {
  double seconds_per_measurement = 0.2;  // each timing repeats calls for at least this long
  int repeats = 10;                      // the minimum over repeats is kept
  bool detect = true;                    // CESTAC instability detection
};

// The calling thread's CPU time in seconds: other processes on a loaded machine do not inflate it.
double cpu_seconds();

std::vector<Measurement> run(const Options& opts, std::ostream& progress);
// Every family of the registry, `inputs` inputs each (rows capped at `max_elements` values).
std::vector<OracleCost> oracle_costs(int inputs, size_t max_elements, std::ostream& progress);
// softmax/cpu/stable and layer_norm/cpu/stable in f64 and f32, about `seconds` each.
std::vector<FuzzThroughput> fuzz_throughput(double seconds, std::ostream& progress);
double geomean_ratio(const std::vector<Measurement>& ms, const std::string& dtype);
json::Value to_json(const std::vector<Measurement>& ms, const std::vector<OracleCost>& oracle = {},
                    const std::vector<FuzzThroughput>& fuzz = {});

}  // namespace stabfuzz::bench
