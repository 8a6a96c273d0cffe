// The engine behind Stoch: random rounding, error-free transformations, digit statistics, SIMD
// kernels and the noinline slow paths that record instabilities. Included by stabfuzz/stoch.h.
#pragma once

#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "stabfuzz/cestac.h"
#include "stabfuzz/gpu/cestac_core.h"
#include "stabfuzz/lowp.h"

#define SF_ALWAYS_INLINE __attribute__((always_inline)) inline
// The slow paths record __builtin_return_address(0): the address inside the operator code where
// the inlined operation ran. Not "cold": hot/cold splitting drops the inline chain that names the
// operator line.
#define SF_SLOW_PATH __attribute__((noinline))

namespace stabfuzz::cestac {

// student_tau, digit_scale, zero_from_moments and digits_from_moments live in
// stabfuzz/gpu/cestac_core.h, shared with the device engine.

namespace detail {

template <class T>
using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;

template <class T>
constexpr int kMantBits = std::numeric_limits<T>::digits - 1;

// Biased exponent field of |x| (0 for zero and subnormals).
template <class T>
SF_ALWAYS_INLINE int exponent_field(T x) {
  return static_cast<int>(
      (std::bit_cast<Bits<T>>(x) >> kMantBits<T>)&(std::is_same_v<T, double> ? 0x7ff : 0xff));
}

// r = RN(x) with exact error x - r of sign e. `up` picks rounding toward +inf, else toward -inf:
// the result moves to r's neighbour on e's side when that is the chosen directed rounding.
// Branch-free (integer selects): the direction is random, so a branch would mispredict half the
// time. NaN or zero e never moves.
template <class T>
SF_ALWAYS_INLINE T random_round(T r, T e, uint32_t up) {
  using B = Bits<T>;
  constexpr B kSign = B{1} << (sizeof(B) * 8 - 1);
  const B rb = std::bit_cast<B>(r), eb = std::bit_cast<B>(e);
  // Infinite r never moves: every sample of an overflow agrees on inf, as in round to nearest.
  const bool move = (up ? (e > 0) : (e < 0)) &
                    ((rb & ~kSign) < std::bit_cast<B>(std::numeric_limits<T>::infinity()));
  const B same_sign = static_cast<B>(((rb ^ eb) & kSign) == 0);  // away from zero: +1 ulp
  B stepped = rb + same_sign + same_sign - 1;                    // else -1 ulp
  stepped = (r == 0) ? ((eb & kSign) | 1) : stepped;             // 0: smallest subnormal
  // Nor does a finite r step to inf: rounding up past the largest finite value would make one
  // sample overflow where round to nearest does not (softplus(DBL_MAX) is DBL_MAX, not inf).
  const bool stays_finite =
      (stepped & ~kSign) < std::bit_cast<B>(std::numeric_limits<T>::infinity());
  return std::bit_cast<T>((move && stays_finite) ? stepped : rb);
}

// A result whose exact side is unknown (libm's double functions, within ~1 ulp): kept with
// probability 1/2, else moved one ulp up or down at random. Its spread matches random rounding's.
// Results libm returns exactly at special points (0, +-1: exp(-huge), log(1), erf(huge),
// tanh(huge)) are kept: moving them would flip a sign or leave the function's range.
template <class T>
SF_ALWAYS_INLINE T random_perturb(T r, uint32_t bits2) {
  const T dir = (bits2 & 2u) ? T(1) : T(-1);
  const bool special = r == T(0) || r == T(1) || r == T(-1);
  return random_round(r, ((bits2 & 1u) && !special) ? dir : T(0), (bits2 & 2u) ? 1u : 0u);
}

// Cheap sufficient test that samples are NOT a computational zero: |s0| > 4.05 (max - min)
// implies sqrt(N)|mean| > tau sigma for N = 3 (and for every larger N); exact values pass it.
template <int N, class T>
SF_ALWAYS_INLINE bool clearly_nonzero(const T* s) {
  T mn = s[0], mx = s[0];
  for (int i = 1; i < N; ++i) {
    mn = s[i] < mn ? s[i] : mn;
    mx = s[i] > mx ? s[i] : mx;
  }
  return std::fabs(s[0]) > T(4.05) * (mx - mn);
}

template <class T>
SF_ALWAYS_INLINE T two_sum_err(T a, T b, T s) {
  const T bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

template <int N, class T>
SF_ALWAYS_INLINE bool all_finite(const T* s) {
  T acc = 0;
  for (int i = 0; i < N; ++i) acc += s[i] - s[i];  // NaN as soon as one sample is not finite
  return acc == 0;
}

template <int N, class T>
SF_ALWAYS_INLINE bool all_equal(const T* s) {
  bool eq = true;
  for (int i = 1; i < N; ++i) eq &= (s[i] == s[0]);
  return eq;
}

// computational_zero for samples whose squares leave the double range: scale by a power of two.
template <int N, class T>
bool computational_zero_scaled(const T* s) {
  long double m = 0;
  for (int i = 0; i < N; ++i) m = std::fmax(m, std::fabs(static_cast<long double>(s[i])));
  if (m == 0) return true;
  if (!std::isfinite(m)) return false;
  const long double scale = std::ldexp(1.0L, -std::ilogb(m));
  long double mean = 0;
  for (int i = 0; i < N; ++i) mean += s[i] * scale;
  mean /= N;
  long double ss = 0;
  for (int i = 0; i < N; ++i) ss += (s[i] * scale - mean) * (s[i] * scale - mean);
  return N * (N - 1) * mean * mean <= student_tau(N) * student_tau(N) * ss;
}

// Computational zero (CADNA): all samples are 0, or C <= 0, i.e. sqrt(N)|mean| <= tau * sigma.
template <int N, class T>
SF_ALWAYS_INLINE bool computational_zero(const T* s) {
  using W = std::conditional_t<std::is_same_v<T, float>, double, T>;
  W mean = 0;
  for (int i = 0; i < N; ++i) mean += static_cast<W>(s[i]);
  mean /= N;
  W ss = 0;
  for (int i = 0; i < N; ++i) {
    const W d = static_cast<W>(s[i]) - mean;
    ss += d * d;
  }
  constexpr W kTau2 = static_cast<W>(student_tau(N) * student_tau(N));
  // N mean^2 <= tau^2 ss / (N - 1); a tie of exact zeros (mean == 0, ss == 0) is a zero too.
  const W lhs = N * (N - 1) * mean * mean;
  const W rhs = kTau2 * ss;
  // Squares of |values| beyond ~1e+-150 over- or underflow in double: rescale (rare path).
  if (!(lhs <= W(1e300) && rhs <= W(1e300)) || (lhs < W(1e-280) && rhs < W(1e-280)))
    return computational_zero_scaled<N>(s);
  return lhs <= rhs;
}

// Number of exact significant decimal digits of the samples' mean: log10(|mean| / (kappa sigma)),
// capped at the format's precision; 0 for a computational zero; the full precision when all
// samples agree. kappa: detail::digit_scale (stabfuzz/gpu/cestac_core.h).
template <int N, class T>
double digits(const T* s, int precision = std::numeric_limits<T>::digits,
              double kappa = digit_scale(N)) {
  const double full = -std::log10(std::ldexp(1.0, -precision));
  bool any_nonfinite = false;
  for (int i = 0; i < N; ++i) any_nonfinite |= !std::isfinite(s[i]);
  if (any_nonfinite) return all_equal<N>(s) && !std::isnan(s[0]) ? full : 0.0;
  if (all_equal<N>(s)) return s[0] == 0 ? 0.0 : full;
  if (computational_zero<N>(s)) return 0.0;
  long double m = 0;
  for (int i = 0; i < N; ++i) m = std::fmax(m, std::fabs(static_cast<long double>(s[i])));
  const long double scale = std::ldexp(1.0L, -std::ilogb(m));  // squares stay in range
  long double mean = 0;
  for (int i = 0; i < N; ++i) mean += s[i] * scale;
  mean /= N;
  long double ss = 0;
  for (int i = 0; i < N; ++i) ss += (s[i] * scale - mean) * (s[i] * scale - mean);
  return digits_from_moments<long double>(N, mean, ss, kappa, full);
}

// ---- slow paths: reached only when an instability is possible ---------------------------------

// Where a NaN or Inf is born, and whether the samples disagree on it. `a`, `b`: the operands
// (nullptr when absent).
template <int N, class T>
void classify_nonfinite(const T* r, const T* a, const T* b, uintptr_t site) {
  bool div = false;
  for (int i = 1; i < N; ++i) {
    const bool fi = std::isfinite(r[i]), f0 = std::isfinite(r[0]);
    div |= (fi != f0) || (!fi && !(r[i] == r[0]) && !(std::isnan(r[i]) && std::isnan(r[0])));
  }
  if (div) record_at(Kind::nonfinite_divergence, site);
  bool ops_finite = true, ops_nan = false, res_inf = false, res_nan = false;
  for (int i = 0; i < N; ++i) {
    for (const T* op : {a, b}) {
      if (!op) continue;
      ops_finite &= std::isfinite(op[i]);
      ops_nan |= std::isnan(op[i]);
    }
    res_inf |= std::isinf(r[i]);
    res_nan |= std::isnan(r[i]);
  }
  if (ops_finite && res_inf) record_at(Kind::overflow, site);
  if (!ops_nan && res_nan) record_at(Kind::invalid_operation, site);
}

// The square of 10^digits without the logarithm: N (N - 1) mean^2 / (tau^2 ss), clamped to
// [1, 4^precision] (1 for a computational zero or non-finite samples, 4^precision when all samples
// agree). The samples are scaled by the power of two of their largest magnitude, built from its
// exponent bits (no libm call: this runs for every + or - with a large exponent drop), and the
// moments are taken around the first sample, exactly when the samples are within a factor 2
// (Sterbenz), as the shared code does (gpu/cestac_core.h, scaled_moments).
template <int N, class T>
SF_ALWAYS_INLINE double accuracy_ratio_sq(const T* s, int precision) {
  const double full2 = std::bit_cast<double>(static_cast<uint64_t>(1023 + 2 * precision) << 52);
  if (all_equal<N>(s)) return s[0] == 0 || !std::isfinite(s[0]) ? 1.0 : full2;
  double m = 0;
  for (int i = 0; i < N; ++i) {
    const double v = std::fabs(static_cast<double>(s[i]));
    m = v > m ? v : m;
  }
  if (!(m <= std::numeric_limits<double>::max())) return 1.0;
  const auto e = static_cast<int>(std::bit_cast<uint64_t>(m) >> 52);  // biased exponent of m
  // 2^(1023 - e), exact; subnormal m (e = 0) and e = 2046 fall outside the bit construction.
  const double scale = e >= 1 && e <= 2045
                           ? std::bit_cast<double>(static_cast<uint64_t>(2046 - e) << 52)
                           : std::ldexp(1.0, -std::ilogb(m));
  const double ref = static_cast<double>(s[0]) * scale;
  double md = 0;
  for (int i = 0; i < N; ++i) md += static_cast<double>(s[i]) * scale - ref;
  md *= 1.0 / N;  // a statistic: one rounding more does not matter, a division's latency does
  double ss = 0;
  for (int i = 0; i < N; ++i) {
    const double d = (static_cast<double>(s[i]) * scale - ref) - md;
    ss += d * d;
  }
  if (ss == 0) return full2;
  const double mean = ref + md;
  constexpr double kTau2 = student_tau(N) * student_tau(N);
  const double c2 = N * (N - 1) * mean * mean / (kTau2 * ss);
  return c2 < 1 ? 1.0 : (c2 > full2 ? full2 : c2);
}

// 10^digits without the logarithm: sqrt(N)|mean| / (tau sigma), clamped to [1, 2^precision].
template <int N, class T>
double accuracy_ratio(const T* s, int precision) {
  return std::sqrt(accuracy_ratio_sq<N>(s, precision));
}

// Cancellation: min(digits(a), digits(b)) - digits(r) >= k, compared as squared ratios (no log10
// or square root on a path that runs for every + with a large exponent drop).
template <int N, class T>
void check_sum_at(const T* a, const T* b, const T* r, int precision, uintptr_t site) {
  if (!all_finite<N>(r)) return classify_nonfinite<N>(r, a, b, site);
  if (all_equal<N>(r)) return;  // no noise in the result: nothing was lost
  double ten_2k = 1;
  for (int i = 0; i < hot.cancel_digits; ++i) ten_2k *= 100;
  // The result first: when it keeps nearly all the format's digits, no operand can have k more.
  const double rr = ten_2k * accuracy_ratio_sq<N>(r, precision);
  if (rr > std::bit_cast<double>(static_cast<uint64_t>(1023 + 2 * precision) << 52)) return;
  if (accuracy_ratio_sq<N>(a, precision) >= rr && accuracy_ratio_sq<N>(b, precision) >= rr)
    record_at(Kind::cancellation, site);
}

template <int N, class T>
SF_SLOW_PATH void check_sum(const T* a, const T* b, const T* r, int precision) {
  check_sum_at<N>(a, b, r, precision, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

template <int N, class T>
SF_SLOW_PATH void check_nonfinite(const T* r, const T* a, const T* b = nullptr) {
  classify_nonfinite<N>(r, a, b, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

SF_SLOW_PATH inline void record_here(Kind k) {
  record_at(k, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

// v with its sign flipped when `down` is set: -RU(-x) = RD(x), so a run in round toward +inf rounds
// a sample down by flipping the signs of one operand (x, /) or of both (+) and of the result.
template <class T>
SF_ALWAYS_INLINE T flip_if(T v, uint32_t down) {
  using B = Bits<T>;
  constexpr B kSign = B{1} << (sizeof(B) * 8 - 1);
  return std::bit_cast<T>(std::bit_cast<B>(v) ^ (down ? kSign : B{0}));
}

// Directed rounding sends an overflowing sample to inf (up) or to the largest finite value
// (down). CESTAC keeps round to nearest's answer for overflow instead: a result that overflows in
// round to nearest is inf in every sample, one that does not stays finite in every sample, so
// that samples never disagree on an overflow only because of the rounding direction.
// `op(i)` recomputes sample i in round to nearest; `finite_operands(i)` says whether its operands
// were all finite (an infinite operand makes an infinite result exact).
template <int L, class T, class Op, class Finite>
SF_SLOW_PATH void settle_overflow(T* r, Op op, Finite finite_operands) {
  NearestScope nearest;
  for (int i = 0; i < L; ++i) {
    if (!(std::fabs(r[i]) >= std::numeric_limits<T>::max()) || !finite_operands(i)) continue;
    const T n = op(i);  // rounded down, an overflow is the largest finite value: look at RN
    r[i] = std::isinf(n)
               ? n
               : (std::isinf(r[i]) ? std::copysign(std::numeric_limits<T>::max(), r[i]) : r[i]);
  }
}

// Whether a sample is NaN, infinite or the largest finite value (where directed rounding and
// round to nearest may disagree on overflow): the entry test of settle_overflow.
template <int L, class T>
SF_ALWAYS_INLINE bool any_at_overflow(const T* s) {
  bool any = false;
  for (int i = 0; i < L; ++i) any |= !(std::fabs(s[i]) < std::numeric_limits<T>::max());
  return any;
}

// The float nearest to v (ties to even) whatever the thread's rounding mode: constants of an
// operator are the same values in a CESTAC run (round toward +inf) as natively.
inline float float_nearest(double v) {
  const float f = static_cast<float>(v);
  const double g = f;
  if (g == v || !std::isfinite(v)) return f;
  const float other = std::nextafter(f, g > v ? -INFINITY : INFINITY);
  const double dg = std::fabs(g - v), dother = std::fabs(static_cast<double>(other) - v);
  if (dg != dother) return dg < dother ? f : other;
  return (std::bit_cast<uint32_t>(f) & 1u) == 0 ? f : other;
}

// ---- SIMD kernels: four lanes of float or double, every step one vector instruction -----------
template <class T>
struct Simd4 {
  using I = std::conditional_t<std::is_same_v<T, double>, int64_t, int32_t>;
  using V = T __attribute__((vector_size(4 * sizeof(T))));
  using M = I __attribute__((vector_size(4 * sizeof(T))));  // lane masks: -1 or 0
  static constexpr I kSign = std::numeric_limits<I>::min();
  static constexpr I kInfBits = std::is_same_v<T, double> ? I(0x7ff0000000000000LL) : I(0x7f800000);

  static SF_ALWAYS_INLINE V load(const T* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static SF_ALWAYS_INLINE void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  // Lane i is all ones when bit i of `bits` is set.
  static SF_ALWAYS_INLINE M lanes(uint32_t bits) {
    const M sel = {1, 2, 4, 8};
    const M b = {I(bits), I(bits), I(bits), I(bits)};
    return (b & sel) != 0;
  }
  // The lanes that round down under pattern `index` (< 8) of kPatterns, eight 4-bit patterns (bit i
  // of a pattern: lane i): the sign bit in those lanes. One load from a table of the eight masks.
  template <uint32_t kPatterns>
  static SF_ALWAYS_INLINE M pattern_lanes(uint32_t index) {
    struct Table {
      alignas(32) I m[8][4];
      constexpr Table() : m{} {
        for (int p = 0; p < 8; ++p)
          for (int i = 0; i < 4; ++i) m[p][i] = ((kPatterns >> (4 * p + i)) & 1) ? kSign : I(0);
      }
    };
    static constexpr Table kTable;
    return load_mask(kTable.m[index & 7u]);
  }
  static SF_ALWAYS_INLINE M load_mask(const I* p) {
    M v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static SF_ALWAYS_INLINE V flip(V v, M m) { return (V)((M)v ^ m); }
  static SF_ALWAYS_INLINE V abs(V v) { return (V)((M)v & ~kSign); }
  static SF_ALWAYS_INLINE V max(V a, V b) {
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_max_pd((__m256d)a, (__m256d)b);
    } else {
      return (V)_mm_max_ps((__m128)a, (__m128)b);
    }
  }
  // One bit per lane whose mask is set.
  static SF_ALWAYS_INLINE int movemask(M m) {
    if constexpr (std::is_same_v<T, double>) {
      return _mm256_movemask_pd((__m256d)m);
    } else {
      return _mm_movemask_ps((__m128)m);
    }
  }
  static SF_ALWAYS_INLINE bool all(M m) { return movemask(m) == 0xF; }
  // Every sample below the overflow threshold (false for inf, NaN and the largest finite value,
  // where directed rounding and round to nearest may disagree: see settle_overflow).
  static SF_ALWAYS_INLINE M below_overflow(V r) {
    constexpr T kMax = std::numeric_limits<T>::max();
    return abs(r) < V{kMax, kMax, kMax, kMax};
  }
  // Sufficient test that the samples are not a computational zero, with no horizontal step: every
  // sample within |s0| / 8.1 of s0 (then max - min <= 2 max|s_i - s0| < |s0| / 4.05, the bound of
  // detail::clearly_nonzero), s0 != 0.
  static SF_ALWAYS_INLINE bool clearly_nonzero(V v) {
    const V s0 = V{v[0], v[0], v[0], v[0]};
    return all(abs(v - s0) * T(8.1) < abs(s0));
  }
  static SF_ALWAYS_INLINE V fma(V a, V b, V c) {
#if defined(__FMA__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
    } else {
      return (V)_mm_fmadd_ps((__m128)a, (__m128)b, (__m128)c);
    }
#else
    V r;
    for (int i = 0; i < 4; ++i) r[i] = std::fma(a[i], b[i], c[i]);
    return r;
#endif
  }
  static SF_ALWAYS_INLINE V sqrt(V a) {
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_sqrt_pd((__m256d)a);
    } else {
      return (V)_mm_sqrt_ps((__m128)a);
    }
#else
    V r;
    for (int i = 0; i < 4; ++i) r[i] = std::sqrt(a[i]);
    return r;
#endif
  }
  // random_round on four lanes: x = RN(exact), e has the sign of exact - x, `up` the lanes
  // rounding toward +inf. Branch-free; infinite x never moves, finite x never steps to inf.
  static SF_ALWAYS_INLINE V random_round(V x, V e, M up) {
    const M rb = (M)x, eb = (M)e;
    M move = (up & (e > 0)) | (~up & (e < 0));
    move &= (rb & ~kSign) < kInfBits;
    const M same = (rb ^ eb) >= 0;
    M stepped = rb + ((same & 2) - 1);
    const M zero = x == 0;
    stepped = (zero & ((eb & kSign) | 1)) | (~zero & stepped);
    move &= (stepped & ~kSign) < kInfBits;  // no sample steps from finite to inf
    return (V)((move & stepped) | (~move & rb));
  }
};

// e^x of four doubles with |x| <= 708 as (hi + t) 2^k: x = k ln2 + r with |r| <= ln2/2
// (Cody-Waite, FMA), e^r = 1 + r + r^2 P(r) with P the Taylor polynomial of degree 11 of
// (e^r - 1 - r) / r^2 (truncation below 0.05 ulp), 1 + r kept as the exact pair hi + lo (exact in
// any rounding mode: 1 - hi is exact by Sterbenz and the error of 1 + r is representable), and
// t = lo + r^2 P. P by Estrin's scheme: four levels of independent FMAs instead of a chain of
// thirteen (12 ns against 20 ns of latency per call here). The caller rounds hi + t: Stoch's exp
// randomly, like any +, in the run's rounding mode (measured against MPFR on 1.6M arguments: the
// exact value lies within 0.61 ulp of the interval between the downward and upward roundings of
// that last addition); vexp4 in round to nearest (within one ulp: worst 0.76 ulp on |x| <= 0.35).
inline constexpr double kVexpLimit = 708.0;
struct Vexp4Parts {
  __m256d hi, t, scale;  // e^x ~ (hi + t) * scale, scale = 2^k exactly
};
SF_ALWAYS_INLINE Vexp4Parts vexp4_parts(__m256d x) {
  const __m256d log2e = _mm256_set1_pd(1.4426950408889634);
  const __m256d ln2_hi = _mm256_set1_pd(6.93147180369123816490e-01);  // 32 significant bits
  const __m256d ln2_lo = _mm256_set1_pd(1.90821492927058770002e-10);
  const __m256d k =
      _mm256_round_pd(_mm256_mul_pd(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(k, ln2_hi, x);  // exact: k ln2_hi has at most 42 bits
  r = _mm256_fnmadd_pd(k, ln2_lo, r);
  const auto c = [](double v) { return _mm256_set1_pd(v); };
  const __m256d r2 = _mm256_mul_pd(r, r), r4 = _mm256_mul_pd(r2, r2), r8 = _mm256_mul_pd(r4, r4);
  // P(r) = sum_{i < 12} r^i / (i + 2)!: pairs, then pairs of pairs with r^2, r^4, r^8.
  const __m256d p01 = _mm256_fmadd_pd(c(1.0 / 6), r, c(1.0 / 2));
  const __m256d p23 = _mm256_fmadd_pd(c(1.0 / 120), r, c(1.0 / 24));
  const __m256d p45 = _mm256_fmadd_pd(c(1.0 / 5040), r, c(1.0 / 720));
  const __m256d p67 = _mm256_fmadd_pd(c(1.0 / 362880), r, c(1.0 / 40320));
  const __m256d p89 = _mm256_fmadd_pd(c(1.0 / 39916800), r, c(1.0 / 3628800));
  const __m256d pab = _mm256_fmadd_pd(c(1.0 / 6227020800.0), r, c(1.0 / 479001600));
  const __m256d q0 = _mm256_fmadd_pd(p23, r2, p01);
  const __m256d q1 = _mm256_fmadd_pd(p67, r2, p45);
  const __m256d q2 = _mm256_fmadd_pd(pab, r2, p89);
  const __m256d poly = _mm256_fmadd_pd(q2, r8, _mm256_fmadd_pd(q1, r4, q0));
  const __m256d hi = _mm256_add_pd(c(1.0), r);
  const __m256d lo = _mm256_add_pd(_mm256_sub_pd(c(1.0), hi), r);
  // 2^k: k + 1.5 * 2^52 holds k in its low mantissa bits; add the bias and shift into place.
  const __m256d magic = _mm256_set1_pd(0x1.8p52);
  const __m256i ki =
      _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(k, magic)), _mm256_castpd_si256(magic));
  const __m256i bits = _mm256_slli_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(1023)), 52);
  return {hi, _mm256_fmadd_pd(r2, poly, lo), _mm256_castsi256_pd(bits)};
}
// e^x rounded in the current mode (round to nearest: within one ulp).
SF_ALWAYS_INLINE __m256d vexp4(__m256d x) {
  const Vexp4Parts p = vexp4_parts(x);
  return _mm256_mul_pd(_mm256_add_pd(p.hi, p.t), p.scale);
}

// Per-sample storage and precision of a Stoch over T: f16/bf16 samples are floats holding exact
// values of the format.
template <class T>
struct SampleTraits {
  using Sample = T;
  static constexpr bool kLow = false;
  static constexpr int kPrecision = std::numeric_limits<T>::digits;
};
template <const Format& F>
struct SampleTraits<LowFloat<F>> {
  using Sample = float;
  static constexpr bool kLow = true;
  static constexpr int kPrecision = F.p;
};

// x computed in double (exact for +, -, x of f16/bf16 values; 53 bits otherwise) rounded to the
// format: round to nearest, then to the other neighbour with probability 1/2 when the exact
// value lies on its side.
template <const Format& F>
SF_ALWAYS_INLINE float random_round_format(double x, uint32_t up) {
  double r = round_to_format(F, x);
  const double e = x - r;
  if (e != 0 && std::isfinite(r) && (up ? e > 0 : e < 0)) {
    const double n = format_neighbour(F, r, e);
    if (std::isfinite(n)) r = n;  // as for float and double: no sample steps from finite to inf
  }
  return static_cast<float>(r);
}

// The fast paths' tests of Stoch's +, x and /: true when nothing needs the slow path (no sample at
// overflow, no exponent drop that may be a cancellation, no operand that may be a computational
// zero; with detection off the cancellation ratio is 0 and only overflow is tested).
template <class T>
SF_ALWAYS_INLINE bool add_fast_ok(typename Simd4<T>::V va, typename Simd4<T>::V vb,
                                  typename Simd4<T>::V vr, const HotState& ts) {
  using S4 = Simd4<T>;
  const T ratio = static_cast<T>(ts.cancel_ratio);
  return S4::all(S4::below_overflow(vr) &
                 (S4::abs(vr) >= S4::max(S4::abs(va), S4::abs(vb)) * ratio));
}
template <class T>
SF_ALWAYS_INLINE bool mul_fast_ok(typename Simd4<T>::V va, typename Simd4<T>::V vb,
                                  typename Simd4<T>::V vr, const HotState& ts) {
  using S4 = Simd4<T>;
  return S4::all(S4::below_overflow(vr)) &&
         !(ts.detect && !S4::clearly_nonzero(va) && !S4::clearly_nonzero(vb));
}
template <class T>
SF_ALWAYS_INLINE bool div_fast_ok(typename Simd4<T>::V vb, typename Simd4<T>::V vr,
                                  const HotState& ts) {
  using S4 = Simd4<T>;
  return S4::all(S4::below_overflow(vr)) && !(ts.detect && !S4::clearly_nonzero(vb));
}

}  // namespace detail

}  // namespace stabfuzz::cestac
