// Stoch<T, N>: the CESTAC stochastic scalar. N samples of T, each randomly rounded at every
// operation; their spread gives the number of exact significant digits.
//
// Random rounding without global FPU state: each operation is computed in round-to-nearest, its
// exact rounding error is recovered with an error-free transformation (TwoSum for +/-, FMA for
// x and /, FMA for sqrt, a wider format for elementary functions), and each sample then moves to
// its other neighbour with probability 1/2 when that neighbour lies on the side of the exact
// result. This is exactly CADNA's "round up or down at random" (the exact result is always
// bracketed by the two candidates) but touches no rounding mode that libm, BLAS or MPFR could
// trip over, and is safe with many threads. Build with -ffp-contract=off and never -ffast-math.
//
// Operator code needs no change beyond being a template over its scalar type: operations are
// hidden friends found by ADL, so `using std::exp; exp(x)` works for float, double and Stoch.
#pragma once

#include "stabfuzz/stoch_detail.h"

namespace stabfuzz::cestac {

template <class T, int N = 3>
class Stoch {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || is_low_precision_v<T>,
                "Stoch<float|double|Half|BFloat16, N>");
  static_assert(N >= 2 && N <= 16, "2 <= N <= 16 samples");
  using Traits = detail::SampleTraits<T>;
  static constexpr bool kLow = Traits::kLow;
  static constexpr bool kSimd = !kLow && (N == 3 || N == 4);  // four lanes of float or double

 public:
  using value_type = T;
  using Sample = typename Traits::Sample;
  static constexpr int kSamples = N;
  static constexpr int kPrecision = Traits::kPrecision;

  // Samples live in kLanes >= N slots (3 -> 4) so that each operation is one SIMD instruction
  // over a full vector; lanes past N are extra random samples that the statistics ignore.
  static constexpr int kLanes = N == 3 ? 4 : N;
  alignas(kLanes * sizeof(Sample) <= 32 ? kLanes * sizeof(Sample) : 32) Sample s[kLanes];

  SF_ALWAYS_INLINE Stoch() : s{} {}
  // An exact value: every sample equal (constants and inputs carry no rounding noise).
  SF_ALWAYS_INLINE Stoch(T v) {  // NOLINT(google-explicit-constructor): numeric literal use
    for (int i = 0; i < kLanes; ++i) s[i] = static_cast<Sample>(v);
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, T>, int> = 0>
  SF_ALWAYS_INLINE Stoch(U v) : Stoch(static_cast<T>(v)) {}  // NOLINT

  Sample sample(int i) const { return s[i]; }
  double mean() const {
    long double m = 0;
    for (int i = 0; i < N; ++i) m += s[i];
    return static_cast<double>(m / N);
  }
  double digits() const { return detail::digits<N>(s, kPrecision); }
  bool computational_zero() const {
    return detail::all_equal<N>(s) ? s[0] == 0 : detail::computational_zero<N>(s);
  }

  // ---- arithmetic ------------------------------------------------------------------------------
  friend SF_ALWAYS_INLINE Stoch operator+(const Stoch& a, const Stoch& b) {
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, kLanes);
    Stoch r;
    if constexpr (kLow) {
      for (int i = 0; i < kLanes; ++i)
        r.s[i] = detail::random_round_format<T::kFormat>(double(a.s[i]) + double(b.s[i]), (bits >> i) & 1u);
    } else if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto x = va + vb, bb = x - va;
      const auto e = (va - (x - bb)) + (vb - bb);  // TwoSum: exact error of every lane
      S4::store(r.s, S4::random_round(x, e, S4::lanes(bits)));
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const T x = a.s[i] + b.s[i];
        r.s[i] = detail::random_round(x, detail::two_sum_err(a.s[i], b.s[i], x), (bits >> i) & 1u);
      }
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
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, kLanes);
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
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto p = va * vb;
      S4::store(r.s, S4::random_round(p, S4::fma(va, vb, -p), S4::lanes(bits)));
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const T p = a.s[i] * b.s[i];
        r.s[i] = detail::random_round(p, std::fma(a.s[i], b.s[i], -p), (bits >> i) & 1u);
      }
    }
    if (ts.detect) {
      // Both factors computational zeros, at least one of them noise: 0 x 0 of exact zeros is exact.
      if (a.zero_fast() && b.zero_fast() && !(detail::all_equal<N>(a.s) && detail::all_equal<N>(b.s)))
        detail::record_here(Kind::unstable_multiplication);
      if (!detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s, b.s);
    }
    return r;
  }

  friend SF_ALWAYS_INLINE Stoch operator/(const Stoch& a, const Stoch& b) {
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, kLanes);
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
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto q = va / vb;
      const auto rem = S4::fma(-q, vb, va);  // a - q b, exact; the error's sign is rem's times b's
      const auto e = (typename S4::V)((typename S4::M)rem ^ ((typename S4::M)vb & S4::kSign));
      S4::store(r.s, S4::random_round(q, e, S4::lanes(bits)));
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const T q = a.s[i] / b.s[i];
        const T rem = std::fma(-q, b.s[i], a.s[i]);  // a - q b, exact
        r.s[i] = detail::random_round(q, b.s[i] > 0 ? rem : -rem, (bits >> i) & 1u);
      }
    }
    if (ts.detect) {
      if (b.zero_fast()) detail::record_here(Kind::unstable_division);
      if (!detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s, b.s);
    }
    return r;
  }

  SF_ALWAYS_INLINE Stoch& operator+=(const Stoch& b) { return *this = *this + b; }
  SF_ALWAYS_INLINE Stoch& operator-=(const Stoch& b) { return *this = *this - b; }
  SF_ALWAYS_INLINE Stoch& operator*=(const Stoch& b) { return *this = *this * b; }
  SF_ALWAYS_INLINE Stoch& operator/=(const Stoch& b) { return *this = *this / b; }

  // ---- elementary functions ---------------------------------------------------------------------
  friend SF_ALWAYS_INLINE Stoch sqrt(const Stoch& a) {
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, kLanes);
    Stoch r;
    if constexpr (kLow) {
      for (int i = 0; i < kLanes; ++i)
        r.s[i] = detail::random_round_format<T::kFormat>(std::sqrt(double(a.s[i])), (bits >> i) & 1u);
    } else if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s);
      const auto q = S4::sqrt(va);
      S4::store(r.s, S4::random_round(q, S4::fma(-q, q, va), S4::lanes(bits)));
    } else {
      for (int i = 0; i < kLanes; ++i) {
        const T q = std::sqrt(a.s[i]);
        r.s[i] = detail::random_round(q, std::fma(-q, q, a.s[i]), (bits >> i) & 1u);
      }
    }
    if (ts.detect) {
      if (a.noisy_zero()) detail::record_here(Kind::unstable_function);
      if (!detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s);
    }
    return r;
  }

#define SF_STOCH_ELEMENTARY(fn, zero_is_unstable)                                          \
  friend SF_ALWAYS_INLINE Stoch fn(const Stoch& a) {                                      \
    auto& ts = hot_state();                                                               \
    const uint32_t bits = random_bits(ts, 2 * N);                                         \
    Stoch r;                                                                              \
    if (detail::all_equal<N>(a.s)) { /* exact argument: evaluate once */                    \
      const Wide w = std::fn(widen(a.s[0]));                                              \
      for (int i = 0; i < N; ++i) r.s[i] = round_wide(w, (bits >> (2 * i)) & 3u);         \
    } else {                                                                              \
      for (int i = 0; i < N; ++i) r.s[i] = round_wide(std::fn(widen(a.s[i])), (bits >> (2 * i)) & 3u); \
    }                                                                                     \
    for (int i = N; i < kLanes; ++i) r.s[i] = r.s[0]; /* libm calls only for real samples */ \
    if (ts.detect) {                                                                      \
      if ((zero_is_unstable) && a.noisy_zero()) detail::record_here(Kind::unstable_function); \
      if (!detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s);                    \
    }                                                                                     \
    return r;                                                                             \
  }
  // Elementary functions of float, f16 and bf16 samples are evaluated in double, whose result
  // decides the exact value's side; for double samples, libm's result is perturbed at random
  // (random_perturb): x87 long double would decide the side but costs ~100 ns per call here.
  SF_STOCH_ELEMENTARY(exp, false)
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

  // pow: unstable when the base is a computational zero or the exponent is noise.
  friend SF_ALWAYS_INLINE Stoch pow(const Stoch& a, const Stoch& b) {
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, 2 * N);
    Stoch r;
    for (int i = 0; i < N; ++i)
      r.s[i] = round_wide(std::pow(widen(a.s[i]), widen(b.s[i])), (bits >> (2 * i)) & 3u);
    for (int i = N; i < kLanes; ++i) r.s[i] = r.s[0];
    if (ts.detect) {
      if (a.noisy_zero() || b.noisy_zero()) detail::record_here(Kind::unstable_power);
      if (!detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s, b.s);
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

#define SF_STOCH_INTEGRAL(fn)                                                       \
  friend SF_ALWAYS_INLINE Stoch fn(const Stoch& a) {                                \
    Stoch r;                                                                        \
    for (int i = 0; i < kLanes; ++i) r.s[i] = std::fn(a.s[i]);                           \
    if (hot.detect && !detail::all_equal<N>(r.s) && detail::all_finite<N>(r.s))           \
      detail::record_here(Kind::unstable_intrinsic);                                \
    return r;                                                                       \
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
    for (int i = 1; i < N; ++i) same &= static_cast<I>(s[i]) == static_cast<I>(s[0]);
    if (hot.detect && !same) detail::record_here(Kind::unstable_intrinsic);
    return static_cast<I>(mean());
  }
  // Conversion to the scalar: the mean of the samples.
  SF_ALWAYS_INLINE explicit operator double() const { return mean(); }

  // fma(a, b, c) = a b + c with one random rounding; the side of the exact value comes from
  // TwoProd and TwoSum (f64, f32) or from double arithmetic (f16, bf16).
  friend SF_ALWAYS_INLINE Stoch fma(const Stoch& a, const Stoch& b, const Stoch& c) {
    auto& ts = hot_state();
    const uint32_t bits = random_bits(ts, kLanes);
    Stoch r;
    for (int i = 0; i < kLanes; ++i) {
      if constexpr (kLow) {
        r.s[i] = detail::random_round_format<T::kFormat>(
            double(a.s[i]) * double(b.s[i]) + double(c.s[i]), (bits >> i) & 1u);
      } else {
        const T f = std::fma(a.s[i], b.s[i], c.s[i]);
        const T ph = a.s[i] * b.s[i], pl = std::fma(a.s[i], b.s[i], -ph);
        const T sh = ph + c.s[i], sl = detail::two_sum_err(ph, c.s[i], sh);
        const T e = (sh - f) + (sl + pl);  // sh - f is exact (Sterbenz); the sign is what counts
        r.s[i] = detail::random_round(f, e, (bits >> i) & 1u);
      }
    }
    if (ts.detect && !detail::all_finite<N>(r.s)) detail::check_nonfinite<N>(r.s, a.s, b.s);
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
  friend SF_ALWAYS_INLINE Stoch max(const Stoch& a, const Stoch& b) { return compare(a, b) < 0 ? b : a; }
  friend SF_ALWAYS_INLINE Stoch min(const Stoch& a, const Stoch& b) { return compare(b, a) < 0 ? b : a; }
  friend SF_ALWAYS_INLINE Stoch fmax(const Stoch& a, const Stoch& b) { return max(a, b); }
  friend SF_ALWAYS_INLINE Stoch fmin(const Stoch& a, const Stoch& b) { return min(a, b); }
  friend SF_ALWAYS_INLINE bool isfinite(const Stoch& a) { return std::isfinite(a.s[0]); }
  friend SF_ALWAYS_INLINE bool isinf(const Stoch& a) { return std::isinf(a.s[0]); }
  friend SF_ALWAYS_INLINE bool isnan(const Stoch& a) { return std::isnan(a.s[0]); }

 private:
  static SF_ALWAYS_INLINE HotState& hot_state() { return hot; }

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
    return !detail::clearly_nonzero<N>(s) && detail::computational_zero<N>(s);
  }
  // A computational zero whose samples disagree: noise, not an exact zero.
  SF_ALWAYS_INLINE bool noisy_zero() const {
    return !detail::clearly_nonzero<N>(s) && !detail::all_equal<N>(s) && detail::computational_zero<N>(s);
  }

  static SF_ALWAYS_INLINE void check_add_fast(const Stoch& a, const Stoch& b, const Stoch& r,
                                              int cancel_bits) {
    using detail::exponent_field;
    const int ea = exponent_field(a.s[0]), eb = exponent_field(b.s[0]);
    const int er = exponent_field(r.s[0]);
    if ((ea > eb ? ea : eb) - er >= cancel_bits || !detail::all_finite<N>(r.s))
      detail::check_sum<N>(a.s, b.s, r.s, kPrecision);
  }

  // -1, 0, +1 from the samples' mean difference; 0 when the difference is noise.
  static SF_ALWAYS_INLINE int compare(const Stoch& a, const Stoch& b) {
    Sample d[N];
    bool tie = true, nan = false;
    for (int i = 0; i < N; ++i) {
      tie &= (a.s[i] == b.s[i]);  // also equal infinities
      d[i] = a.s[i] - b.s[i];
      nan |= std::isnan(d[i]);
    }
    if (tie) return 0;
    if (nan) return a.s[0] < b.s[0] ? -1 : (a.s[0] > b.s[0] ? 1 : 0);  // NaN or inf operands
    if (!detail::clearly_nonzero<N>(d) && detail::computational_zero<N>(d)) {
      if (hot.detect) detail::record_here(Kind::unstable_branching);
      return 0;
    }
    T sum = 0;
    for (int i = 0; i < N; ++i) sum += d[i];
    return sum < 0 ? -1 : (sum > 0 ? 1 : 0);
  }
};

}  // namespace stabfuzz::cestac

namespace stabfuzz {
using cestac::Stoch;
}  // namespace stabfuzz
