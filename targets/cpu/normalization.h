// Normalization and loss reference kernels (log_softmax, norms, losses), each written once over T.
//
// Every kernel runs on float, double, Half, BFloat16 and Stoch<...>: unqualified math calls (ADL),
// constants as T(...), no fma, casts or floor on T.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::targets {
namespace norm_kernels {

// v^2, but 0 for a zero v without multiplying: a zero adds nothing to a sum of squares, and under
// CESTAC a noisy zero (a centred value at the mean) times itself is an unstable multiplication.
template <class T>
T square(const T& v) {
  return v == T(0) ? T(0) : v * v;
}

template <class T>
T count(size_t n) {
  return T(static_cast<double>(n));
}

// log1p(t) for t >= 0. Below 2^-60, log1p(t) = t (1 - t/2 + ...) rounds to t in every format
// (t/2 is below half an ULP), so t is returned as is: for a subnormal t that saves a second
// rounding, which random rounding would turn into noise of a whole subnormal ULP.
template <class T>
T log1p_nonneg(const T& t) {
  using std::log1p;
  return t < T(0x1p-60) ? t : log1p(t);
}

// The pieces of log-sum-exp with the maximum m = x[k] subtracted: lse = m + l with
// l = log1p(t), t = sum_{j != k} e^(x_j - m). log1p keeps l accurate when one logit dominates
// (l << 1), where log(1 + t) would round 1 + t and lose every digit of l. t is formed as
// e^((m2 - m) + log u), u = sum_{j != k} e^(x_j - m2) >= 1 with m2 the largest other logit, so
// that a t below the normal range (gaps beyond 708 in f64, 87 in f32) is rounded once instead
// of summing subnormal terms, each off by up to half a subnormal ULP.
template <class T>
struct ShiftedLse {
  T m;
  T l;
};

template <class Sums = PairwiseSums, class T>
ShiftedLse<T> shifted_lse(const std::vector<T>& x) {
  using std::exp;
  using std::log;
  const size_t n = x.size();
  size_t k = 0;
  for (size_t i = 1; i < n; ++i)
    if (x[i] > x[k]) k = i;
  if (n == 1) return {x[k], T(0)};
  size_t k2 = k == 0 ? 1 : 0;
  for (size_t i = 0; i < n; ++i)
    if (i != k && x[i] > x[k2]) k2 = i;
  std::vector<T> e(n);
  for (size_t j = 0; j < n; ++j) e[j] = j == k ? T(0) : exp(x[j] - x[k2]);  // <= 1, e[k2] = 1
  const T u = Sums::sum(e.data(), n);
  return {x[k], log1p_nonneg(exp((x[k2] - x[k]) + log(u)))};
}

// y = c / sqrt(mean(c^2) + eps), scaled so that neither c^2 nor eps / c^2 leaves the range:
// with S = max(max|c_j|, sqrt(eps)), sigma = S sqrt(mean((c/S)^2) + (eps/S)/S); every term of
// that sum is <= 1 and the sum is >= min(1/n, ~1), so overflow is impossible and underflow
// drops only terms below the rounding of the sum. S cancels exactly in exact arithmetic.
template <class Sums = PairwiseSums, class T>
void scaled_normalize(const std::vector<T>& c, T* y, T eps) {
  using std::fabs;
  using std::sqrt;
  const size_t n = c.size();
  T s = sqrt(eps);
  for (const T& v : c)
    if (fabs(v) > s) s = fabs(v);
  std::vector<T> w(n);
  for (size_t j = 0; j < n; ++j) w[j] = square(c[j] / s);
  const T q = Sums::sum(w.data(), n) / count<T>(n);
  const T sigma = s * sqrt(q + (eps / s) / s);
  for (size_t j = 0; j < n; ++j) y[j] = c[j] / sigma;
}

// Layer normalization of one row by the corrected two-pass algorithm: mu1 = mean(x),
// d = x - mu1, mu2 = mean(d), c = d - mu2. The correction mu2 is kept apart from mu1 instead of
// being folded into a rounded mean: a constant row gives c = 0 exactly, and rows 1e4 + N(0,1)
// get centred values whose error is u |x - mu| rather than u |mu| (d is exact by Sterbenz).
//
// Both means are formed as 2^-k mean(v 2^k), with 2^k max|x| in [1, 2) (max|x| is an input, hence
// exact under CESTAC): every term lies in [-4, 4], so no partial sum overflows f16 (x ~ 1000 over
// 4096 values sums to 4e6) for n <= max / 4, and the scaling is exact (a multiplication, not a
// rounded division: only terms below 2^(emin + k) lose bits).
template <class Sums = PairwiseSums, class T>
T scaled_mean(const std::vector<T>& v, long k, std::vector<T>& w) {
  using reduce_detail::scale_pow2;
  const size_t n = v.size();
  w.resize(n);
  constexpr const Format& f = reduce_detail::FormatOf<T>::value;
  if (k <= f.emax && k >= f.emin) {  // 2^k and 2^-k representable: one factor for every term
    const T up(std::ldexp(1.0, static_cast<int>(k)));
    for (size_t j = 0; j < n; ++j) w[j] = v[j] * up;
  } else {
    for (size_t j = 0; j < n; ++j) w[j] = scale_pow2(v[j], k);
  }
  return scale_pow2(Sums::sum(w.data(), n) / count<T>(n), -k);
}

template <class Sums = PairwiseSums, class T>
void layer_norm_row(const T* x, T* y, size_t n, T eps) {
  using std::fabs;
  std::vector<T> d(x, x + n), w;
  T s(0);
  for (const T& v : d)
    if (fabs(v) > s) s = fabs(v);
  if (s == T(0)) {  // a zero row: y = 0
    for (size_t j = 0; j < n; ++j) y[j] = T(0);
    return;
  }
  const long k = reduce_detail::pow2_exponent(s);
  const T mu1 = scaled_mean<Sums>(d, k, w);
  for (auto& v : d) v = v - mu1;
  const T mu2 = scaled_mean<Sums>(d, k, w);
  for (auto& v : d) v = v - mu2;
  scaled_normalize<Sums>(d, y, eps);
}

}  // namespace norm_kernels

// log_softmax/cpu/stable: y_i = (x_i - m) - log1p(sum_{j != k} e^(x_j - m)).
template <class Sums = PairwiseSums>
struct LogSoftmaxStableWith {
  template <class S>
  using WithSums = LogSoftmaxStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x[0];
    const auto p = norm_kernels::shifted_lse<Sums>(x);
    std::vector<T> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - p.m) - p.l;  // both <= 0: no cancellation
    return y;
  }
};
using LogSoftmaxStable = LogSoftmaxStableWith<>;

// cross_entropy/cpu/stable: loss = (m - x_t) + log1p(sum_{j != k} e^(x_j - m)), both terms >= 0.
template <class Sums = PairwiseSums>
struct CrossEntropyStableWith {
  template <class S>
  using WithSums = CrossEntropyStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x[0];
    const auto t = static_cast<size_t>(a.param("target", 0));
    const auto p = norm_kernels::shifted_lse<Sums>(x);
    return {(p.m - x[t]) + p.l};
  }
};
using CrossEntropyStable = CrossEntropyStableWith<>;

// layer_norm/cpu/stable: corrected two-pass statistics, scaled variance.
template <class Sums = PairwiseSums>
struct LayerNormStableWith {
  template <class S>
  using WithSums = LayerNormStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x[0];
    std::vector<T> y(x.size());
    norm_kernels::layer_norm_row<Sums>(x.data(), y.data(), x.size(),
                                       T(a.param("eps", params::kLayerNormEps)));
    return y;
  }
};
using LayerNormStable = LayerNormStableWith<>;

// rms_norm/cpu/stable: y = x / sqrt(mean(x^2) + eps) with the scaled sum of squares.
template <class Sums = PairwiseSums>
struct RmsNormStableWith {
  template <class S>
  using WithSums = RmsNormStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x[0];
    std::vector<T> y(x.size());
    norm_kernels::scaled_normalize<Sums>(x, y.data(), T(a.param("eps", params::kRmsNormEps)));
    return y;
  }
};
using RmsNormStable = RmsNormStableWith<>;

// batch_norm/cpu/stable: each channel (column of [n, c]) normalized like a layer_norm row.
template <class Sums = PairwiseSums>
struct BatchNormStableWith {
  template <class S>
  using WithSums = BatchNormStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x[0];
    const auto rows = static_cast<size_t>(a.shape(0).at(0));
    const auto cols = static_cast<size_t>(a.shape(0).at(1));
    const T eps(a.param("eps", params::kBatchNormEps));
    std::vector<T> y(x.size()), col(rows), out(rows);
    for (size_t c = 0; c < cols; ++c) {
      for (size_t r = 0; r < rows; ++r) col[r] = x[r * cols + c];
      norm_kernels::layer_norm_row<Sums>(col.data(), out.data(), rows, eps);
      for (size_t r = 0; r < rows; ++r) y[r * cols + c] = out[r];
    }
    return y;
  }
};
using BatchNormStable = BatchNormStableWith<>;

// bce_with_logits/cpu/stable: max(x, 0) - x z + log1p(exp(-|x|)); the first two terms form
// x (1 - z) >= 0 or -x z >= 0, so the sum never cancels and exp never overflows.
struct BceWithLogitsStable {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::fabs;
    const auto& x = a.x[0];
    const auto& z = a.x[1];
    std::vector<T> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = ((x[i] > T(0) ? x[i] : T(0)) - x[i] * z[i]) +
             norm_kernels::log1p_nonneg(exp(-fabs(x[i])));
    }
    return y;
  }
};

// kl_div/cpu/stable: sum_i p_i (log p_i - logq_i) over p_i > 0 (0 log 0 = 0), pairwise sum.
template <class Sums = PairwiseSums>
struct KlDivStableWith {
  template <class S>
  using WithSums = KlDivStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::log;
    const auto& lq = a.x[0];
    const auto& p = a.x[1];
    std::vector<T> t(p.size());
    for (size_t i = 0; i < p.size(); ++i) t[i] = p[i] > T(0) ? p[i] * (log(p[i]) - lq[i]) : T(0);
    return {Sums::sum(t.data(), t.size())};
  }
};
using KlDivStable = KlDivStableWith<>;

// entropy/cpu/stable: -sum_i p_i log p_i over p_i > 0; every term is >= 0 for p in [0, 1], so the
// pairwise sum does not cancel. log(p) of an exact p near 1 is accurate: no log1p needed.
template <class Sums = PairwiseSums>
struct EntropyStableWith {
  template <class S>
  using WithSums = EntropyStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::log;
    const auto& p = a.x[0];
    std::vector<T> t(p.size());
    for (size_t i = 0; i < p.size(); ++i) t[i] = p[i] > T(0) ? p[i] * -log(p[i]) : T(0);
    return {Sums::sum(t.data(), t.size())};
  }
};
using EntropyStable = EntropyStableWith<>;

}  // namespace stabfuzz::targets
