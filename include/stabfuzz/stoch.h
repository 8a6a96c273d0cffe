// Stoch<T, N, R>: the CESTAC stochastic scalar. N samples of T (four lanes for N = 3), each
// randomly rounded at every operation; their spread gives the number of exact significant digits.
//
// Rounding R (cestac_core.h): by default stochastic rounding to nearness. The run computes in round
// to nearest; each operation's exact error (Fast2Sum or 2Sum, an fma for x, /, sqrt) decides, per
// lane, whether the sample moves to the exact value's other neighbour, with probability |error| /
// gap, so every sample's expected value is the exact result. For float and double one operation is
// a few vector instructions over all samples. An inexact operation never leaves every lane equal
// (uncollapse). Rounding::updown is CADNA's up-or-down rounding (two lanes each way), in a run
// switched to round toward +inf (a Run whose Config says updown), where each sample is rounded up
// or, through -RU(-x) = RD(x) by flipping signs, down: cheaper, biased on repeated rounded-off
// fractions, kept to measure against. libm, BLAS and MPFR always run in round to nearest
// (NearestScope). f16/bf16 samples are computed in double and rounded to the format by a
// rounding-mode-independent routine. Elementary functions of float/f16/bf16 samples are evaluated
// in double, which decides the side of the exact value; libm's double results are perturbed at
// random. Build with -ffp-contract=off and never -ffast-math.
//
// Operator code needs no change beyond being a template over its scalar type: operations are
// hidden friends found by ADL, so `using std::exp; exp(x)` works for float, double and Stoch.
#pragma once

#include "stabfuzz/stoch_engine.h"

namespace stabfuzz::cestac {

namespace detail {
template <class S>
struct NearnessOps;  // stabfuzz/stoch_nearness.h
template <class S>
struct SlowPaths;  // stabfuzz/stoch_slow_paths.h
}  // namespace detail

template <class T, int N = 3, Rounding R = Rounding::nearness>
class Stoch {
  friend struct detail::NearnessOps<Stoch>;
  friend struct detail::SlowPaths<Stoch>;
  using Nearness = detail::NearnessOps<Stoch>;
  using Slow = detail::SlowPaths<Stoch>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || is_low_precision_v<T>,
                "Stoch<float|double|Half|BFloat16, N>");
  static_assert(N >= 2 && N <= 16, "2 <= N <= 16 samples");
  using Traits = detail::SampleTraits<T>;
  static constexpr bool kLow = Traits::kLow;
  static constexpr bool kSimd = !kLow && (N == 3 || N == 4);  // four lanes of float or double
  static constexpr bool kNearness = R == Rounding::nearness;

 public:
  using value_type = T;
  using Sample = typename Traits::Sample;
  static constexpr int kSamples = N;
  static constexpr int kPrecision = Traits::kPrecision;
  static constexpr Rounding kRounding = R;

  // Samples live in kLanes >= N slots (3 -> 4) so that each operation is one SIMD instruction
  // over a full vector; the lane past N is one more random sample, read by the spread.
  static constexpr int kLanes = N == 3 ? 4 : N;
  // The lanes the spread and the non-finite tests read: all of them (for N = 3 the fourth lane is
  // a real, independently rounded sample: it costs nothing and sharpens every test).
  static constexpr int kTested = kLanes;
  // The samples the mean averages: the first N (cestac_core.h says why not the fourth lane too).
  // The mean, the digits, the computational-zero test, the comparisons and the cancellation rule
  // share this mean and the spread of kTested lanes: one definition.
  static constexpr int kMean = N;
  alignas(kLanes * sizeof(Sample) <= 32 ? kLanes * sizeof(Sample) : 32) Sample s[kLanes];

  SF_ALWAYS_INLINE Stoch() : s{} {}
  // An exact value: every sample equal (constants and inputs carry no rounding noise).
  SF_ALWAYS_INLINE Stoch(T v) {  // NOLINT(google-explicit-constructor): numeric literal use
    for (int i = 0; i < kLanes; ++i) s[i] = static_cast<Sample>(v);
  }
  // Other arithmetic types convert to the nearest T, also inside an updown run (round toward +inf).
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, T>, int> = 0>
  SF_ALWAYS_INLINE Stoch(U v) : Stoch(nearest(v)) {}  // NOLINT

  Sample sample(int i) const { return s[i]; }
  double mean() const {
    long double m = 0;
    for (int i = 0; i < kMean; ++i) m += s[i];
    return static_cast<double>(m / kMean);
  }
  // Exact significant digits of the mean, estimated from every computed sample (the vector's
  // fourth lane for N = 3 is a real, independently rounded sample: it costs nothing and sharpens
  // the estimate). See detail::digit_scale for the estimator.
  double digits() const {
    return detail::digits<kLanes, kMean>(s, kPrecision, detail::digit_scale(kLanes));
  }
  bool computational_zero() const {
    return detail::all_equal<kTested>(s) ? s[0] == 0
                                         : detail::computational_zero<kTested, kMean>(s);
  }

  // ---- arithmetic ------------------------------------------------------------------------------
  friend SF_ALWAYS_INLINE Stoch operator+(const Stoch& a, const Stoch& b) {
    if constexpr (kNearness) return Nearness::add(a, b);
    auto& ts = hot_state();
    const uint32_t pattern = kSimd ? take_pattern_index(ts) : 0;
    const uint32_t bits = kSimd ? 0 : rounding_bits(ts);
    Stoch r;
    if constexpr (kLow) {
      for (int i = 0; i < kLanes; ++i)
        r.s[i] = detail::random_round_format<T::kFormat>(double(a.s[i]) + double(b.s[i]),
                                                         (bits >> i) & 1u);
    } else if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto m = S4::template pattern_lanes<kBalancedPatterns>(pattern);
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto vr = S4::flip(S4::flip(va, m) + S4::flip(vb, m), m);
      S4::store(r.s, vr);
      // One test for the rare cases: a sample at overflow, an exponent drop that may be a
      // cancellation (never with detection off: the ratio is 0), random bits to refill.
      if (!detail::add_fast_ok<T>(va, vb, vr, ts) || pattern_word_low(ts)) [[unlikely]]
        S4::store(r.s, Slow::add(va, vb, vr));
      return r;
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const uint32_t d = (bits >> i) & 1u;
        r.s[i] = detail::flip_if(detail::flip_if(a.s[i], d) + detail::flip_if(b.s[i], d), d);
      }
    }
    if constexpr (!kLow) {
      if (detail::any_at_overflow<kLanes>(r.s)) [[unlikely]]
        detail::settle_overflow<kLanes>(
            r.s, [&](int i) { return a.s[i] + b.s[i]; },
            [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    }
    if (ts.detect) check_add_fast(a, b, r, ts.cancel_bits);
    return r;
  }
  friend SF_ALWAYS_INLINE Stoch operator-(const Stoch& a) {
    Stoch r;
    for (int i = 0; i < kLanes; ++i) r.s[i] = -a.s[i];
    return r;
  }
  friend SF_ALWAYS_INLINE Stoch operator-(const Stoch& a, const Stoch& b) { return a + (-b); }

  friend SF_ALWAYS_INLINE Stoch operator*(const Stoch& a, const Stoch& b) {
    if constexpr (kNearness) return Nearness::mul(a, b);
    auto& ts = hot_state();
    const uint32_t pattern = kSimd ? take_pattern_index(ts) : 0;
    const uint32_t bits = kSimd ? 0 : rounding_bits(ts);
    Stoch r;
    if constexpr (kLow) {
      bool flushed = false;
      for (int i = 0; i < kLanes; ++i) {
        const double x = double(a.s[i]) * double(b.s[i]);
        r.s[i] = detail::random_round_format<T::kFormat>(x, (bits >> i) & 1u);
        flushed |= (r.s[i] == 0) & (x != 0);
      }
      if (ts.detect && flushed) detail::record_here(Kind::underflow);
    } else if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto m = S4::template pattern_lanes<kBalancedPatterns>(pattern);
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto vr = S4::flip(S4::flip(va, m) * vb, m);
      S4::store(r.s, vr);
      if (!detail::mul_fast_ok<T>(va, vb, vr, ts) || pattern_word_low(ts)) [[unlikely]]
        S4::store(r.s, Slow::mul(va, vb, vr));
      return r;
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const uint32_t d = (bits >> i) & 1u;
        r.s[i] = detail::flip_if(detail::flip_if(a.s[i], d) * b.s[i], d);
      }
    }
    if constexpr (!kLow) {
      if (detail::any_at_overflow<kLanes>(r.s)) [[unlikely]]
        detail::settle_overflow<kLanes>(
            r.s, [&](int i) { return a.s[i] * b.s[i]; },
            [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    }
    if (ts.detect) {
      // Both factors computational zeros and both noise: a factor that is exactly 0 in every
      // sample makes the product exactly 0 (0 x noise is exact).
      if (a.zero_fast() && b.zero_fast() && !detail::all_equal<kTested>(a.s) &&
          !detail::all_equal<kTested>(b.s))
        detail::record_here(Kind::unstable_multiplication);
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s, b.s);
    }
    return r;
  }

  friend SF_ALWAYS_INLINE Stoch operator/(const Stoch& a, const Stoch& b) {
    if constexpr (kNearness) return Nearness::div(a, b);
    auto& ts = hot_state();
    const uint32_t pattern = kSimd ? take_pattern_index(ts) : 0;
    const uint32_t bits = kSimd ? 0 : rounding_bits(ts);
    Stoch r;
    if constexpr (kLow) {
      bool flushed = false;
      for (int i = 0; i < kLanes; ++i) {
        const double x = double(a.s[i]) / double(b.s[i]);
        r.s[i] = detail::random_round_format<T::kFormat>(x, (bits >> i) & 1u);
        flushed |= (r.s[i] == 0) & (x != 0);
      }
      if (ts.detect && flushed) detail::record_here(Kind::underflow);
    } else if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto m = S4::template pattern_lanes<kBalancedPatterns>(pattern);
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto vr = S4::flip(S4::flip(va, m) / vb, m);
      S4::store(r.s, vr);
      if (!detail::div_fast_ok<T>(vb, vr, ts) || pattern_word_low(ts)) [[unlikely]]
        S4::store(r.s, Slow::div(va, vb, vr));
      return r;
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const uint32_t d = (bits >> i) & 1u;
        r.s[i] = detail::flip_if(detail::flip_if(a.s[i], d) / b.s[i], d);
      }
    }
    if constexpr (!kLow) {
      if (detail::any_at_overflow<kLanes>(r.s)) [[unlikely]]
        detail::settle_overflow<kLanes>(
            r.s, [&](int i) { return a.s[i] / b.s[i]; },
            [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    }
    if (ts.detect) {
      if (b.zero_fast()) detail::record_here(Kind::unstable_division);
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s, b.s);
    }
    return r;
  }

  SF_ALWAYS_INLINE Stoch& operator+=(const Stoch& b) { return *this = *this + b; }
  SF_ALWAYS_INLINE Stoch& operator-=(const Stoch& b) { return *this = *this - b; }
  SF_ALWAYS_INLINE Stoch& operator*=(const Stoch& b) { return *this = *this * b; }
  SF_ALWAYS_INLINE Stoch& operator/=(const Stoch& b) { return *this = *this / b; }

  // ---- elementary functions ---------------------------------------------------------------------
  friend SF_ALWAYS_INLINE Stoch sqrt(const Stoch& a) {
    if constexpr (kNearness) return Nearness::sqrt(a);
    auto& ts = hot_state();
    const uint32_t bits = rounding_bits(ts);
    Stoch r;
    if constexpr (kLow) {
      for (int i = 0; i < kLanes; ++i)
        r.s[i] =
            detail::random_round_format<T::kFormat>(std::sqrt(double(a.s[i])), (bits >> i) & 1u);
    } else if constexpr (kSimd) {
      // RU(sqrt a); the lanes rounding down step to the predecessor when the root is inexact
      // (a - q^2 < 0; its sign is exact in any rounding mode).
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s);
      const auto q = S4::sqrt(va);
      const auto down = S4::lanes(bits) & (S4::fma(-q, q, va) < 0);
      S4::store(r.s, (typename S4::V)((typename S4::M)q + down));  // bits - 1: one ulp toward 0
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const T q = std::sqrt(a.s[i]);
        const bool down = ((bits >> i) & 1u) && std::fma(-q, q, a.s[i]) < 0;
        r.s[i] = down ? std::nextafter(q, T(0)) : q;
      }
    }
    if (ts.detect) {
      if (a.noisy_zero()) detail::record_here(Kind::unstable_function);
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s);
    }
    return r;
  }

#define SF_STOCH_ELEMENTARY(fn, zero_is_unstable) SF_STOCH_LIBM(fn, fn, zero_is_unstable)
#define SF_STOCH_LIBM(name, fn, zero_is_unstable)                                             \
  friend SF_ALWAYS_INLINE Stoch name(const Stoch& a) {                                        \
    auto& ts = hot_state();                                                                   \
    const uint32_t bits = kNearness ? 0u : random_bits(ts, 2 * kLanes);                       \
    Stoch r;                                                                                  \
    NearestScope nearest; /* libm runs in round to nearest */                                 \
    if constexpr (kNearness) {                                                                \
      r = Nearness::libm(a, [](Wide x) { return std::fn(x); });                               \
    } else if (detail::all_equal<kLanes>(a.s)) { /* exact argument: evaluate once */          \
      const Wide w = std::fn(widen(a.s[0]));                                                  \
      for (int i = 0; i < kLanes; ++i) r.s[i] = round_wide(w, (bits >> (2 * i)) & 3u);        \
    } else {                                                                                  \
      for (int i = 0; i < kLanes; ++i)                                                        \
        r.s[i] = round_wide(std::fn(widen(a.s[i])), (bits >> (2 * i)) & 3u);                  \
    }                                                                                         \
    if (ts.detect) {                                                                          \
      if ((zero_is_unstable) && a.noisy_zero()) detail::record_here(Kind::unstable_function); \
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s);      \
    }                                                                                         \
    return r;                                                                                 \
  }
  // Elementary functions of float, f16 and bf16 samples are evaluated in double, whose result
  // decides the exact value's side; for double samples, libm's result is perturbed at random
  // (random_perturb): x87 long double would decide the side but costs ~100 ns per call here.
  // exp: four samples in one vector pass (detail::vexp4_parts) when every argument is in its
  // range, evaluated in the run's rounding mode with no mode switch. For double samples its last
  // addition is randomly rounded with the balanced pattern, as a + (the exact value lies within
  // 0.61 ulp of those two roundings); for float samples the double result (within 1.6 double
  // ulps in round toward +inf) is rounded to float at random on the side its error shows.
  // (A NearestScope here would not help: the compiler moves the arithmetic across the MXCSR
  // writes, which is how an earlier version evaluated its "round to nearest" polynomial in round
  // toward +inf.)
  friend SF_ALWAYS_INLINE Stoch exp(const Stoch& a) {
#if defined(__AVX2__) && defined(__FMA__)
    if constexpr (kLanes == 4 && !kLow) {
      __m256d x;
      if constexpr (std::is_same_v<T, double>) {
        x = _mm256_loadu_pd(a.s);
      } else {
        x = _mm256_cvtps_pd(_mm_loadu_ps(a.s));
      }
      const __m256d ax = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
      const int in_range =
          _mm256_movemask_pd(_mm256_cmp_pd(ax, _mm256_set1_pd(detail::kVexpLimit), _CMP_LE_OQ));
      if (in_range == 0xF) [[likely]] {  // exact arguments too: one pass beats one libm call
        auto& ts = hot_state();
        Stoch r;
        const detail::Vexp4Parts p = detail::vexp4_parts(x);
        if constexpr (kNearness && std::is_same_v<T, double>) {
          // hi + t rounded stochastically (2Sum), then scaled by 2^k (exact above 2^-1022).
          using S4 = detail::Simd4<double>;
          const auto hi = (typename S4::V)p.hi, t = (typename S4::V)p.t;
          const auto sum = hi + t, bb = sum - hi;
          const auto e = (hi - (sum - bb)) + (t - bb);
          const auto vr = Nearness::round4(ts, sum, e);
          S4::store(r.s, vr * (typename S4::V)p.scale);
        } else if constexpr (kNearness) {
          // e^x in double, rounded to float to nearest, with its error from the double (exact:
          // within half a float spacing), then rounded stochastically as any operation is.
          using S4 = detail::Simd4<float>;
          const __m256d w = _mm256_mul_pd(_mm256_add_pd(p.hi, p.t), p.scale);
          const __m128 wf = _mm256_cvtpd_ps(w);
          const __m128 e = _mm256_cvtpd_ps(_mm256_sub_pd(w, _mm256_cvtps_pd(wf)));
          S4::store(r.s, Nearness::round4(ts, (typename S4::V)wf, (typename S4::V)e));
        } else if constexpr (std::is_same_v<T, double>) {
          using S4 = detail::Simd4<double>;
          const auto m =
              S4::template pattern_lanes<kBalancedPatterns>(take_pattern_index_refill(ts));
          const auto sum =
              S4::flip(S4::flip((typename S4::V)p.hi, m) + S4::flip((typename S4::V)p.t, m), m);
          S4::store(r.s, S4::flip(S4::flip(sum, m) * (typename S4::V)p.scale,
                                  m));  // exact but below 2^-1022
        } else {
          const uint32_t bits = rounding_bits(ts);
          alignas(32) double w[4];
          _mm256_store_pd(w, _mm256_mul_pd(_mm256_add_pd(p.hi, p.t), p.scale));
          for (int i = 0; i < kLanes; ++i) r.s[i] = round_wide(w[i], ((bits >> i) & 1u) << 1);
        }
        return r;  // finite and positive: nothing to report
      }
    }
#endif
    return exp_libm(a);
  }
  SF_STOCH_LIBM(exp_libm, exp, false)
  SF_STOCH_ELEMENTARY(expm1, false)
  SF_STOCH_ELEMENTARY(log, true)
  SF_STOCH_ELEMENTARY(log1p, false)
  SF_STOCH_ELEMENTARY(tanh, false)
  SF_STOCH_ELEMENTARY(erf, false)
  SF_STOCH_ELEMENTARY(erfc, false)
  SF_STOCH_ELEMENTARY(log2, true)
  SF_STOCH_ELEMENTARY(log10, true)
  SF_STOCH_ELEMENTARY(exp2, false)
  SF_STOCH_ELEMENTARY(sin, false)
  SF_STOCH_ELEMENTARY(cos, false)
  SF_STOCH_ELEMENTARY(atan, false)
#undef SF_STOCH_ELEMENTARY
#undef SF_STOCH_LIBM

  // pow: unstable when the base is a computational zero or the exponent is noise.
  friend SF_ALWAYS_INLINE Stoch pow(const Stoch& a, const Stoch& b) {
    auto& ts = hot_state();
    const uint32_t bits = kNearness ? 0u : random_bits(ts, 2 * kLanes);
    Stoch r;
    NearestScope nearest;  // libm runs in round to nearest
    if constexpr (kNearness) {
      r = Nearness::lanewise(ts, [&](int i) {
        return Nearness::wide_choice(std::pow(widen(a.s[i]), widen(b.s[i])), ts);
      });
    } else {
      for (int i = 0; i < kLanes; ++i)
        r.s[i] = round_wide(std::pow(widen(a.s[i]), widen(b.s[i])), (bits >> (2 * i)) & 3u);
    }
    if (ts.detect) {
      if (a.noisy_zero() || b.noisy_zero()) detail::record_here(Kind::unstable_power);
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s, b.s);
    }
    return r;
  }

  // ---- exact intrinsics and comparisons ---------------------------------------------------------
  // Exact functions of each sample. Unstable intrinsic: the samples disagree on the sign (abs) or
  // on the integer the function returns (floor, ceil, round, trunc, conversions to integers).
  friend SF_ALWAYS_INLINE Stoch fabs(const Stoch& a) {
    Stoch r;
    bool pos = false, neg = false;
    for (int i = 0; i < kLanes; ++i) {
      r.s[i] = std::fabs(a.s[i]);
      pos |= a.s[i] > 0;
      neg |= a.s[i] < 0;
    }
    if (hot.detect && pos && neg) detail::record_here(Kind::unstable_intrinsic);
    return r;
  }
  friend SF_ALWAYS_INLINE Stoch abs(const Stoch& a) { return fabs(a); }

#define SF_STOCH_INTEGRAL(fn)                                                               \
  friend SF_ALWAYS_INLINE Stoch fn(const Stoch& a) {                                        \
    Stoch r;                                                                                \
    for (int i = 0; i < kLanes; ++i) r.s[i] = std::fn(a.s[i]);                              \
    if (hot.detect && !detail::all_equal<kTested>(r.s) && detail::all_finite<kTested>(r.s)) \
      detail::record_here(Kind::unstable_intrinsic);                                        \
    return r;                                                                               \
  }
  SF_STOCH_INTEGRAL(floor)
  SF_STOCH_INTEGRAL(ceil)
  SF_STOCH_INTEGRAL(round)
  SF_STOCH_INTEGRAL(trunc)
  SF_STOCH_INTEGRAL(nearbyint)
#undef SF_STOCH_INTEGRAL

  // Conversion to an integer: the mean's value; unstable when the samples convert differently.
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  SF_ALWAYS_INLINE explicit operator I() const {
    bool same = true;
    for (int i = 1; i < kTested; ++i) same &= static_cast<I>(s[i]) == static_cast<I>(s[0]);
    if (hot.detect && !same) detail::record_here(Kind::unstable_intrinsic);
    return static_cast<I>(mean());
  }
  // Conversion to the scalar: the mean of the samples.
  SF_ALWAYS_INLINE explicit operator double() const { return mean(); }

  // fma(a, b, c) = a b + c with one random rounding (f16, bf16: computed in double).
  friend SF_ALWAYS_INLINE Stoch fma(const Stoch& a, const Stoch& b, const Stoch& c) {
    if constexpr (kNearness) return Nearness::fma(a, b, c);
    auto& ts = hot_state();
    const uint32_t bits = rounding_bits(ts);
    Stoch r;
    for (int i = 0; i < kLanes; ++i) {
      if constexpr (kLow) {
        r.s[i] = detail::random_round_format<T::kFormat>(
            double(a.s[i]) * double(b.s[i]) + double(c.s[i]), (bits >> i) & 1u);
      } else {
        const uint32_t d = (bits >> i) & 1u;  // RD(a b + c) = -RU(-a b - c)
        r.s[i] = detail::flip_if(
            std::fma(detail::flip_if(a.s[i], d), b.s[i], detail::flip_if(c.s[i], d)), d);
      }
    }
    if constexpr (!kLow) {
      if (detail::any_at_overflow<kLanes>(r.s)) [[unlikely]]
        detail::settle_overflow<kLanes>(
            r.s, [&](int i) { return std::fma(a.s[i], b.s[i], c.s[i]); },
            [&](int i) {
              return std::isfinite(a.s[i]) && std::isfinite(b.s[i]) && std::isfinite(c.s[i]);
            });
    }
    if (ts.detect && !detail::all_finite<kTested>(r.s))
      detail::check_nonfinite<kTested>(r.s, a.s, b.s);
    return r;
  }

  // CADNA semantics: a comparison whose difference is a computational zero is decided as
  // "equal" and, unless the samples tie exactly, reported as unstable branching.
  friend SF_ALWAYS_INLINE bool operator<(const Stoch& a, const Stoch& b) {
    return compare(a, b) < 0;
  }
  friend SF_ALWAYS_INLINE bool operator>(const Stoch& a, const Stoch& b) {
    return compare(a, b) > 0;
  }
  friend SF_ALWAYS_INLINE bool operator<=(const Stoch& a, const Stoch& b) {
    return compare(a, b) <= 0;
  }
  friend SF_ALWAYS_INLINE bool operator>=(const Stoch& a, const Stoch& b) {
    return compare(a, b) >= 0;
  }
  friend SF_ALWAYS_INLINE bool operator==(const Stoch& a, const Stoch& b) {
    return compare(a, b) == 0;
  }
  friend SF_ALWAYS_INLINE bool operator!=(const Stoch& a, const Stoch& b) {
    return compare(a, b) != 0;
  }
  friend SF_ALWAYS_INLINE Stoch max(const Stoch& a, const Stoch& b) {
    return compare(a, b) < 0 ? b : a;
  }
  friend SF_ALWAYS_INLINE Stoch min(const Stoch& a, const Stoch& b) {
    return compare(b, a) < 0 ? b : a;
  }
  friend SF_ALWAYS_INLINE Stoch fmax(const Stoch& a, const Stoch& b) { return max(a, b); }
  friend SF_ALWAYS_INLINE Stoch fmin(const Stoch& a, const Stoch& b) { return min(a, b); }
  friend SF_ALWAYS_INLINE bool isfinite(const Stoch& a) { return std::isfinite(a.s[0]); }
  friend SF_ALWAYS_INLINE bool isinf(const Stoch& a) { return std::isinf(a.s[0]); }
  friend SF_ALWAYS_INLINE bool isnan(const Stoch& a) { return std::isnan(a.s[0]); }

 private:
  static SF_ALWAYS_INLINE HotState& hot_state() { return hot; }

  // Rounding directions, bit i set: lane i rounds down (shared with the device engine).
  static SF_ALWAYS_INLINE uint32_t rounding_bits(HotState& ts) {
    return cestac::rounding_bits(ts, kLanes);
  }
  template <class U>
  static SF_ALWAYS_INLINE T nearest(U v) {
    if constexpr (std::is_same_v<T, float>) {
      return detail::float_nearest(static_cast<double>(v));  // integers < 2^53 convert exactly
    } else if constexpr (std::is_same_v<T, double> && std::is_integral_v<U>) {
      if (sizeof(U) < 8 || std::fabs(static_cast<long double>(v)) <= 0x1p53L)
        return static_cast<double>(v);  // exact
      NearestScope nearest;             // a 64-bit integer beyond 2^53
      return static_cast<double>(v);
    } else {
      return static_cast<T>(v);  // exact (float to double), or rounded by LowFloat itself
    }
  }

  // Elementary functions are evaluated in a wider format (double for float, f16 and bf16; x87
  // long double for double) whose result decides the side of the exact value.
  using Wide = double;
  static SF_ALWAYS_INLINE Wide widen(Sample x) { return static_cast<Wide>(x); }
  // bits2: two random bits (bit 1 is the rounding direction).
  static SF_ALWAYS_INLINE Sample round_wide(Wide w, uint32_t bits2) {
    if constexpr (kLow) {
      return detail::random_round_format<T::kFormat>(w, bits2 >> 1);
    } else if constexpr (std::is_same_v<T, double>) {
      return detail::random_perturb(w, bits2);
    } else {
      const T x = static_cast<T>(w);
      return detail::random_round(x, static_cast<T>(w - static_cast<Wide>(x)), bits2 >> 1);
    }
  }

  SF_ALWAYS_INLINE bool zero_fast() const {
    return !detail::clearly_nonzero<kTested>(s) && detail::computational_zero<kTested, kMean>(s);
  }
  // A computational zero whose samples disagree: noise, not an exact zero.
  SF_ALWAYS_INLINE bool noisy_zero() const {
    return !detail::clearly_nonzero<kTested>(s) && !detail::all_equal<kTested>(s) &&
           detail::computational_zero<kTested, kMean>(s);
  }

  static SF_ALWAYS_INLINE void check_add_fast(const Stoch& a, const Stoch& b, const Stoch& r,
                                              int cancel_bits) {
    using detail::exponent_field;
    const int ea = exponent_field(a.s[0]), eb = exponent_field(b.s[0]);
    const int er = exponent_field(r.s[0]);
    if ((ea > eb ? ea : eb) - er >= cancel_bits || !detail::all_finite<kTested>(r.s))
      detail::check_sum<kTested, kMean>(a.s, b.s, r.s, kPrecision);
  }

  // The slow paths take and return the samples as vectors, in registers: a by-reference
  // signature would make every operation keep its operands and result in memory.
  using SV = typename std::conditional_t<kSimd, detail::Simd4<T>, detail::Simd4<float>>::V;
  static Stoch from_vector(SV v) {
    Stoch x;
    detail::Simd4<T>::store(x.s, v);
    return x;
  }

  // -1, 0, +1 from the samples' mean difference; 0 when the difference is noise.
  static SF_ALWAYS_INLINE int compare(const Stoch& a, const Stoch& b) {
    if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto d = S4::load(a.s) - S4::load(b.s);  // the signs are exact in any rounding mode
      // Every sample of the difference near the first, which is nonzero: the sign is certain.
      if (S4::clearly_nonzero(d)) [[likely]]
        return d[0] < 0 ? -1 : 1;
      return compare_slow(S4::load(a.s), S4::load(b.s));
    } else {
      return compare_slow(a, b);
    }
  }

  // ---- slow paths: noinline, so that their return address is the operation's site -------------
  static SF_SLOW_PATH int compare_slow(SV va, SV vb) {
    const auto site = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    return compare_at(from_vector(va), from_vector(vb), site);
  }
  static SF_SLOW_PATH int compare_slow(const Stoch& a, const Stoch& b) {
    return compare_at(a, b, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static int compare_at(const Stoch& a, const Stoch& b, uintptr_t site) {
    Sample d[kTested];
    bool tie = true, nan = false;
    for (int i = 0; i < kTested; ++i) {
      tie &= (a.s[i] == b.s[i]);  // also equal infinities
      d[i] = a.s[i] - b.s[i];
      nan |= std::isnan(d[i]);
    }
    if (tie) return 0;
    if (nan) return a.s[0] < b.s[0] ? -1 : (a.s[0] > b.s[0] ? 1 : 0);  // NaN or inf operands
    if (!detail::clearly_nonzero<kTested>(d) && detail::computational_zero<kTested, kMean>(d)) {
      if (hot.detect) record_at(Kind::unstable_branching, site);
      return 0;
    }
    T sum = 0;
    for (int i = 0; i < kMean; ++i) sum += d[i];
    return sum < 0 ? -1 : (sum > 0 ? 1 : 0);
  }
};

}  // namespace stabfuzz::cestac

namespace stabfuzz {
using cestac::Stoch;
}  // namespace stabfuzz

#include "stabfuzz/stoch_nearness.h"
#include "stabfuzz/stoch_slow_paths.h"
