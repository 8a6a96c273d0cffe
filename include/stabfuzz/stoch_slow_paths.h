// The noinline slow paths of Stoch's +, x and / on four SIMD lanes: taken when a sample is at
// overflow (settled to round to nearest's answer), when the detection tests may fire
// (cancellation, unstable x and /, NaN/Inf), or (Rounding::updown) to refill the random bits.
// Their return address is the operation's site in the operator code (the *_at functions take it
// from the caller that computed it: Rounding::nearness's entry points in stoch_nearness.h).
// Included by stabfuzz/stoch.h after the class.
#pragma once

#include "stabfuzz/stoch.h"

namespace stabfuzz::cestac::detail {

template <class S>
struct SlowPaths {
  using T = typename S::value_type;
  using SV = typename S::SV;
  static constexpr int kLanes = S::kLanes;
  static constexpr int kTested = S::kTested;
  static constexpr int kPrecision = S::kPrecision;

  // Rounding::updown: each slow path refills the random bits first; taken for that alone, it
  // returns at once.
  static SF_SLOW_PATH SV add(SV va, SV vb, SV vr) {
    refill_pattern_word(hot);
    if (detail::add_fast_ok<T>(va, vb, vr, hot)) return vr;
    return add_at(va, vb, vr, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static SV add_at(SV va, SV vb, SV vr, uintptr_t site) {
    const S a = S::from_vector(va), b = S::from_vector(vb);
    S r = S::from_vector(vr);
    if (detail::any_at_overflow<kLanes>(r.s))
      detail::settle_overflow<kLanes>(
          r.s, [&](int i) { return a.s[i] + b.s[i]; },
          [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    if (hot.detect) detail::check_sum_at<kTested, S::kMean>(a.s, b.s, r.s, kPrecision, site);
    return detail::Simd4<T>::load(r.s);
  }

  static SF_SLOW_PATH SV mul(SV va, SV vb, SV vr) {
    refill_pattern_word(hot);
    if (detail::mul_fast_ok<T>(va, vb, vr, hot)) return vr;
    return mul_at(va, vb, vr, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static SV mul_at(SV va, SV vb, SV vr, uintptr_t site) {
    const S a = S::from_vector(va), b = S::from_vector(vb);
    S r = S::from_vector(vr);
    if (detail::any_at_overflow<kLanes>(r.s))
      detail::settle_overflow<kLanes>(
          r.s, [&](int i) { return a.s[i] * b.s[i]; },
          [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    if (hot.detect) {
      NearestScope nearest;
      // Both factors computational zeros and both noise: a factor that is exactly 0 in every
      // sample makes the product exactly 0 (0 x noise is exact).
      if (a.zero_fast() && b.zero_fast() && !detail::all_equal<kTested>(a.s) &&
          !detail::all_equal<kTested>(b.s))
        record_at(Kind::unstable_multiplication, site);
      if (!detail::all_finite<kTested>(r.s))
        detail::classify_nonfinite<kTested>(r.s, a.s, b.s, site);
    }
    return detail::Simd4<T>::load(r.s);
  }

  static SF_SLOW_PATH SV div(SV va, SV vb, SV vr) {
    refill_pattern_word(hot);
    if (detail::div_fast_ok<T>(vb, vr, hot)) return vr;
    return div_at(va, vb, vr, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static SV div_at(SV va, SV vb, SV vr, uintptr_t site) {
    const S a = S::from_vector(va), b = S::from_vector(vb);
    S r = S::from_vector(vr);
    if (detail::any_at_overflow<kLanes>(r.s))
      detail::settle_overflow<kLanes>(
          r.s, [&](int i) { return a.s[i] / b.s[i]; },
          [&](int i) { return std::isfinite(a.s[i]) && std::isfinite(b.s[i]); });
    if (hot.detect) {
      NearestScope nearest;
      if (b.zero_fast()) record_at(Kind::unstable_division, site);
      if (!detail::all_finite<kTested>(r.s))
        detail::classify_nonfinite<kTested>(r.s, a.s, b.s, site);
    }
    return detail::Simd4<T>::load(r.s);
  }
};

}  // namespace stabfuzz::cestac::detail
