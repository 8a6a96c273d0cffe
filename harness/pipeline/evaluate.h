// Evaluation: one input through one target (native, CESTAC when it has a source-level entry), the
// oracle and the verdict; and the greedy shrinking of a failing input.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <utility>

#include "harness/pipeline/verdict.h"
#include "stabfuzz/family.h"

namespace stabfuzz::pipeline {

// Outputs already computed (native and, when given, CESTAC) judged against the oracle's exact
// answer, with the finding's kind: the verdict rule and the DAZ check of subnormal inputs.
Verdict decide(const Family& family, const Input& in, const std::vector<double>& out,
               const OracleResult& oracle, const CestacOutput* cestac);

// The target's outputs (native and CESTAC) judged against the oracle's exact answer.
Verdict evaluate(const Family& family, const Target& target, const Input& in,
                 const CestacRequest& req);

// Greedy shrink: take the first simpler input on which `fails` holds, until none does, `budget`
// evaluations are spent or `max_seconds` (> 0) have passed. Returns the shrunk input and the
// number of steps taken.
std::pair<rc::Shrinkable<Input>, int64_t> shrink(const std::function<bool(const Input&)>& fails,
                                                 rc::Shrinkable<Input> cur, int64_t budget,
                                                 double max_seconds = 0);

// Outputs equal bit for bit (NaN equal to NaN, the sign of zero counted).
bool same_outputs(const std::vector<double>& a, const std::vector<double>& b);

// Whether an input on which a planted bug (an injected target) fails pins the planted change:
// the family's reference target has no finding on it and the injected target's native outputs
// differ from the reference's. An input where the two compute the same outputs (log(1 / x) at
// x = 0) or where the reference fails too would pass for a detection of something else.
bool pins_planted_change(const Family& family, const Target& injected, const Target& reference,
                         const Input& in, const CestacRequest& req);

// The family's first reference target, or nullptr.
const Target* reference_target(const Family& family);

// A failing input shrunk toward shorter rows and simpler floats while the target still fails (and,
// with `reference`, while the input still pins the planted change: pins_planted_change).
std::pair<Input, int64_t> shrink_failing(const Family& family, const Target& target,
                                         const Input& in, const CestacRequest& req, int64_t budget,
                                         double max_seconds = 0, const Target* reference = nullptr);

}  // namespace stabfuzz::pipeline
