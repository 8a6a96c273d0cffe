// Reduction oracles: exact sums, moments, norms and log-sum-exp scans, with condition numbers.
#pragma once

#include <optional>

#include "stabfuzz/family.h"

namespace stabfuzz::oracle {

// y = sum x_i, exact then rounded once. cond = sum |x_i| / |sum x_i|; an exact zero sum gets
// cond = inf when some x_i != 0 (relative error is unbounded there) and 0 for an all-zero row.
OracleResult reduce_sum(const Input& in);

// y = sum x_i / n; cond as for the sum (division by n is exact in conditioning).
OracleResult reduce_mean(const Input& in);

// y_k = sum_{i<=k} x_i; cond_k = sum_{i<=k} |x_i| / |y_k|, zero prefixes as for the sum.
OracleResult cumsum(const Input& in);

// var = sum (x_i - mean)^2 / (n - unbiased). dvar/dx_i = 2 (x_i - mean) / (n - unbiased) (the
// mean's own derivative cancels since sum (x_i - mean) = 0), so
// cond = sum |2 (x_i - mean) x_i| / ((n - unbiased) var): large on mean-shifted rows, the reason
// the naive E[x^2] - E[x]^2 fails. A constant row has var exactly 0 and cond 0: every correct
// kernel returns 0 there.
OracleResult variance(const Input& in);

// std = sqrt(var); cond = cond(var) / 2.
OracleResult standard_deviation(const Input& in);

// ||x||_2 = sqrt(sum x_i^2); cond = sum x_i^2 / ||x||^2 = 1 (0 for the zero vector).
OracleResult l2_norm(const Input& in);

// log sum e^(x_i); dy/dx_i = softmax_i, so cond = sum softmax_i |x_i| / |y|. -inf entries add
// nothing; all -inf gives -inf and a +inf entry gives +inf (cond 0: exact); y = 0 exactly (only
// x = [0]) gets cond 0.
OracleResult logsumexp(const Input& in);
namespace detail {
// The two ways logsumexp() evaluates a row (exposed for tests): double-double with a proven
// bound (nullopt when the row is out of its range or the result undecided), and MPFR's scan.
std::optional<OracleResult> logsumexp_double_double(const Input& in);
OracleResult logsumexp_mpfr(const Input& in);
}  // namespace detail

// y_k = logsumexp of the prefix x_0..x_k, each with the logsumexp condition number of its prefix.
OracleResult logcumsumexp(const Input& in);
namespace detail {
// The two ways logcumsumexp() evaluates a row (exposed for tests): double-double with a proven
// bound (nullopt when the row is out of its range or an output undecided), and MPFR's scan.
std::optional<OracleResult> logcumsumexp_double_double(const Input& in);
OracleResult logcumsumexp_mpfr(const Input& in);
}  // namespace detail

// y_i = log(e^(a_i) + e^(b_i)) for two rows of equal length; cond_i = (w_a |a_i| + w_b |b_i|) /
// |y_i| with w the softmax weights of (a_i, b_i).
OracleResult logaddexp(const Input& in);

namespace detail {
// The two ways logaddexp() evaluates (exposed for tests): one pair in double-double with a proven
// bound (nullopt for an infinity or an undecided result; the condition number into *cond), and
// MPFR for every pair.
std::optional<double> logaddexp_double_double(double a, double b, DType dt, double* cond);
OracleResult logaddexp_mpfr(const Input& in);
}  // namespace detail

}  // namespace stabfuzz::oracle
