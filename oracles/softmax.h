// Softmax oracle: exact softmax of a row, correctly rounded, with its condition number.
#pragma once

#include <optional>

#include "stabfuzz/family.h"

namespace stabfuzz::oracle {

// y_i = e^(x_i - m) / sum_j e^(x_j - m), m = max x. cond_i is the componentwise relative
// condition number |x_i|(1 - y_i) + sum_{j != i} y_j |x_j| (from dy_i/dx_j = y_i(d_ij - y_j)):
// logits near 1000 make even a perfect f32 softmax err by ~1000 u, and that is not a bug.
OracleResult softmax(const Input& in);

namespace detail {
// The two ways softmax() evaluates a row (exposed for tests): double-double arithmetic with a
// proven error bound, rounded through round_decided (nullopt when a row is out of its range or
// an output is undecided), and MPFR with Ziv's ladder (always).
std::optional<OracleResult> softmax_double_double(const Input& in);
OracleResult softmax_mpfr(const Input& in);
}  // namespace detail

}  // namespace stabfuzz::oracle
