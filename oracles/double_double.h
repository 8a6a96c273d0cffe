// Double-double arithmetic for the oracles' fast paths: values hi + lo with |lo| <= ulp(hi) / 2
// and operations with proven relative error bounds, e^x, e^x - 1 and log, and the correct
// rounding of a double-double known within an absolute bound. Each user states the bound of its
// whole evaluation and falls back to MPFR (Ziv's ladder) when a result is not decided.
#pragma once

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>

#include "oracles/mpfr_util.h"
#include "stabfuzz/dtype.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz::oracle::dd {

// Values hi + lo with |lo| <= ulp(hi) / 2; u = 2^-53. Error bounds from Joldes, Muller and
// Popescu, "Tight and rigorous error bounds for basic building blocks of double-word
// arithmetic" (ACM TOMS 2017): AccurateDWPlusDW <= 3u^2,  DWTimesDW3 <= 4u^2, DWTimesFP3 <= 2u^2,
// DWDivDW2 <= 15u^2 + 56u^3.
struct DD {
  double hi, lo;
};
inline DD two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
inline DD add_accurate(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
inline DD mul(DD a, DD b) {  // DWTimesDW3
  const DD c = two_prod(a.hi, b.hi);
  const double t = std::fma(a.lo, b.hi, std::fma(a.hi, b.lo, a.lo * b.lo));
  return fast_two_sum(c.hi, c.lo + t);
}
inline DD mul(DD a, double b) {
  const DD c = two_prod(a.hi, b);
  return fast_two_sum(c.hi, std::fma(a.lo, b, c.lo));
}
inline DD div(DD a, DD b) {
  const double th = a.hi / b.hi;
  const DD r = mul(b, th);
  const double d = (a.hi - r.hi) + (a.lo - r.lo);  // a.hi - r.hi exact (Sterbenz)
  return fast_two_sum(th, d / b.hi);
}

// 2^k for k in [-1022, 1023], from its bits (std::ldexp is a library call).
inline double pow2(int k) { return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52); }

// sqrt(a) for a double-double a >= 2^-900 (so that the residual below is normal), relative error
// below 3u^2: s = RN(sqrt a.hi) (within u), r = a.hi - s^2 exactly (an fma: the residual of a
// correctly rounded square root is a double), e = RN(r + a.lo), and s + e / (2s): sqrt(s^2 + r +
// a.lo) = s (1 + t/2 - t^2/8 ...) with |t| = |r + a.lo| / s^2 < 2.1u, so truncation < 0.6u^2 s and
// the two roundings of the correction (< 1.1u s) < 2.3u^2 s.
inline DD sqrt_dd(DD a) {
  const double s = std::sqrt(a.hi);
  const double e = std::fma(-s, s, a.hi) + a.lo;
  return fast_two_sum(s, e / (2 * s));
}

// ln 2 as L0 + L1 + L2 and 1 / i! as double-doubles, from MPFR once.
struct ExpConstants {
  double l0, l1, l2;
  std::array<DD, 12> inv_fact;
  ExpConstants() {
    Real v(320), t(320);
    mpfr_const_log2(v, MPFR_RNDN);
    l0 = mpfr_get_d(v, MPFR_RNDN);
    mpfr_sub_d(v, v, l0, MPFR_RNDN);
    l1 = mpfr_get_d(v, MPFR_RNDN);
    mpfr_sub_d(v, v, l1, MPFR_RNDN);
    l2 = mpfr_get_d(v, MPFR_RNDN);
    mpfr_set_ui(t, 1, MPFR_RNDN);
    for (int i = 0; i < 12; ++i) {
      if (i > 0) mpfr_div_ui(t, t, static_cast<unsigned long>(i), MPFR_RNDN);
      const double h = mpfr_get_d(t, MPFR_RNDN);
      mpfr_sub_d(v, t, h, MPFR_RNDN);
      inv_fact[static_cast<size_t>(i)] = {h, mpfr_get_d(v, MPFR_RNDN)};
    }
  }
};
inline const ExpConstants& exp_constants() {
  static const ExpConstants c;
  return c;
}

// The smallest argument of exp: e^x >= 2^-866 keeps both words normal; the largest keeps e^x below
// DBL_MAX (log DBL_MAX = 709.7827...).
inline constexpr double kMinExpArg = -600;
inline constexpr double kMaxExpArg = 709.78;
// e^x for a double-double x in [kMinExpArg, kMaxExpArg] (plus rounding): x = k ln2 + r with k =
// round(x / ln2), at most 1023 (so |r| < 0.7), r = x - k (L0 + L1 + L2) with two exact products
// and AccurateDWPlusDW (absolute error <= 3 x 3u^2 x 710 < 2^-93.3); e^(r / 256) by its Taylor
// polynomial of degree 11 (|r / 256| < 0.0028: truncation < 2^-130; the terms from degree 5 in
// double: < 2^-102.3; 5 steps of DWTimesDW3 and AccurateDWPlusDW: < 35u^2 < 2^-100.8), squared 8
// times (relative error e -> 2e + 4u^2: 256 x 2^-100.4 + 255 x 4u^2 < 2^-92.3), times 2^k
// (exact). Relative error below 2^-92.3 + 2^-93.3 < 2^-91.7; callers use 2^-90.5.
// N arguments at once: each step runs over the lanes, so that N independent dependency chains
// interleave (an evaluation is a chain of about 200 dependent operations).
template <size_t N>
inline void exp_dd_lanes(const DD* x, DD* y) {
  const ExpConstants& c = exp_constants();
  double k[N], t[N];
  DD r[N], p[N];
  for (size_t j = 0; j < N; ++j) {
    k[j] = std::fmin(std::nearbyint(x[j].hi * 1.4426950408889634), 1023);
    r[j] = add_accurate(x[j], two_prod(-k[j], c.l0));
    r[j] = add_accurate(r[j], two_prod(-k[j], c.l1));
    r[j] = add_accurate(r[j], {-k[j] * c.l2, 0});
    r[j] = {r[j].hi * 0x1p-8, r[j].lo * 0x1p-8};  // exact, but for a low word below 2^-1014
  }
  // Terms of degree 5 and up are below 2^-40 of the sum: in double (r's high word; their error is
  // below 2^-52 of them, 2^-105 of e^r), the rest in double-double.
  for (size_t j = 0; j < N; ++j) t[j] = c.inv_fact[11].hi;
  for (size_t i = 10; i >= 5; --i)
    for (size_t j = 0; j < N; ++j) t[j] = std::fma(t[j], r[j].hi, c.inv_fact[i].hi);
  for (size_t j = 0; j < N; ++j) p[j] = {t[j], 0};
  for (size_t i = 5; i-- > 0;)
    for (size_t j = 0; j < N; ++j) p[j] = add_accurate(mul(p[j], r[j]), c.inv_fact[i]);
  for (int i = 0; i < 8; ++i)
    for (size_t j = 0; j < N; ++j) p[j] = mul(p[j], p[j]);
  for (size_t j = 0; j < N; ++j) {
    const double scale = pow2(static_cast<int>(k[j]));  // exact: both words stay normal
    y[j] = {p[j].hi * scale, p[j].lo * scale};
  }
}
inline DD exp_dd(DD x) {
  DD y;
  exp_dd_lanes<1>(&x, &y);
  return y;
}
// y[i] = exp_dd(x[i]) for i < n, 8 lanes at a time.
inline void exp_dd_many(const DD* x, DD* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) exp_dd_lanes<8>(x + i, y + i);
  for (; i < n; ++i) exp_dd_lanes<1>(x + i, y + i);
}

// e^x - 1 for a double x with 2^-900 <= |x| <= kExpm1SmallArg, relative error below 2^-98.5:
// r = x / 256 (exact), e^r - 1 = r p(r) with p's Taylor polynomial of degree 9 (|r| < 2^-8.4:
// truncation < 2^-109; degrees 5 to 9 in double: < 2^-103; 5 steps of DWTimesFP3 and
// AccurateDWPlusDW: < 25u^2), times r (2u^2): within 2^-100.7; then 8 doublings e -> e (e + 2). A
// relative error c of e becomes c (1 + |e| / (e + 2)) + 7u^2 (AccurateDWPlusDW, DWTimesDW3), and
// |e| / (e + 2) < 0.19, 0.09, 0.05, ... over the 8 steps (product < 1.42): 1.42 (2^-100.7 + 56u^2)
// < 2^-98.9. Both words stay normal (|r| >= 2^-908).
inline constexpr double kExpm1SmallArg = 0.75;
template <size_t N>
inline void expm1_small_lanes(const double* x, DD* y) {
  const ExpConstants& c = exp_constants();
  double r[N], t[N];
  DD p[N];
  for (size_t j = 0; j < N; ++j) {
    r[j] = x[j] * 0x1p-8;
    t[j] = c.inv_fact[10].hi;
  }
  for (size_t i = 9; i >= 6; --i)
    for (size_t j = 0; j < N; ++j) t[j] = std::fma(t[j], r[j], c.inv_fact[i].hi);
  for (size_t j = 0; j < N; ++j) p[j] = {t[j], 0};
  for (size_t i = 5; i >= 1; --i)
    for (size_t j = 0; j < N; ++j) p[j] = add_accurate(mul(p[j], r[j]), c.inv_fact[i]);
  for (size_t j = 0; j < N; ++j) y[j] = mul(p[j], r[j]);
  for (int i = 0; i < 8; ++i)
    for (size_t j = 0; j < N; ++j) y[j] = mul(y[j], add_accurate(y[j], {2, 0}));
}
inline DD expm1_small(double x) {
  DD y;
  expm1_small_lanes<1>(&x, &y);
  return y;
}

// Where the composite functions below take their e^x and small e^x - 1: computed at once, or
// (the oracles' batches) from values computed for many arguments together.
struct DirectPrimitives {
  DD exp(DD x) { return exp_dd(x); }
  DD expm1_small(double x) { return dd::expm1_small(x); }
};

// e^x 2^1074 for a double x in [-800, kMinExpArg): exp_dd(x + 1074 ln 2), the shift from two exact
// products and two AccurateDWPlusDW (absolute error < 2 x 3u^2 x 145 + 1074 |L2| < 2^-96): relative
// error below 2^-90.4. The scale where f64's subnormals are integers (round_f64_scaled).
// (A double-double x adds its own error, times |x|, to the argument's.)
template <class P = DirectPrimitives>
inline DD exp_scaled_1074(DD x, P&& prims = P{}) {
  const ExpConstants& c = exp_constants();
  DD a = add_accurate(x, two_prod(1074, c.l0));
  a = add_accurate(a, two_prod(1074, c.l1));
  return prims.exp(a);
}
template <class P = DirectPrimitives>
inline DD exp_scaled_1074(double x, P&& prims = P{}) {
  return exp_scaled_1074(DD{x, 0}, prims);
}

// e^x - 1 for a double x in [kMinExpArg, kMaxExpArg] with |x| >= 2^-900, relative error below
// 2^-89.5: expm1_small on [-0.75, 0.75]; elsewhere e^x - 1 from exp_dd, whose error grows by
// e^x / |e^x - 1| < 1.9.
template <class P = DirectPrimitives>
inline DD expm1_dd(double x, P&& prims = P{}) {
  if (std::fabs(x) <= kExpm1SmallArg) return prims.expm1_small(x);
  return add_accurate(prims.exp({x, 0}), {-1, 0});
}

// log(1 + t) for a double-double t with t.hi in [-0.5, 1] and |log1p(t.hi)| >= 2^-900, relative
// error below 2^-97.8; nullopt when libm's first guess is off by more than 2^-40 of itself. y0 =
// log1p(t.hi) from libm; its residual w = (1 + t) e^(-y0) - 1 = t + (1 + t) m with m = e^(-y0) - 1
// (expm1_small: |y0| < 0.7) carries an absolute error below |t| (2^-98.5 + 7u^2) (1 + 2^-39)
// (|(1 + t) m| = |t + w|), plus 3u^2 |w|; y = y0 + log1p(w) = y0 + w - w^2/2 (the next term is
// below 2^-121 |y|). With |y| >= 0.69 |t| on the domain, and the last sum's 3u^2: < 2^-97.8.
template <class P = DirectPrimitives>
inline std::optional<DD> log1p_dd(DD t, P&& prims = P{}) {
  if (!(t.hi >= -0.5 && t.hi <= 1)) return std::nullopt;
  const double y0 = std::log1p(t.hi);
  if (!(std::fabs(y0) >= 0x1p-900)) return std::nullopt;
  const DD m = prims.expm1_small(-y0);
  const DD w = add_accurate(t, mul(add_accurate({1, 0}, t), m));
  if (!(std::fabs(w.hi) <= std::fabs(y0) * 0x1p-40)) return std::nullopt;
  const DD c = add_accurate(w, {-0.5 * w.hi * w.hi, 0});
  return add_accurate({y0, 0}, c);
}

// log x for a double-double x > 0 with x.hi finite, relative error below 2^-95.4: for x.hi in
// [0.5, 2], log1p(x - 1) (x.hi - 1 exact: Sterbenz); elsewhere k ln 2 + log1p(f - 1) with x = 2^k
// f, f in [1, 2) (k ln 2 from two exact products and AccurateDWPlusDW: < 2^-103). For x.hi > 2 both
// terms are positive; for x.hi < 0.5, k <= -2 and the sum cancels by at most (|k| ln 2 + ln 2) /
// (|k| ln 2 - ln 2) <= 3: 3 x 2^-97.8 + 3u^2. Exact zero for x = 1.
template <class P = DirectPrimitives>
inline std::optional<DD> log_dd(DD x, P&& prims = P{}) {
  if (!(x.hi > 0 && x.hi <= 0x1.fffffffffffffp1023)) return std::nullopt;
  if (x.hi >= 0.5 && x.hi <= 2) {
    const DD t = two_sum(x.hi - 1, x.lo);
    if (t.hi == 0) return DD{0, 0};
    return log1p_dd(t, prims);
  }
  const int k = std::ilogb(x.hi);
  const DD t = two_sum(std::ldexp(x.hi, -k) - 1, std::ldexp(x.lo, -k));
  DD l{0, 0};
  if (t.hi != 0) {
    const auto lt = log1p_dd(t, prims);
    if (!lt) return std::nullopt;
    l = *lt;
  }
  const ExpConstants& c = exp_constants();
  const double kd = k;
  DD kl = add_accurate(two_prod(kd, c.l0), two_prod(kd, c.l1));
  kl = add_accurate(kl, {kd * c.l2, 0});
  return add_accurate(kl, l);
}

// The dtype's correct rounding of a value known as q = hi + lo within delta (absolute, at most
// 2^-60 |q|), when the whole interval rounds one way; nullopt otherwise, and for f64 below its
// normal range (round_f64_scaled takes those). An exact q (delta 0) that is 0, and a q that is
// one of the dtype's values with delta below a quarter of its spacing, round to themselves. f64:
// q's words come from Fast2Sum, so hi = RN(q), and q decides when its distance to the midpoint on
// lo's side exceeds delta (past DBL_MAX that midpoint is the overflow threshold). f32, f16 and
// bf16: their values and midpoints are doubles and rounding is monotone, so the ends of the
// interval, widened to doubles outward (two steps cover RN's half ulp), rounding alike decide it.
inline std::optional<double> round_double_double(DD q, double delta, DType dt) {
  if (q.hi < 0) {
    const auto r = round_double_double({-q.hi, -q.lo}, delta, dt);
    if (!r) return std::nullopt;
    return -*r;
  }
  if (q.hi == 0) {
    if (q.lo == 0 && delta == 0) return 0.0;
    return std::nullopt;
  }
  const Format& f = dtype_format(dt);
  if (q.lo == 0 && q.hi <= f.max_finite() && round_to_format(f, q.hi) == q.hi &&
      delta < format_quantum(f, q.hi) / 4)
    return q.hi;
  if (!(delta >= 0 && delta <= q.hi * 0x1p-60)) return std::nullopt;
  if (dt == DType::f64) {
    if (!(q.hi >= 0x1p-1020 && q.hi <= DBL_MAX)) return std::nullopt;
    const double gap =
        q.lo >= 0 ? std::ldexp(1.0, std::ilogb(q.hi) - 52) : q.hi - std::nextafter(q.hi, 0.0);
    if (gap / 2 - std::fabs(q.lo) > delta) return q.hi;
    return std::nullopt;
  }
  if (!(q.hi >= 0x1p-1000 && q.hi < 0x1p1000)) return std::nullopt;
  const double a = std::nextafter(std::nextafter(q.hi + (q.lo - delta), 0.0), 0.0);
  const double b = std::nextafter(std::nextafter(q.hi + (q.lo + delta), INFINITY), INFINITY);
  const double ra = round_to_format(f, a);
  if (ra != round_to_format(f, b)) return std::nullopt;
  return ra;
}

// The dtype's rounding of a value y strictly beyond a double-double c (held exactly) in direction
// dir (+1: y in (c, c + lmax], -1: y in [c - lmax, c)), for lmax far below c's spacing. When no
// rounding boundary (a representable value or a midpoint) lies in that interval or within 2^-103
// |c| of it, round_double_double decides it; otherwise c is the only boundary near and decides:
// a representable c is the result, a midpoint c gives its neighbour on dir's side (this is where
// x - m exact, minus a tiny log1p, lands on a tie).
inline std::optional<double> round_just_beyond(DD c, int dir, double lmax, DType dt) {
  if (!(lmax >= 0 && lmax <= std::fabs(c.hi) * 0x1p-70)) return std::nullopt;
  const DD q = add_accurate(c, {dir * lmax / 2, 0});  // within 3u^2 |q|
  if (auto r = round_double_double(q, lmax / 2 + std::fabs(c.hi) * 0x1p-103, dt)) return r;
  if (dt == DType::f64) {
    if (!(std::fabs(c.hi) >= 0x1p-1020)) return std::nullopt;
    if (c.lo == 0) return c.hi;
    const double up = std::nextafter(c.hi, INFINITY), down = std::nextafter(c.hi, -INFINITY);
    if (c.lo > 0 && c.lo == (up - c.hi) / 2) return dir > 0 ? up : c.hi;
    if (c.lo < 0 && -c.lo == (c.hi - down) / 2) return dir > 0 ? c.hi : down;
    return std::nullopt;
  }
  if (c.lo != 0) return std::nullopt;  // not a double: not a boundary of f32, f16 or bf16
  const Format& f = dtype_format(dt);
  if (round_to_format(f, c.hi) == c.hi) return c.hi;
  const double below = round_to_format(f, std::nextafter(c.hi, -INFINITY));
  const double above = round_to_format(f, std::nextafter(c.hi, INFINITY));
  if (below == above) return std::nullopt;
  return dir > 0 ? above : below;
}

// The f64 correct rounding of q 2^-1074, q known within delta (absolute, at most 2^-60 |q|, |q.hi|
// < 2^1000): f64's values are integers in this scale up to 2^52 (the subnormals and the first
// normal binade), and doubles with 53 bits above it, which round_double_double decides. Below
// 2^52, the nearest integer n to q is decided when q's distance to n +- 1/2 exceeds delta (the
// fraction (hi - floor hi) + lo is computed within 2^-52).
inline std::optional<double> round_f64_scaled(DD q, double delta) {
  if (q.hi < 0) {
    const auto r = round_f64_scaled({-q.hi, -q.lo}, delta);
    if (!r) return std::nullopt;
    return -*r;
  }
  if (!(q.hi >= 0 && delta >= 0 && delta <= q.hi * 0x1p-60)) return std::nullopt;
  if (q.hi >= 0x1p52) {
    if (!(q.hi < 0x1p1000)) return std::nullopt;
    const auto r = round_double_double(q, delta, DType::f64);
    if (!r) return std::nullopt;
    return std::ldexp(*r, -1074);
  }
  const double n0 = std::floor(q.hi);
  const double frac = (q.hi - n0) + q.lo;  // q.hi - n0 exact
  if (!(std::fabs(frac - 0.5) > delta + 0x1p-52)) return std::nullopt;
  return std::ldexp(frac > 0.5 ? n0 + 1 : n0, -1074);
}

// The dtype's rounding of a double-double y known within `bound` (absolute), by its magnitude and
// sign; through MPFR at 128 bits when the interval's ends are doubles that round apart; nullopt for
// y = 0, a bound over 2^-60 |y| and undecided results.
inline std::optional<double> round_signed(DD y, double bound, DType dt) {
  if (y.hi == 0) return std::nullopt;
  const bool neg = y.hi < 0;
  const DD a = neg ? DD{-y.hi, -y.lo} : y;
  if (!(bound <= a.hi * 0x1p-60)) return std::nullopt;
  std::optional<double> r = round_double_double(a, bound, dt);
  if (!r) {
    if (bound == 0) return std::nullopt;  // an exact tie: left to the caller's MPFR path
    Real v(128);
    mpfr_set_d(v, a.hi, MPFR_RNDN);
    mpfr_add_d(v, v, a.lo, MPFR_RNDN);  // within 2^-128
    const long err_bits = std::ilogb(a.hi) - std::ilogb(bound) - 2;
    r = round_decided(v, err_bits, dt);
    if (!r) return std::nullopt;
  }
  return neg ? -*r : *r;
}

}  // namespace stabfuzz::oracle::dd
