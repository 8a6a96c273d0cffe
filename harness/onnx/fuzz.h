// `monitor infer --fuzz`: inputs that make an ONNX graph lose digits beyond its conditioning, or
// produce NaN or inf where the exact values are finite. The given inputs fix the shapes; values
// come from the value regimes where floating point breaks (huge, tiny, near exp's overflow,
// mean-shifted, subnormal, mixed) and from mutations of the best input so far (error-guided:
// the largest loss beyond the conditioning leads). Each polluting node's first breaking input is
// shrunk and written as a test_data_set folder that `monitor infer --inputs` replays.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/onnx/infer.h"
#include "harness/onnx/model.h"

namespace stabfuzz::onnx {

struct FuzzBreak {
  std::string node, op, kind;  // the polluting node, its operator, the finding's kind
  double lost = 0;             // digits lost beyond the conditioning (inf for nan/overflow)
  std::string regime;          // the regime (or "mutation") of the input
  std::string dir;             // the test_data_set folder written
  int64_t trial = 0;
};

struct FuzzReport {
  int64_t trials = 0;
  double seconds = 0;
  std::vector<FuzzBreak> breaks;  // one per polluting node, in the order found
};

// Searches for `budget_s` seconds, or `max_trials` trials when that comes first (0: no limit),
// writing each break under OUT/fuzz/<node>/test_data_set_0. The trials are a function of `seed`:
// a run cut by trials reproduces exactly; one cut by time, up to where it stopped.
FuzzReport fuzz_inputs(const Model& m, const std::map<std::string, HostTensor>& start, bool f64,
                       uint64_t seed, double budget_s, const std::string& out,
                       int64_t max_trials = 0);

}  // namespace stabfuzz::onnx
