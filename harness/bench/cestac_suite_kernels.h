// Kernels of the broad CESTAC calibration suite (`stabfuzz calibrate --suite broad`), written as a
// user writes them: a template over the scalar type, plain loops, `using std::exp; exp(x)`. No
// stabfuzz helper (only the user suite's kernels, written the same way), no hint for the engine:
// the suite judges CESTAC's digit estimate on code nobody tuned it on. Each is instantiated with
// double, float, Half, BFloat16 and with the stochastic types under test. Do not rewrite them to
// make CESTAC look better: a kernel whose digits CESTAC misjudges is what the suite is for.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "harness/bench/user_kernels.h"

namespace stabfuzz::calibrate::kernels {

// Horner's rule, coefficients from the highest degree down.
template <class T>
T horner(const std::vector<T>& c, T x) {
  T r = c[0];
  for (std::size_t i = 1; i < c.size(); ++i) r = r * x + c[i];
  return r;
}

template <class T>
T sum(const std::vector<T>& x) {
  T s = 0;
  for (const T& v : x) s += v;
  return s;
}

template <class T>
T mean(const std::vector<T>& x) {
  T s = 0;
  for (const T& v : x) s += v;
  return s / T(x.size());
}

// The one- and two-pass variances, the dot product and the max-shifted softmax are the user
// suite's (user_kernels.h): the same code, judged here for its digits.
using bench::user::dot;
using bench::user::variance_one_pass;
using bench::user::variance_two_pass;

// The small root of a x^2 + b x + c by the school formula (cancels when b^2 >> 4ac, b > 0).
template <class T>
T quadratic_small_root(T a, T b, T c) {
  using std::sqrt;
  return (-b + sqrt(b * b - T(4) * a * c)) / (T(2) * a);
}

// y_k = 1/k - 5 y_{k-1} (the integrals of x^k / (x + 5) over [0, 1]), forward: each step
// multiplies earlier errors by -5.
template <class T>
T integral_recurrence(T y0, int n) {
  T y = y0;
  for (int k = 1; k <= n; ++k) y = T(1) / T(k) - T(5) * y;
  return y;
}

// x_{k+1} = c x_k - x_{k-1}, run forward from x_0, x_1 to x_n.
template <class T>
T three_term(T c, T x0, T x1, int n) {
  for (int k = 2; k <= n; ++k) {
    const T x2 = c * x1 - x0;
    x0 = x1;
    x1 = x2;
  }
  return x1;
}

template <class T>
T exp_minus_one(T x) {
  using std::exp;
  return exp(x) - T(1);
}

template <class T>
T expm1_lib(T x) {
  using std::expm1;
  return expm1(x);
}

template <class T>
T log_one_plus(T x) {
  using std::log;
  return log(T(1) + x);
}

template <class T>
T log1p_lib(T x) {
  using std::log1p;
  return log1p(x);
}

// Entry i of softmax(x) as the formula reads: exp(x_i) / sum_j exp(x_j).
template <class T>
T softmax_naive(const std::vector<T>& x, std::size_t i) {
  using std::exp;
  T s = 0;
  for (const T& v : x) s += exp(v);
  return exp(x[i]) / s;
}

// Entry i of the max-shifted softmax every library computes.
template <class T>
T softmax_shifted(const std::vector<T>& x, std::size_t i) {
  std::vector<T> y(x.size());
  bench::user::softmax(x, y);
  return y[i];
}

// Kahan's compensated summation.
template <class T>
T kahan_sum(const std::vector<T>& x) {
  T s = 0, c = 0;
  for (const T& v : x) {
    const T y = v - c;
    const T t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

// prod_i x_i / y_i - 1, the product and quotients interleaved.
template <class T>
T product_ratio_minus_one(const std::vector<T>& x, const std::vector<T>& y) {
  T p = 1;
  for (std::size_t i = 0; i < x.size(); ++i) p = p * x[i] / y[i];
  return p - T(1);
}

// k square roots, then k squarings written as r / (1 / r): x again, exactly, in real arithmetic.
template <class T>
T sqrt_div_chain(T x, int k) {
  using std::sqrt;
  T r = x;
  for (int i = 0; i < k; ++i) r = sqrt(r);
  for (int i = 0; i < k; ++i) r = r / (T(1) / r);
  return r;
}

// The same through exp and log: k halvings of the logarithm, then k doublings.
template <class T>
T exp_log_chain(T x, int k) {
  using std::exp;
  using std::log;
  T r = x;
  for (int i = 0; i < k; ++i) r = exp(log(r) / T(2));
  for (int i = 0; i < k; ++i) r = exp(T(2) * log(r));
  return r;
}

}  // namespace stabfuzz::calibrate::kernels
