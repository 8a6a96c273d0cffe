// The vector exp of Stoch<double>'s four samples (detail::vexp4_parts): e^x as (hi + t) 2^k,
// for the caller to round hi + t like any addition. Included by stabfuzz/stoch_engine.h.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace stabfuzz::cestac::detail {

#if defined(__AVX2__) && defined(__FMA__)
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
__attribute__((always_inline)) inline Vexp4Parts vexp4_parts(__m256d x) {
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
__attribute__((always_inline)) inline __m256d vexp4(__m256d x) {
  const Vexp4Parts p = vexp4_parts(x);
  return _mm256_mul_pd(_mm256_add_pd(p.hi, p.t), p.scale);
}

#endif  // __AVX2__ && __FMA__

}  // namespace stabfuzz::cestac::detail
