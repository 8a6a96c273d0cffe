// Building blocks of value regimes: row lengths, format thresholds, rounding to the dtype.
//
// A regime is declared by name in its family; these helpers keep each
// declaration to a few lines and make every generated value exactly representable in its dtype.
//
// One draw per call: a seed must name the same input whichever compiler built stabfuzz, and C++
// leaves unspecified the order in which function arguments and operands are evaluated (GCC
// evaluates `f(a(e), b(e))` right to left, Clang left to right). So two arguments or operands of
// one expression never both draw from the Entropy: the first is drawn into a local first.
// InputGen.EveryRegimeGivesTheRecordedInputsWithEveryCompiler checks it in both builds.
#pragma once

#include <vector>

#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"

namespace stabfuzz::regime {

inline constexpr size_t kMaxRowLength = 4096;

// Log-uniform length in [1, max_n]: short rows are as common as long ones per octave.
size_t row_length(Entropy& e, size_t max_n = kMaxRowLength);

// x where e^x overflows (709.78 f64, 88.72 f32, 11.09 f16, 88.72 bf16) and where e^x drops below
// the smallest normal (-708.40 f64, -87.34 f32, -9.70 f16, -87.34 bf16).
double exp_overflow_threshold(DType d);
double exp_underflow_threshold(DType d);

// A one-row input whose values are rounded to the dtype.
Input row_input(DType d, std::vector<double> values);

// An input of several tensors (values rounded to the dtype) and parameters.
Input make_input(DType d, std::vector<Tensor> tensors,
                 std::vector<std::pair<std::string, double>> params = {});

}  // namespace stabfuzz::regime
