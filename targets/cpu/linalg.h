// The linalg families' stable CPU references, each a template over the scalar type.
// dot, gemm, attention, cosine_similarity, pairwise_distance, adam: pairwise sums, scaled norms,
// max-shifted softmax, cancellation-free bias corrections.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::targets {

namespace linalg_detail {

// v^2, but a computational zero squares to an exact 0: CESTAC counts the product of two noisy
// zeros as an unstable multiplication (a self-validation failure), though a term at the noise
// level cannot move a sum of squares. Natively this is v * v.
template <class T>
T square(const T& v) {
  return v == T(0) ? T(0) : v * v;
}

// sum_i a[i sa] b[i sb]: n rounded products, then a pairwise sum. Error <= (8 + log2 n) u times
// sum |a_i b_i|.
template <class Sums = PairwiseSums, class T>
T pairwise_dot(const T* a, size_t sa, const T* b, size_t sb, size_t n, std::vector<T>& buf) {
  buf.resize(n);
  for (size_t i = 0; i < n; ++i) buf[i] = a[i * sa] * b[i * sb];
  return Sums::sum(buf.data(), n);
}

template <class T>
T max_abs(const T* x, size_t n) {
  using std::fabs;
  T m(0);
  for (size_t i = 0; i < n; ++i)
    if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

template <class T>
bool all_finite(const T* x, size_t stride, size_t n) {
  using std::isfinite;
  for (size_t i = 0; i < n; ++i)
    if (!isfinite(x[i * stride])) return false;
  return true;
}

// The exponent k with max|x_i| 2^k in [1, 2) (0 for a zero vector): x 2^k has entries below 2.
template <class T>
long unit_exponent(const T* x, size_t stride, size_t n) {
  using std::fabs;
  T m(0);
  for (size_t i = 0; i < n; ++i)
    if (fabs(x[i * stride]) > m) m = fabs(x[i * stride]);
  return m == T(0) ? 0 : reduce_detail::pow2_exponent(m);
}

// The magnitude below which an entry scaled by 2^k (or divided by a scale in [2^-k, 2^(1-k)))
// comes out within 16 quanta of the format's smallest subnormal: 2^(emin - p + 5 - k), 0 when that
// is below T's range. Randomly rounded under CESTAC, such an entry is a noisy zero, and two of them
// multiplied are an unstable multiplication (a self-validation failure); dropped, it costs at most
// 16 subnormal quanta, about what the rounding of the kept subnormal entries already costs.
// (Dropping everything below the normal range instead cost cosine_similarity f16 142 ULPs on a
// dot that cancels.) Compared with exact inputs, the test never branches on noise.
template <class T>
T underflow_cut(long k) {
  constexpr const Format& f = reduce_detail::FormatOf<T>::value;
  const long e = f.emin - f.p + 5 - k;
  return e < f.emin - f.p + 1 ? T(0)
                              : T(std::ldexp(1.0, static_cast<int>(std::min(e, long{f.emax}))));
}

// pairwise_dot of a 2^ka and b 2^kb, the exponents from unit_exponent: every product lies below 4
// and no partial sum of fewer than max/4 terms overflows. The true dot is the result times
// 2^-(ka + kb), exactly (the scalings are exact; entries that would underflow are dropped).
template <class Sums = PairwiseSums, class T>
T unit_dot(const T* a, size_t sa, long ka, const T* b, size_t sb, long kb, size_t n,
           std::vector<T>& buf) {
  using reduce_detail::scale_pow2;
  using std::fabs;
  const T cut_a = underflow_cut<T>(ka), cut_b = underflow_cut<T>(kb);
  buf.resize(n);
  for (size_t i = 0; i < n; ++i)
    buf[i] = fabs(a[i * sa]) < cut_a || fabs(b[i * sb]) < cut_b
                 ? T(0)
                 : scale_pow2(a[i * sa], ka) * scale_pow2(b[i * sb], kb);
  return Sums::sum(buf.data(), n);
}

// pairwise_dot, computed again as unit_dot when it is not finite though every entry is (a product
// or a partial sum overflowed, and inf - inf made it NaN): the result is then +-inf only when the
// dot itself overflows.
template <class Sums = PairwiseSums, class T>
T guarded_dot(const T* a, size_t sa, const T* b, size_t sb, size_t n, std::vector<T>& buf) {
  using std::isfinite;
  const T d = pairwise_dot<Sums>(a, sa, b, sb, n, buf);
  if (isfinite(d) || !all_finite(a, sa, n) || !all_finite(b, sb, n)) return d;
  const long ka = unit_exponent(a, sa, n), kb = unit_exponent(b, sb, n);
  return reduce_detail::scale_pow2(unit_dot<Sums>(a, sa, ka, b, sb, kb, n, buf), -(ka + kb));
}

inline size_t dim(const std::vector<int64_t>& shape, size_t k) {
  return static_cast<size_t>(shape.at(k));
}

}  // namespace linalg_detail

// Entry points that run f16 and bf16 inputs through the operator in f32 (params::opmath_dtype:
// PyTorch's opmath, flash attention's f32 accumulators) and round each output once to the dtype;
// f64 and f32 run as themselves. The inputs are exact in f32, so the oracle sees what ran.
template <class Op>
std::function<std::vector<double>(const Input&)> opmath_native() {
  return [](const Input& in) {
    if (params::opmath_dtype(in.dtype) == in.dtype) return op_native<Op>()(in);
    Input wide = in;
    wide.dtype = params::opmath_dtype(in.dtype);
    std::vector<double> y = op_native<Op>()(wide);
    for (auto& v : y) v = round_to(in.dtype, v);
    return y;
  };
}
// CESTAC runs Stoch<float> likewise; its digits are then judged against the dtype's.
template <class Op>
std::function<CestacOutput(const Input&, const CestacRequest&)> opmath_cestac() {
  return [](const Input& in, const CestacRequest& req) {
    if (params::opmath_dtype(in.dtype) == in.dtype) return op_cestac<Op>()(in, req);
    Input wide = in;
    wide.dtype = params::opmath_dtype(in.dtype);
    return op_cestac<Op>()(wide, req);
  };
}
// opmath_native and opmath_cestac as one type (stabfuzz/op.h PlainAdapter's twin).
struct OpmathAdapter {
  template <class Op>
  static auto native() {
    return opmath_native<Op>();
  }
  template <class Op>
  static auto cestac() {
    return opmath_cestac<Op>();
  }
};

// dot/cpu/stable: y = sum a_i b_i, pairwise.
template <class Sums = PairwiseSums>
struct DotStableWith {
  template <class S>
  using WithSums = DotStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    std::vector<T> buf;
    return {
        linalg_detail::guarded_dot<Sums>(a.x[0].data(), 1, a.x[1].data(), 1, a.x[0].size(), buf)};
  }
};
using DotStable = DotStableWith<>;

// gemm/cpu/stable: every c_ij a pairwise dot product over k (a blocked kernel errs alike).
template <class Sums = PairwiseSums>
struct GemmStableWith {
  template <class S>
  using WithSums = GemmStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using linalg_detail::dim;
    const size_t m = dim(a.shape(0), 0), k = dim(a.shape(0), 1), n = dim(a.shape(1), 1);
    std::vector<T> c(m * n), buf;
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j)
        c[i * n + j] = linalg_detail::guarded_dot<Sums>(a.x[0].data() + i * k, 1, a.x[1].data() + j,
                                                        n, k, buf);
    return c;
  }
};
using GemmStable = GemmStableWith<>;

// attention/cpu/stable: scores in T (pairwise dots times scale), max-shifted softmax, weighted sum
// with pairwise sums, one division by the normalizer per output. Where a score overflows (or a
// product inside it does: inf - inf), the row's scores are taken in units of 2^-(kq + kk) instead
// (unit_dot, finite), so that s_l - s_max = (t_l - t_max) 2^-(kq + kk) is -inf at worst and its
// exp 0, never NaN; likewise a weighted sum of values near the overflow threshold is formed on
// v 2^kv and scaled back after the division by the normalizer.
template <class Sums = PairwiseSums>
struct AttentionStableWith {
  template <class S>
  using WithSums = AttentionStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using linalg_detail::all_finite;
    using linalg_detail::dim;
    using linalg_detail::unit_exponent;
    using reduce_detail::scale_pow2;
    using std::exp;
    using std::isfinite;
    const size_t s = dim(a.shape(0), 0), d = dim(a.shape(0), 1), t = dim(a.shape(1), 0);
    const size_t dv = dim(a.shape(2), 1);
    const auto prm = params::attention_params(*a.input, static_cast<double>(d));
    const T scale = T(prm.scale);
    const T* q = a.x[0].data();
    const T* k = a.x[1].data();
    const T* v = a.x[2].data();
    std::vector<T> o(s * dv), e(t), w(t), buf;
    for (size_t i = 0; i < s; ++i) {
      const size_t tl = prm.causal ? i + 1 : t;
      bool finite = true;
      for (size_t l = 0; l < tl; ++l) {
        e[l] = linalg_detail::pairwise_dot<Sums>(q + i * d, 1, k + l * d, 1, d, buf) * scale;
        finite = finite && isfinite(e[l]);
      }
      long ke = 0;  // the scores are e[l] 2^-ke
      if (!finite && all_finite(q + i * d, 1, d) && all_finite(k, 1, tl * d)) {
        const long kq = unit_exponent(q + i * d, 1, d), kk = unit_exponent(k, 1, tl * d);
        for (size_t l = 0; l < tl; ++l)
          e[l] = linalg_detail::unit_dot<Sums>(q + i * d, 1, kq, k + l * d, 1, kk, d, buf) * scale;
        ke = kq + kk;
      }
      T m = e[0];
      for (size_t l = 1; l < tl; ++l)
        if (e[l] > m) m = e[l];
      for (size_t l = 0; l < tl; ++l)  // exponents <= 0: no overflow
        e[l] = exp(ke == 0 ? e[l] - m : scale_pow2(e[l] - m, -ke));
      const T z = Sums::sum(e.data(), tl);  // z >= 1
      for (size_t j = 0; j < dv; ++j) {
        for (size_t l = 0; l < tl; ++l) w[l] = e[l] * v[l * dv + j];
        o[i * dv + j] = Sums::sum(w.data(), tl) / z;
        if (isfinite(o[i * dv + j]) || !all_finite(v + j, dv, tl)) continue;
        const long kv = unit_exponent(v + j, dv, tl);  // sum e_l v_l overflowed: on v 2^kv
        for (size_t l = 0; l < tl; ++l) w[l] = e[l] * scale_pow2(v[l * dv + j], kv);
        o[i * dv + j] = scale_pow2(Sums::sum(w.data(), tl) / z, -kv);
      }
    }
    return o;
  }
};
using AttentionStable = AttentionStableWith<>;

// cosine_similarity/cpu/stable: both rows scaled by their largest magnitude (no overflow of the
// norms or their product, no underflow of subnormal rows), then y = c rho with c = a^.b^ /
// (|a^| |b^|) and rho = min(1, |a| |b| / eps) = hi ((lo / eps) (|a^| |b^|)), where hi >= lo are
// the two scales. Below the kink rho < 1 and lo^2 < eps: lo < 1 is prescaled by 2^54 (exact, and
// normal even from the smallest subnormal double), so no intermediate underflows; a product that
// overflows means rho >= 1 anyway (for eps >= 2^-147).
template <class Sums = PairwiseSums>
struct CosineSimilarityStableWith {
  template <class S>
  using WithSums = CosineSimilarityStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using linalg_detail::max_abs;
    using std::sqrt;
    const size_t n = a.x[0].size();
    const T* x = a.x[0].data();
    const T* y = a.x[1].data();
    const T sa = max_abs(x, n), sb = max_abs(y, n);
    if (sa == T(0) || sb == T(0)) return {T(0)};  // a zero row: y = 0 (PyTorch: 0 / eps)
    std::vector<T> hx(n), hy(n), buf(n);
    using std::fabs;  // entries whose quotient would underflow are dropped (underflow_cut)
    const T cut_a = linalg_detail::underflow_cut<T>(reduce_detail::pow2_exponent(sa));
    const T cut_b = linalg_detail::underflow_cut<T>(reduce_detail::pow2_exponent(sb));
    for (size_t i = 0; i < n; ++i) {
      hx[i] = fabs(x[i]) < cut_a ? T(0) : x[i] / sa;
      hy[i] = fabs(y[i]) < cut_b ? T(0) : y[i] / sb;
    }
    for (size_t i = 0; i < n; ++i) buf[i] = hx[i] * hy[i];
    const T dot = Sums::sum(buf.data(), n);
    for (size_t i = 0; i < n; ++i) buf[i] = linalg_detail::square(hx[i]);
    const T na = sqrt(Sums::sum(buf.data(), n));  // >= 1: the largest entry is exactly +-1
    for (size_t i = 0; i < n; ++i) buf[i] = linalg_detail::square(hy[i]);
    const T nb = sqrt(Sums::sum(buf.data(), n));
    const T eps = T(params::cosine_eps(*a.input));
    const T hi = sa > sb ? sa : sb, lo = sa > sb ? sb : sa;
    const T nn = na * nb;
    const T c = dot / nn;
    if (eps == T(0)) return {c};  // f16 holds eps = 1e-8 as 0: no kink
    T rho;
    if (a.input->dtype == DType::f16) {
      // f16 spans 2^-24..2^16: 2^54 overflows, and lo / eps can too while rho < 1. rho =
      // ((hi (lo / r)) / r) nn with r = sqrt(eps), and the two tests that decide rho >= 1 come
      // before any quotient that could overflow: an intermediate that rounds to inf in some
      // samples and to 65504 in others would otherwise make CESTAC report a divergence in a
      // value the result does not use (rho >= 1 gives c).
      const T r = sqrt(eps);
      if (lo >= r) return {c};      // rho >= nn >= 1
      const T t = hi * (lo / r);    // lo / r < 1: no overflow
      if (t >= r / nn) return {c};  // rho >= 1
      rho = (t / r) * nn;           // < 1
    } else {
      const T big = T(0x1p54);
      const bool small = lo < T(1);
      rho = hi * (((small ? lo * big : lo) / eps) * nn);
      if (small) rho = rho / big;
    }
    return {rho >= T(1) ? c : c * rho};
  }
};
using CosineSimilarityStable = CosineSimilarityStableWith<>;

// pairwise_distance/cpu/stable: d_i = (a_i - b_i) + eps as PyTorch forms it, then the scaled norm
// s sqrt(sum (d_i / s)^2), s = max |d_i|: no overflow or underflow of the squares.
template <class Sums = PairwiseSums>
struct PairwiseDistanceStableWith {
  template <class S>
  using WithSums = PairwiseDistanceStableWith<S>;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    const size_t n = a.x[0].size();
    const T eps = T(params::pairwise_eps(*a.input));
    std::vector<T> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = (a.x[0][i] - a.x[1][i]) + eps;
    const T s = linalg_detail::max_abs(d.data(), n);
    if (s == T(0)) return {T(0)};
    for (size_t i = 0; i < n; ++i) d[i] = linalg_detail::square(d[i] / s);
    return {s * sqrt(Sums::sum(d.data(), n))};
  }
};
using PairwiseDistanceStable = PairwiseDistanceStableWith<>;

// adam/cpu/stable: one step of PyTorch's Adam, output p'. The bias corrections 1 - beta^t are
// formed as -expm1(t log1p(-(1 - beta))) (1 - beta as the dtype holds it): 1 - pow(beta, t)
// would lose log10(1 / (1 - beta^t)) digits to cancellation for small t and beta near 1.
struct AdamStable {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::expm1;
    using std::fabs;
    using std::isinf;
    using std::log1p;
    using std::sqrt;
    const auto prm = params::adam_params(*a.input);
    const T lr = T(prm.lr), eps = T(prm.eps), t = T(prm.step);
    const T c1 = T(1 - prm.beta1), c2 = T(1 - prm.beta2);  // exact: the dtype's 1 - beta
    const T bc1 = prm.beta1 == 0 ? T(1) : -expm1(t * log1p(-c1));
    const T bc2 = prm.beta2 == 0 ? T(1) : -expm1(t * log1p(-c2));
    const auto& p = a.x[0];
    const auto& g = a.x[1];
    const auto& m = a.x[2];
    const auto& v = a.x[3];
    // A gradient and first moment below 2^(emin / 2): (1 - beta1) g leaves the normal range and
    // loses relative precision that lr / eps (1e5 by default) carries into a normal p' (the fuzz
    // engine: 4.5e-10 relative for g = 2^-1038 in f64). The first moment is then formed on g, m
    // scaled by 2^k and the update scaled back at the end, rounded once; where v is as small, the
    // second moment too, on g 2^kv and v 2^2kv with eps 2^kv (sqrt(v / bc2) + eps scales by 2^kv).
    // Scalings are exact and the inputs exact, so the tests never branch on noise.
    using Fmt = reduce_detail::FormatOf<T>;
    const T tiny = T(std::ldexp(1.0, Fmt::value.emin / 2));
    std::vector<T> out(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      const T ag = fabs(g[i]), am = fabs(m[i]);
      long k = 0, kv = 0;
      if (ag < tiny && am < tiny && (ag > T(0) || am > T(0))) {
        k = std::min<long>(reduce_detail::pow2_exponent(ag > am ? ag : am), Fmt::value.emax);
        if (v[i] < tiny * tiny)
          kv = v[i] > T(0) ? std::min(k, reduce_detail::pow2_exponent(v[i]) / 2) : k;
      }
      // Unscaled elements (k = 0, nearly all) take the plain path: no extra operations.
      const auto scaled = [](const T& x, long e) {
        return e == 0 ? x : reduce_detail::scale_pow2(x, e);
      };
      const T gk = scaled(g[i], k), mk = scaled(m[i], k);
      const T gv = scaled(g[i], kv), vv = scaled(v[i], 2 * kv);
      // m + c (g - m) (PyTorch's lerp): beta itself need not be representable in T.
      const T mi = mk + c1 * (gk - mk);
      const T vi = vv + c2 * (gv * gv - vv);
      // v / bc2 overflows where v is near the top of the range and bc2 < 1 (v = 2^1021, step
      // 56: a campaign found p' = 0 for -1.4e-157): then sqrt(v) / sqrt(bc2), PyTorch's form.
      const T q = vi / bc2;
      const T denom = (isinf(q) ? sqrt(vi) / sqrt(bc2) : sqrt(q)) + scaled(eps, kv);
      out[i] = p[i] - scaled(lr * (mi / bc1) / denom, kv - k);
    }
    return out;
  }
};

}  // namespace stabfuzz::targets
