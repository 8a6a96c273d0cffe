// Normalization and loss oracles: exact results correctly rounded, with componentwise conditions.
//
// cond_i = sum_j |dy_i/dx_j| |x_j| / |y_i| over every input value x_j (parameters such as eps and
// the target index are not perturbed). Convention for an output whose exact value is 0: cond_i = 0
// when the numerator is 0 too (the output stays exactly 0 under relative input perturbations, so
// a kernel must return 0), else +inf (no relative error bound exists: the oracle detector leaves
// that output to the others and to CESTAC's self-validation).
#pragma once

#include <optional>

#include "stabfuzz/family.h"

namespace stabfuzz::oracle {

// One row x. y_i = (x_i - m) - log sum_j e^(x_j - m), m = max x. With s = softmax(x),
// dy_i/dx_j = d_ij - s_j, so cond_i = (|x_i| (1 - s_i) + sum_{j != i} s_j |x_j|) / |y_i|.
OracleResult log_softmax(const Input& in);

// Logits x and parameter `target` t: loss = -log_softmax(x)_t, cond = cond_t of log_softmax.
OracleResult cross_entropy(const Input& in);

namespace detail {
// The two ways log_softmax() (cross_entropy = false) and cross_entropy() (true) evaluate, exposed
// for tests: double-double with a proven bound (nullopt when the row is out of its range or an
// output undecided), and MPFR with Ziv's ladder.
std::optional<OracleResult> log_softmax_double_double(const Input& in, bool cross_entropy);
OracleResult log_softmax_mpfr(const Input& in, bool cross_entropy);
}  // namespace detail

// One row x, parameter eps (default 1e-5, rounded to the dtype as kernels add it in that type):
// y_i = (x_i - mu) / sigma, sigma = sqrt(var + eps), var the biased variance. With y as the
// output, dy_i/dx_j = (d_ij - (1 + y_i y_j) / n) / sigma, so
// cond_i = sum_j |d_ij - (1 + y_i y_j) / n| |x_j| / |x_i - mu|, evaluated exactly in O(n log n)
// (the j sorted by y_j: the sign of 1 + y_i y_j changes once).
OracleResult layer_norm(const Input& in);

// One row x, eps default 1e-6: y_i = x_i / sqrt(mean(x^2) + eps). dy_i/dx_j = (d_ij - y_i y_j/n)
// / sigma gives cond_i = |1 - y_i^2/n| + (sum_{j != i} y_j^2) / n, and 0 where x_i = 0.
OracleResult rms_norm(const Input& in);

// x of shape [n, c] row-major, eps default 1e-5: every channel (column) normalized by its batch
// mean and biased variance, conditions as layer_norm's within each channel.
OracleResult batch_norm(const Input& in);

namespace detail {
// The two ways layer_norm() and batch_norm() evaluate (exposed for tests): double-double with a
// proven bound per output (nullopt when a row is out of its range or an output undecided), and
// MPFR with Ziv's ladder.
std::optional<OracleResult> layer_norm_double_double(const Input& in);
OracleResult layer_norm_mpfr(const Input& in);
std::optional<OracleResult> batch_norm_double_double(const Input& in);
OracleResult batch_norm_mpfr(const Input& in);
}  // namespace detail

// Rows x (logits) and z (targets in [0, 1]): l_i = softplus(x_i) - x_i z_i, with dl/dx = sigmoid(x)
// - z and dl/dz = -x: cond_i = (|sigmoid(x_i) - z_i| |x_i| + |x_i z_i|) / l_i (l_i > 0 always).
OracleResult bce_with_logits(const Input& in);

// Rows logq and p (p in [0, 1]): y = sum_{p_i > 0} p_i (log p_i - logq_i). dy/dp_i = log p_i -
// logq_i + 1, dy/dlogq_i = -p_i: cond = sum_i p_i (|log p_i - logq_i + 1| + |logq_i|) / |y|; a
// p_i = 0 stays 0 under relative perturbation and contributes nothing.
OracleResult kl_div(const Input& in);

// One row p in [0, 1]: H = -sum_{p_i > 0} p_i log p_i, cond = sum_i p_i |log p_i + 1| / H.
OracleResult entropy(const Input& in);

namespace detail {
// The two ways bce_with_logits(), kl_div() and entropy() evaluate (exposed for tests):
// double-double with a proven bound (nullopt when out of range or undecided), and MPFR with Ziv's
// ladder.
std::optional<OracleResult> bce_with_logits_double_double(const Input& in);
// One output of bce_with_logits in double-double (nullopt where its bound does not decide).
struct BceElement {
  double exact, cond;
};
std::optional<BceElement> bce_element_double_double(double x, double z, DType dt);
OracleResult bce_with_logits_mpfr(const Input& in);
std::optional<OracleResult> kl_div_double_double(const Input& in);
OracleResult kl_div_mpfr(const Input& in);
std::optional<OracleResult> entropy_double_double(const Input& in);
OracleResult entropy_mpfr(const Input& in);
}  // namespace detail

}  // namespace stabfuzz::oracle
