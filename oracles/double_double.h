// Double-double arithmetic for the oracles' fast paths: values hi + lo with |lo| <= ulp(hi) / 2
// and operations with proven relative error bounds, e^x on [kMinExpArg, 0], and the correct
// rounding of a double-double known within an absolute bound. Each user states the bound of its
// whole evaluation and falls back to MPFR (Ziv's ladder) when a result is not decided.
#pragma once

#include <array>
#include <cmath>
#include <optional>

#include "oracles/mpfr_util.h"
#include "stabfuzz/dtype.h"

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

// The smallest argument of exp: e^x >= 2^-866 keeps both words normal.
inline constexpr double kMinExpArg = -600;
// e^x for a double-double x in [kMinExpArg, 0] (plus rounding): x = k ln2 + r, r = x - k (L0 + L1
// + L2) with two exact products and AccurateDWPlusDW (absolute error <= 3 x 3u^2 x 600 < 2^-94),
// e^(r / 256) by its Taylor polynomial of degree 11 (|r / 256| < 0.0014: truncation < 2^-150;
// the terms from degree 5 in double: < 2^-105; 5 steps of DWTimesDW3 and AccurateDWPlusDW:
// < 5 x 7u^2 < 2^-99), squared 8
// times (relative error e -> 2e + 4u^2: 256 x 2^-99 + 255 x 4u^2 < 2^-90.9), times 2^k (exact).
// Relative error below 2^-90.9 + 2^-94 < 2^-90.5.
inline DD exp_dd(DD x) {
  const ExpConstants& c = exp_constants();
  const double k = std::nearbyint(x.hi * 1.4426950408889634);
  DD r = add_accurate(x, two_prod(-k, c.l0));
  r = add_accurate(r, two_prod(-k, c.l1));
  r = add_accurate(r, {-k * c.l2, 0});
  r = {std::ldexp(r.hi, -8), std::ldexp(r.lo, -8)};
  // Terms of degree 5 and up are below 2^-40 of the sum: in double (r's high word; their error is
  // below 2^-52 of them, 2^-105 of e^r), the rest in double-double.
  double t = c.inv_fact[11].hi;
  for (size_t i = 10; i >= 5; --i) t = std::fma(t, r.hi, c.inv_fact[i].hi);
  DD p{t, 0};
  for (int i = 4; i >= 0; --i) p = add_accurate(mul(p, r), c.inv_fact[static_cast<size_t>(i)]);
  for (int i = 0; i < 8; ++i) p = mul(p, p);
  const int ki = static_cast<int>(k);
  return {std::ldexp(p.hi, ki), std::ldexp(p.lo, ki)};
}

// The dtype's correct rounding of a positive value known as q = hi + lo within delta (absolute,
// at most 2^-60 |q|), when the whole interval rounds one way: f64 and f32 in their normal range
// (others: nullopt, and round_decided takes them). q's words come from Fast2Sum, so hi = RN(q) in
// f64.
inline std::optional<double> round_double_double(DD q, double delta, DType dt) {
  if (dt == DType::f64) {
    if (!(q.hi >= 0x1p-1020 && q.hi < 0x1p1020)) return std::nullopt;
    const double gap =
        q.lo >= 0 ? std::nextafter(q.hi, INFINITY) - q.hi : q.hi - std::nextafter(q.hi, 0.0);
    if (gap / 2 - std::fabs(q.lo) > delta) return q.hi;
    return std::nullopt;
  }
  if (dt == DType::f32) {
    if (!(q.hi >= 0x1p-124 && q.hi < 0x1p126)) return std::nullopt;
    const float c = static_cast<float>(q.hi);
    const DD d = two_sum(q.hi - static_cast<double>(c), q.lo);  // q - c, exactly
    const double cd = c;
    const double gap = d.hi >= 0 ? static_cast<double>(std::nextafter(c, INFINITY)) - cd
                                 : cd - static_cast<double>(std::nextafter(c, 0.0f));
    if (gap / 2 - std::fabs(d.hi) > delta + std::fabs(d.lo)) return cd;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace stabfuzz::oracle::dd
