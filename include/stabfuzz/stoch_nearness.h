// Stochastic rounding to nearness (Rounding::nearness, the default) for Stoch: each operation in
// round to nearest, its exact error by an error-free transformation (Fast2Sum, an fma for x, /
// and sqrt), and per lane a move to the exact value's other neighbour with probability
// |error| / gap (detail::Simd4::sr_round); then uncollapse, so that an inexact operation never
// leaves every lane equal. Operations of four float or double lanes are a few vector instructions;
// f16/bf16, other lane counts, fma and the elementary functions go lane by lane. Included by
// stabfuzz/stoch.h after the class, whose nearness operations call NearnessOps<Stoch>.
#pragma once

#include "stabfuzz/stoch.h"

namespace stabfuzz::cestac::detail {

template <class S>
struct NearnessOps {
  using T = typename S::value_type;
  using Sample = typename S::Sample;
  using Wide = typename S::Wide;
  using SV = typename S::SV;
  static constexpr int kLanes = S::kLanes;
  static constexpr int kTested = S::kTested;
  static constexpr bool kSimd = S::kSimd;
  static constexpr bool kLow = S::kLow;

  // ---- Rounding::nearness: round to nearest, the exact error, stochastic rounding -------------
  // sr_round of four lanes with the operation's uniforms (detail::take_uniforms).
  template <class V>  // detail::Simd4<T>::V (a template: Simd4 has no f16/bf16 instance)
  static SF_ALWAYS_INLINE V round4(HotState& ts, V r, V e) {
    uint32_t j;
    const auto v = detail::take_uniforms<T>(ts, j);
    return detail::Simd4<T>::sr_round_uncollapsed(r, e, v, j);
  }
  static SF_ALWAYS_INLINE Sample lane_u(HotState& ts) {
    return static_cast<Sample>(detail::uniform16(random_bits(ts, 16)));
  }
  // Lane-by-lane results (no SIMD: f16/bf16, N other than 3 and 4, fma, elementary functions):
  // each lane's choice, then uncollapse as detail::Simd4::sr_round_uncollapsed does.
  struct Lanes {
    Sample alt[kLanes];
    bool inexact[kLanes];
    void set(S& r, int i, const detail::SrChoice<Sample>& c) {
      r.s[i] = c.value;
      alt[i] = c.other;
      inexact[i] = c.inexact;
    }
    void uncollapse(S& r, HotState& ts) const {
      if (!detail::all_equal<kLanes>(r.s)) return;
      bool any = false;
      for (int i = 0; i < kLanes; ++i) any |= inexact[i];
      if (!any) return;
      const uint32_t j = random_bits(ts, 4);
      for (int k = 0; k < kLanes; ++k) {
        const int i = static_cast<int>((j + k) % kLanes);
        if (inexact[i]) {
          r.s[i] = alt[i];
          return;
        }
      }
    }
  };
  // f16/bf16: x (computed in double) rounded to the format to nearest, then stochastically.
  static SF_ALWAYS_INLINE detail::SrChoice<Sample> low_choice(double x, double u) {
    constexpr const Format& F = T::kFormat;
    const double r = round_to_format(F, x), e = x - r;
    const bool inexact = e != 0 && std::isfinite(r);
    const double n = inexact ? format_neighbour(F, r, e) : r;
    const bool ok = inexact && std::isfinite(n);
    const bool move = ok && u * std::fabs(n - r) < std::fabs(e);
    return {static_cast<float>(move ? n : r), static_cast<float>(move ? r : n), ok};
  }
  // low_choice of a product or quotient; `flushed` is set when a nonzero value rounded to 0.
  static SF_ALWAYS_INLINE detail::SrChoice<Sample> low_choice_flushing(double x, HotState& ts,
                                                                       bool& flushed) {
    const auto c = low_choice(x, lane_u(ts));
    flushed |= (c.value == 0) & (x != 0);
    return c;
  }
  // A sample of an elementary function evaluated in Wide (w): float and f16/bf16 samples round
  // stochastically on the side w shows; double samples (side unknown) move one ulp at random
  // with probability 1/2 (detail::random_perturb).
  static SF_ALWAYS_INLINE detail::SrChoice<Sample> wide_choice(Wide w, HotState& ts) {
    if constexpr (kLow) {
      return low_choice(w, detail::uniform16(random_bits(ts, 16)));
    } else if constexpr (std::is_same_v<T, double>) {
      const uint32_t b = random_bits(ts, 2);
      const bool special = w == 0 || w == 1 || w == -1 || !std::isfinite(w);
      const T n = detail::random_round(w, (b & 2u) ? T(1) : T(-1), (b & 2u) ? 1u : 0u);
      const bool move = (b & 1u) && !special;
      return {move ? n : w, move ? w : n, !special && n != w};
    } else {
      const T x = static_cast<T>(w);
      return detail::sr_choice<T>(x, static_cast<T>(w - static_cast<Wide>(x)), T(1), lane_u(ts));
    }
  }
  template <class Op>
  static SF_ALWAYS_INLINE S lanewise(HotState& ts, Op lane_choice) {
    S r;
    Lanes l;
    for (int i = 0; i < kLanes; ++i) l.set(r, i, lane_choice(i));
    l.uncollapse(r, ts);
    return r;
  }

  static SF_ALWAYS_INLINE S add(const S& a, const S& b) {
    auto& ts = hot;
    if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto sum = va + vb;
      // The exact error (Simd4::add_err: Fast2Sum ordered by vrangepd, or 2Sum; a branch on
      // |a| >= |b| instead cost the attention and MLP rows 15-25 % in mispredictions).
      typename S4::V mag;
      const auto e = S4::add_err(va, vb, sum, mag);
      const auto x = detail::take_pool_word<T>();
      const auto vr = S4::sr_round_assume_normal(sum, e, x);
      S r;
      S4::store(r.s, vr);
      // One test for every rare case: a power of two, 0 or a sample at overflow (redone with
      // round4's rounding), an exponent drop that may be a cancellation (the checks).
      if (S4::movemask(S4::assumed_normal_failed(sum, vr) | ~detail::add_ratio_ok<T>(mag, vr, ts)))
          [[unlikely]]
        S4::store(r.s, add_redo(va, vb, sum, e, x, vr));
      return r;
    } else {
      const S r = lanewise(ts, [&](int i) {
        if constexpr (kLow) {
          return low_choice(double(a.s[i]) + double(b.s[i]), lane_u(ts));
        } else {
          const T sum = a.s[i] + b.s[i];
          return detail::sr_choice<T>(sum, detail::two_sum_err(a.s[i], b.s[i], sum), T(1),
                                      lane_u(ts));
        }
      });
      if (ts.detect) S::check_add_fast(a, b, r, ts.cancel_bits);
      return r;
    }
  }

  static SF_ALWAYS_INLINE S mul(const S& a, const S& b) {
    auto& ts = hot;
    if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto p = va * vb;
      const auto e = S4::fma(va, vb, -p);  // exact unless the product underflows
      const auto x = detail::take_pool_word<T>();
      const auto vr = S4::sr_round_assume_normal(p, e, x);
      S r;
      S4::store(r.s, vr);
      // The slow path when the rounding's assumption failed or, with detection on, both operands
      // may be computational zeros; one branch in the common case (a clearly nonzero).
      const auto failed = S4::assumed_normal_failed(p, vr);
      if (S4::movemask(failed | S4::not_clearly_nonzero(va)) &&
          (S4::movemask(failed) || (ts.detect && !S4::clearly_nonzero(vb)))) [[unlikely]]
        S4::store(r.s, mul_redo(va, vb, p, e, x, vr));
      return r;
    } else {
      bool flushed = false;
      const S r = lanewise(ts, [&](int i) {
        if constexpr (kLow) {
          return low_choice_flushing(double(a.s[i]) * double(b.s[i]), ts, flushed);
        } else {
          const T p = a.s[i] * b.s[i];
          return detail::sr_choice<T>(p, std::fma(a.s[i], b.s[i], -p), T(1), lane_u(ts));
        }
      });
      if (ts.detect) mul_checks(a, b, r, flushed);
      return r;
    }
  }

  static SF_ALWAYS_INLINE S div(const S& a, const S& b) {
    auto& ts = hot;
    if constexpr (kSimd) {
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s), vb = S4::load(b.s);
      const auto q = va / vb;
      // exact - q = rho / b, rho = a - q b exact; 1 / b is formed beside the quotient (a
      // division of its own when 1 / b overflows: b subnormal or 0).
      const auto rho = S4::fma(-q, vb, va);
      const auto inv = 1 / vb;
      const auto e = S4::all(S4::below_overflow(inv)) ? rho * inv : rho / vb;
      const auto x = detail::take_pool_word<T>();
      const auto vr = S4::sr_round_assume_normal(q, e, x);
      S r;
      S4::store(r.s, vr);
      const auto failed = S4::assumed_normal_failed(q, vr);  // as in mul, b alone
      if (S4::movemask(failed | S4::not_clearly_nonzero(vb)) && (S4::movemask(failed) || ts.detect))
          [[unlikely]]
        S4::store(r.s, div_redo(va, vb, q, e, x, vr));
      return r;
    } else {
      bool flushed = false;
      const S r = lanewise(ts, [&](int i) {
        if constexpr (kLow) {
          return low_choice_flushing(double(a.s[i]) / double(b.s[i]), ts, flushed);
        } else {
          const T q = a.s[i] / b.s[i], rho = std::fma(-q, b.s[i], a.s[i]);
          return detail::sr_choice<T>(q, std::signbit(b.s[i]) ? -rho : rho, std::fabs(b.s[i]),
                                      lane_u(ts));
        }
      });
      if (ts.detect) div_checks(a, b, r, flushed);
      return r;
    }
  }

  static SF_ALWAYS_INLINE S sqrt(const S& a) {
    auto& ts = hot;
    S r;
    if constexpr (kSimd) {
      // exact - q = (a - q^2) / (sqrt(a) + q), about rho / 2q, rho = a - q^2 exact.
      using S4 = detail::Simd4<T>;
      const auto va = S4::load(a.s);
      const auto q = S4::sqrt(va);
      const auto rho = S4::fma(-q, q, va);
      auto vr = round4(ts, q, rho / (q + q));
      // sqrt(inf) and sqrt(0) have no error to add (rho is NaN or 0 / 0): keep the root.
      vr = (typename S4::V)((S4::below_overflow(q) & (q > 0) & (typename S4::M)vr) |
                            (~(S4::below_overflow(q) & (q > 0)) & (typename S4::M)q));
      S4::store(r.s, vr);
    } else {
      r = lanewise(ts, [&](int i) {
        if constexpr (kLow) {
          return low_choice(std::sqrt(double(a.s[i])), lane_u(ts));
        } else {
          const T q = std::sqrt(a.s[i]);
          return detail::sr_choice<T>(q, std::fma(-q, q, a.s[i]), q + q, lane_u(ts));
        }
      });
    }
    if (ts.detect) {
      if (a.noisy_zero()) detail::record_here(Kind::unstable_function);
      if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s);
    }
    return r;
  }

  // fma: the error of RN(a b + c) from the exact product (p + pe) and 2Sum of p + c.
  static SF_ALWAYS_INLINE S fma(const S& a, const S& b, const S& c) {
    auto& ts = hot;
    const S r = lanewise(ts, [&](int i) {
      if constexpr (kLow) {
        return low_choice(double(a.s[i]) * double(b.s[i]) + double(c.s[i]), lane_u(ts));
      } else {
        const T x = a.s[i], y = b.s[i], z = c.s[i];
        const T r0 = std::fma(x, y, z), p = x * y, pe = std::fma(x, y, -p);
        const T t = p + z, te = detail::two_sum_err(p, z, t);
        return detail::sr_choice<T>(r0, (t - r0) + (te + pe), T(1), lane_u(ts));
      }
    });
    if (ts.detect && !detail::all_finite<kTested>(r.s))
      detail::check_nonfinite<kTested>(r.s, a.s, b.s);
    return r;
  }

  // Elementary function `fn` of Wide arguments, Rounding::nearness (evaluated once for an exact
  // argument).
  template <class Fn>
  static SF_ALWAYS_INLINE S libm(const S& a, Fn fn) {
    auto& ts = hot;
    NearestScope nearest;  // no-op in a nearness run
    if (detail::all_equal<kLanes>(a.s)) {
      const Wide w = fn(S::widen(a.s[0]));
      return lanewise(ts, [&](int) { return wide_choice(w, ts); });
    }
    return lanewise(ts, [&](int i) { return wide_choice(fn(S::widen(a.s[i])), ts); });
  }

  // The detection checks of x and / after a lane-by-lane result (the SIMD paths make them in
  // their slow paths).
  static SF_ALWAYS_INLINE void mul_checks(const S& a, const S& b, const S& r, bool flushed) {
    if (flushed) detail::record_here(Kind::underflow);
    if (a.zero_fast() && b.zero_fast() && !detail::all_equal<kTested>(a.s) &&
        !detail::all_equal<kTested>(b.s))
      detail::record_here(Kind::unstable_multiplication);
    if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s, b.s);
  }
  static SF_ALWAYS_INLINE void div_checks(const S& a, const S& b, const S& r, bool flushed) {
    if (flushed) detail::record_here(Kind::underflow);
    if (b.zero_fast()) detail::record_here(Kind::unstable_division);
    if (!detail::all_finite<kTested>(r.s)) detail::check_nonfinite<kTested>(r.s, a.s, b.s);
  }

  // The slow paths of the SIMD operations (noinline, so that their return address is the
  // operation's site): the rounding of r + e as round4 gives it, from the same pool word x, then
  // the fast path's tests and, where one fails, the checks. The fast path's result `fast` stands
  // where its assumption held (r normal in every lane: the test failed on the result's overflow or
  // on a possible cancellation); an exact operation below the overflow threshold (0, a power of
  // two) is r itself, as sr_round_uncollapsed gives it, without its lane-by-lane comparisons.
  static SV round_redo(SV r, SV e, SV x, SV fast) {
    using S4 = detail::Simd4<T>;
    if (!S4::movemask(S4::assumed_normal_failed(r, r))) return fast;
    if (S4::all((e == SV{}) & S4::below_overflow(r))) return r;
    return S4::sr_round_uncollapsed(r, e, x - T(1.5), S4::first_lane(x));
  }
  static SF_SLOW_PATH SV add_redo(SV va, SV vb, SV r, SV e, SV x, SV fast) {
    const SV vr = round_redo(r, e, x, fast);
    if (detail::add_fast_ok<T>(va, vb, vr, hot)) return vr;
    return SlowPaths<S>::add_at(va, vb, vr,
                                reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static SF_SLOW_PATH SV mul_redo(SV va, SV vb, SV r, SV e, SV x, SV fast) {
    const SV vr = round_redo(r, e, x, fast);
    if (detail::mul_fast_ok<T>(va, vb, vr, hot)) return vr;
    return SlowPaths<S>::mul_at(va, vb, vr,
                                reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
  static SF_SLOW_PATH SV div_redo(SV va, SV vb, SV r, SV e, SV x, SV fast) {
    const SV vr = round_redo(r, e, x, fast);
    if (detail::div_fast_ok<T>(vb, vr, hot)) return vr;
    return SlowPaths<S>::div_at(va, vb, vr,
                                reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  }
};

}  // namespace stabfuzz::cestac::detail

namespace stabfuzz::cestac {

// Advances this thread's random stream as n operations of S with every lane exact would (their
// results do not depend on the draws they take), so that code that skips such operations, e.g. the
// exact scalings by 2 that find a value's binary exponent, leaves every later operation's draws as
// they were. Only where each such operation takes one draw: four float or double lanes, rounding
// to nearness. Returns false elsewhere, having done nothing (true for n = 0).
template <class S>
bool skip_exact_operations(uint64_t n) {
  using Sample = typename S::Sample;
  constexpr bool kFourLanes =
      !is_low_precision_v<typename S::value_type> && (S::kSamples == 3 || S::kSamples == 4);
  if constexpr (kFourLanes && S::kRounding == Rounding::nearness) {
    detail::skip_uniforms<Sample>(n);
    return true;
  } else {
    return n == 0;
  }
}

}  // namespace stabfuzz::cestac
