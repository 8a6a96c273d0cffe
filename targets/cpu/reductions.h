// Stable CPU reference reductions: sums, moments, norms and log-sum-exp scans, templated on T.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "stabfuzz/lowp.h"
#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::targets {

namespace reduce_detail {

// v^2, except that an exact or computational zero squares to an exact 0: CESTAC counts the square
// of a computational zero as an unstable multiplication (a self-validation failure), though a
// term at the noise level cannot move a sum of squares. In native arithmetic this is v * v.
template <class T>
T square(const T& v) {
  return v == T(0) ? T(0) : v * v;
}

template <class T>
T max_abs(const std::vector<T>& x) {
  using std::fabs;
  T m(0);
  for (const T& v : x)
    if (fabs(v) > m) m = fabs(v);
  return m;
}

// Exponent that keeps every partial sum of x finite: -g once max|x| >= 2^(emax - g), g = 32 (f64,
// f32, bf16), so that 2^24 terms cannot overflow; 0 otherwise (no scaling, no rounding). Only
// entries below 2^(emin + g) lose bits then, a loss ~2^-2000 (f64) or ~2^-180 (f32, bf16) of
// sum |x|. f16 (emax = 15) affords only g = 7: entries below 2^-7 lose up to 2^-18 each, at most
// n 2^-15 u of sum |x| (1/8 u at n = 4096), and more than 2^7 terms near 65504 of one sign can
// still overflow: guarded_sum below retries those.
template <class T>
long overflow_guard(const std::vector<T>& x) {
  constexpr const Format& f = FormatOf<T>::value;
  constexpr int g = f.emax / 2 < 32 ? f.emax / 2 : 32;
  return max_abs(x) >= T(std::ldexp(1.0, f.emax - g)) ? -g : 0;
}

// The pairwise sum of x * 2^k (x scaled in place), k = overflow_guard(x). When that overflows
// while every term is finite (only f16 can: elsewhere 2^g exceeds any row length), some partial
// sum reached the largest value M, so sum |x| >= M 2^g, and x is scaled by 2^-ceil(log2 n) more:
// no partial sum can overflow now, and the bits this costs the smallest entries total at most
// n^2 2^(emin - emax) u of sum |x| (1/32 u at n = 4096 in f16).
template <class Sums = PairwiseSums, class T>
T guarded_sum(std::vector<T>& x, long& k) {
  using std::isinf;
  k = overflow_guard(x);
  for (auto& v : x) v = scale_pow2(v, k);
  T s = Sums::sum(x.data(), x.size());
  if (!isinf(s) || isinf(max_abs(x))) return s;
  const long extra = static_cast<long>(std::ceil(std::log2(static_cast<double>(x.size()))));
  for (auto& v : x) v = scale_pow2(v, -extra);
  k -= extra;
  return Sums::sum(x.data(), x.size());
}

// In-place inclusive scan by recursive pairing: each output is a tree of at most
// 2 ceil(log2 n) applications of `op`, so errors grow like log n rather than n.
template <class T, class Op>
void tree_scan(std::vector<T>& v, const Op& op) {
  const size_t n = v.size();
  if (n <= 1) return;
  std::vector<T> z(n / 2);
  for (size_t j = 0; j < n / 2; ++j) z[j] = op(v[2 * j], v[2 * j + 1]);
  tree_scan(z, op);  // z[j] = v[0] op ... op v[2j + 1]
  for (size_t i = 1; i < n; ++i) v[i] = (i % 2 == 1) ? z[i / 2] : op(z[i / 2 - 1], v[i]);
}

// log(e^a + e^b) = max + log1p(e^-|a - b|): no overflow, no loss for a result near 0. The
// exponent is -|a - b| rather than lo - hi: the same value natively, but under CESTAC, when a and b
// agree within their noise (a computational zero apart), the comparison calls them equal, hi is
// a, and some samples of lo - hi are positive; with noise above 88 (bf16 values near 1e4 carry
// ulps of 64) e^(lo - hi) would overflow in those samples only.
template <class T>
T log_add_exp(const T& a, const T& b) {
  using std::exp;
  using std::fabs;
  using std::isinf;
  using std::log1p;
  const T hi = b > a ? b : a;
  if (isinf(hi)) return hi;  // +inf, or -inf when both are -inf (their difference is NaN)
  return hi + log1p(exp(-fabs(a - b)));
}

}  // namespace reduce_detail

// sum/cpu/stable: pairwise sum, prescaled by 2^-32 when the terms are near overflow. Sums: the
// summation policy (reduce.h), pairwise here.
template <class Sums = PairwiseSums>
struct SumStableWith {
  template <class S>
  using WithSums = SumStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using namespace reduce_detail;
    std::vector<T> x = a.x.at(0);
    long k = 0;
    const T s = guarded_sum<Sums>(x, k);
    return {scale_pow2(s, -k)};
  }
};
using SumStable = SumStableWith<>;

// mean/cpu/stable: the stable sum divided by n; unscaled last, so |mean| <= max|x| stays finite.
template <class Sums = PairwiseSums>
struct MeanStableWith {
  template <class S>
  using WithSums = MeanStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using namespace reduce_detail;
    std::vector<T> x = a.x.at(0);
    long k = 0;
    const T s = guarded_sum<Sums>(x, k) / T(static_cast<double>(x.size()));
    return {scale_pow2(s, -k)};
  }
};
using MeanStable = MeanStableWith<>;

// var/cpu/stable and std/cpu/stable: corrected two-pass algorithm (Chan, Golub & LeVeque 1983)
// on data scaled by a power of two into [1, 2): the mean m is taken around x_0 (exact shifts for
// mean-shifted rows), and its rounding error c = sum(x - m) / n is subtracted from each centred
// value before squaring, sum((x - m - c)^2) = sum((x - m)^2) - (sum(x - m))^2 / n, as layer_norm's
// corrected two-pass does. Not the equivalent s2 - square(s1) / n: under CESTAC s1 is a
// computational zero (m rounds up in some samples, down in others), square() drops it, and the
// result carries a bias n c^2 that no sample's spread shows (overclaimed digits in calibrate).
// The scaling keeps var of 1e20 (f32) and std of 1e-200 (f64) in range.
template <bool kStd, class Sums = PairwiseSums>
struct VarianceStable {
  template <class S>
  using WithSums = VarianceStable<kStd, S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using namespace reduce_detail;
    using std::sqrt;
    const std::vector<T>& x = a.x.at(0);
    const size_t n = x.size();
    const double correction = a.param("unbiased", params::kUnbiasedDefault);
    const T m = max_abs(x);
    if (m == T(0)) return {T(0)};
    const long k = pow2_exponent(m);
    std::vector<T> xs(n), d(n);
    for (size_t i = 0; i < n; ++i) xs[i] = scale_pow2(x[i], k);
    for (size_t i = 0; i < n; ++i) d[i] = xs[i] - xs[0];
    const T nn = T(static_cast<double>(n));
    const T mean = xs[0] + Sums::sum(d.data(), n) / nn;
    for (size_t i = 0; i < n; ++i) d[i] = xs[i] - mean;
    const T c = Sums::sum(d.data(), n) / nn;  // the mean's rounding error, to first order
    for (auto& v : d) v = square(v - c);
    const T v = Sums::sum(d.data(), n) / T(static_cast<double>(n) - correction);
    return {kStd ? scale_pow2(sqrt(v), -k) : scale_pow2(v, -2 * k)};
  }
};

// l2_norm/cpu/stable: sqrt of a pairwise sum of squares of x * 2^k, max|x| * 2^k in [1, 2)
// (LAPACK nrm2's scaling, by an exact power of two): no overflow for f32 |x| > 1.8e19, no
// underflow for tiny x.
template <class Sums = PairwiseSums>
struct L2NormStableWith {
  template <class S>
  using WithSums = L2NormStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using namespace reduce_detail;
    using std::sqrt;
    std::vector<T> x = a.x.at(0);
    const T m = max_abs(x);
    if (m == T(0)) return {T(0)};
    const long k = pow2_exponent(m);
    for (auto& v : x) v = square(scale_pow2(v, k));
    return {scale_pow2(sqrt(Sums::sum(x.data(), x.size())), -k)};
  }
};
using L2NormStable = L2NormStableWith<>;

// logsumexp/cpu/stable: m + log1p(sum_{i != argmax} e^(x_i - m)); log1p keeps a result near 0
// (one dominant logit near 0) accurate, where log(1 + t) would lose it.
template <class Sums = PairwiseSums>
struct LogSumExpStableWith {
  template <class S>
  using WithSums = LogSumExpStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::isinf;
    using std::log1p;
    const std::vector<T>& x = a.x.at(0);
    size_t k = 0;
    for (size_t i = 1; i < x.size(); ++i)
      if (x[i] > x[k]) k = i;
    const T m = x[k];
    if (isinf(m)) return {m};  // all -inf gives -inf; a +inf entry gives +inf
    std::vector<T> e;
    e.reserve(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      if (i != k) e.push_back(exp(x[i] - m));  // every exponent <= 0: no overflow
    return {m + log1p(Sums::sum(e.data(), e.size()))};
  }
};
using LogSumExpStable = LogSumExpStableWith<>;

// cumsum/cpu/stable: tree scan of +; from the first prefix that comes out non-finite on, the
// scan is redone prescaled like the sum. Prescaling every row would cost the small prefixes the
// bits of entries below 2^(emin + g) (f16: g = 7, every entry below 2^-7), errors no
// conditioning of those prefixes explains. An intermediate value that overflows makes every
// output from its position on non-finite and leaves the earlier ones exact as computed; the later
// ones sum more than 2^(emax - 1) in magnitude, against which the scaling's loss is negligible.
struct CumSumStable {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using namespace reduce_detail;
    using std::isfinite;
    const auto add = [](const T& p, const T& q) { return p + q; };
    std::vector<T> y = a.x.at(0);
    tree_scan(y, add);
    size_t first = 0;
    while (first < y.size() && isfinite(y[first])) ++first;
    if (first == y.size()) return y;
    std::vector<T> x = a.x.at(0);
    const long k = overflow_guard(x);
    for (auto& v : x) v = scale_pow2(v, k);
    tree_scan(x, add);
    for (size_t i = first; i < y.size(); ++i) y[i] = scale_pow2(x[i], -k);
    return y;
  }
};

// logcumsumexp/cpu/stable: tree scan of the stable log-add-exp.
struct LogCumSumExpStable {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    std::vector<T> x = a.x.at(0);
    reduce_detail::tree_scan(
        x, [](const T& p, const T& q) { return reduce_detail::log_add_exp(p, q); });
    return x;
  }
};

// logaddexp/cpu/stable: elementwise max + log1p(exp(-|a - b|)).
struct LogAddExpStable {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const std::vector<T>&x = a.x.at(0), &y = a.x.at(1);
    std::vector<T> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = reduce_detail::log_add_exp(x[i], y[i]);
    return out;
  }
};

}  // namespace stabfuzz::targets
