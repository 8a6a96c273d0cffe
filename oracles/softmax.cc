// Softmax oracle in MPFR with Ziv's precision ladder.
#include "oracles/softmax.h"

#include <array>
#include <cmath>

#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle {
namespace {

// Exact difference of two doubles: exponents span [-1074, 1023] and 53 bits, so 2150 bits hold it.
// Most differences fit in 128 bits, and mpfr_exp of a 128-bit argument costs a quarter less than
// of a 2150-bit one: the short one first, the long one when the subtraction was inexact.
constexpr mpfr_prec_t kExactDiffPrec = 2150;
constexpr mpfr_prec_t kShortDiffPrec = 128;

struct Attempt {
  bool decided = true;
  std::vector<double> exact;
  std::vector<double> cond;
};

// sum_{j != i} v_j of nonnegative terms with total `total`: total - v_i where v_i is at most half
// of it (no cancellation), the other terms added up otherwise (at most one such i).
long double sum_without(const std::vector<long double>& v, long double total, size_t i) {
  if (v[i] <= total / 2) return total - v[i];
  long double r = 0;
  for (size_t j = 0; j < v.size(); ++j)
    if (j != i) r += v[j];
  return r;
}

// cond_i = (|x_i| (S - e_i) + B - e_i |x_i|) / S from long double copies of e_j (el, sum s_l) and
// e_j |x_j| (exl, sum b_l): a few correct digits are all a condition number needs.
double softmax_cond(double xi, const std::vector<long double>& el, long double s_l,
                    const std::vector<long double>& exl, long double b_l, size_t i) {
  const long double c = (std::fabs(static_cast<long double>(xi)) * sum_without(el, s_l, i) +
                         sum_without(exl, b_l, i)) /
                        s_l;
  return std::fmax(0.0, static_cast<double>(c));
}

Attempt evaluate(const std::vector<double>& x, DType dt, mpfr_prec_t p) {
  const size_t n = x.size();
  double m = -INFINITY;
  for (double v : x) m = std::fmax(m, v);
  std::vector<Real> e;  // e_j = exp(x_j - m)
  e.reserve(n);
  // The condition numbers need a few correct digits: e_j and e_j |x_j| in long double, all
  // nonnegative, so their sums lose nothing to cancellation.
  std::vector<long double> el(n), exl(n);
  long double s_l = 0, b_l = 0;
  Real d(kShortDiffPrec), wide(kExactDiffPrec);
  for (size_t j = 0; j < n; ++j) {
    e.emplace_back(p);
    if (std::isinf(x[j])) {  // -inf entry: contributes exactly 0
      mpfr_set_zero(e.back(), 1);
      continue;
    }
    mpfr_set_d(d, x[j], MPFR_RNDN);
    if (mpfr_sub_d(d, d, m, MPFR_RNDN) == 0) {  // exact in 128 bits
      mpfr_exp(e.back(), d, MPFR_RNDN);         // rel. error <= 2^-p
    } else {
      mpfr_set_d(wide, x[j], MPFR_RNDN);
      mpfr_sub_d(wide, wide, m, MPFR_RNDN);  // exact
      mpfr_exp(e.back(), wide, MPFR_RNDN);
    }
    el[j] = approx_long_double(e.back());
    exl[j] = el[j] * std::fabs(static_cast<long double>(x[j]));
    s_l += el[j];
    b_l += exl[j];
  }
  Real s(p);
  sum(s, e);  // rel. error <= 2^-p + 2^-p (terms, then the sum's own rounding)
  Attempt a;
  a.exact.resize(n);
  a.cond.resize(n);
  Real y(p);
  for (size_t i = 0; i < n; ++i) {
    mpfr_div(y, e[i], s, MPFR_RNDN);  // total rel. error <= 4 * 2^-p (+ second order)
    auto r = round_decided(y, p - 3, dt);
    if (!r) {
      a.decided = false;
      return a;
    }
    a.exact[i] = *r;
    if (std::isinf(x[i])) {
      a.cond[i] = 0;
      continue;
    }
    a.cond[i] = softmax_cond(x[i], el, s_l, exl, b_l, i);
  }
  return a;
}

// ---- double-double ---------------------------------------------------------------------------
// Values hi + lo with |lo| <= ulp(hi) / 2; u = 2^-53. Error bounds from Joldes, Muller and
// Popescu, "Tight and rigorous error bounds for basic building blocks of double-word
// arithmetic" (ACM TOMS 2017): AccurateDWPlusDW <= 3u^2,  DWTimesDW3 <= 4u^2, DWTimesFP3 <= 2u^2,
// DWDivDW2 <= 15u^2 + 56u^3.
struct DD {
  double hi, lo;
};
DD two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
DD fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
DD add_accurate(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}
DD mul(DD a, DD b) {  // DWTimesDW3
  const DD c = two_prod(a.hi, b.hi);
  const double t = std::fma(a.lo, b.hi, std::fma(a.hi, b.lo, a.lo * b.lo));
  return fast_two_sum(c.hi, c.lo + t);
}
DD mul(DD a, double b) {
  const DD c = two_prod(a.hi, b);
  return fast_two_sum(c.hi, std::fma(a.lo, b, c.lo));
}
DD div(DD a, DD b) {
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
const ExpConstants& exp_constants() {
  static const ExpConstants c;
  return c;
}

// Rows the double-double path takes: every x finite, x_j - m >= kMinDiff (e^(x_j - m) >= 2^-866,
// so both words stay normal), at most kMaxTerms terms (the sum's bound below).
constexpr double kMinDiff = -600;
constexpr size_t kMaxTerms = 4096;
// e^x for a double-double x in [kMinDiff, 0] (plus rounding): x = k ln2 + r, r = x - k (L0 + L1
// + L2) with two exact products and AccurateDWPlusDW (absolute error <= 3 x 3u^2 x 600 < 2^-94),
// e^(r / 256) by its Taylor polynomial of degree 11 (|r / 256| < 0.0014: truncation < 2^-150;
// the terms from degree 5 in double: < 2^-105; 5 steps of DWTimesDW3 and AccurateDWPlusDW:
// < 5 x 7u^2 < 2^-99), squared 8
// times (relative error e -> 2e + 4u^2: 256 x 2^-99 + 255 x 4u^2 < 2^-90.9), times 2^k (exact).
// Relative error below 2^-90.9 + 2^-94 < 2^-90.5.
DD exp_dd(DD x) {
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

}  // namespace

namespace detail {

OracleResult softmax_mpfr(const Input& in) {
  const auto& x = in.args.at(0).values;
  OracleResult res;
  for (mpfr_prec_t p = start_precision(); p <= kPrecisionCap; p *= 2) {
    Attempt a = evaluate(x, in.dtype, p);
    if (a.decided) {
      res.exact = std::move(a.exact);
      res.cond = std::move(a.cond);
      res.precision_bits = p;
      return res;
    }
  }
  res.decidable = false;
  return res;
}

// y_i = e_i / S: e_i within 2^-90.5 (exp_dd); S, an AccurateDWPlusDW sum of at most 4096 positive
// terms, within 2^-90.5 + 4096 x 3u^2 < 2^-89.9; the quotient within 2^-90.5 + 2^-89.9 + 2^-102
// < 2^-89; hi + lo set in 128 bits (2^-128). round_decided is told 2^-86.
// The dtype's correct rounding of a positive value known as q = hi + lo within |q| 2^-86, when
// the whole interval rounds one way: f64 and f32 in their normal range (others: nullopt, and
// round_decided takes them). q's words come from Fast2Sum, so hi = RN(q) in f64.
std::optional<double> round_double_double(DD q, DType dt) {
  const double delta = q.hi * 0x1p-86;
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

std::optional<OracleResult> softmax_double_double(const Input& in) {
  const auto& x = in.args.at(0).values;
  const size_t n = x.size();
  if (n == 0 || n > kMaxTerms) return std::nullopt;
  double m = -INFINITY;
  for (double v : x) {
    if (std::isnan(v) || v == INFINITY) return std::nullopt;
    m = std::fmax(m, v);
  }
  if (!std::isfinite(m)) return std::nullopt;
  // Each term: -inf (exactly 0), e^(x_j - m) below 2^-1076 (its quotient rounds to 0 in every
  // format; S gains less than 4096 x 2^-1076), in [2^-1076, 2^-865] (MPFR, 96 bits, and its
  // quotient in MPFR), or exp_dd.
  enum class Term : uint8_t { zero, tiny, mpfr, dd };
  std::vector<Term> kind(n, Term::dd);
  std::vector<DD> e(n);
  std::vector<long double> el(n), exl(n);
  std::vector<Real> big;  // the MPFR terms, in order
  DD s{0, 0};
  long double s_l = 0, b_l = 0;
  Real dm(kShortDiffPrec), wide(kExactDiffPrec);
  for (size_t j = 0; j < n; ++j) {
    if (x[j] == -INFINITY) {
      kind[j] = Term::zero;
      continue;
    }
    const DD d = two_sum(x[j], -m);
    if (!std::isfinite(d.hi) || d.hi < -746) {  // e^(x_j - m) < 2^-1076
      kind[j] = Term::tiny;
      continue;
    }
    if (d.hi < kMinDiff) {
      kind[j] = Term::mpfr;
      big.emplace_back(96);
      mpfr_set_d(dm, x[j], MPFR_RNDN);
      if (mpfr_sub_d(dm, dm, m, MPFR_RNDN) == 0) {
        mpfr_exp(big.back(), dm, MPFR_RNDN);
      } else {
        mpfr_set_d(wide, x[j], MPFR_RNDN);
        mpfr_sub_d(wide, wide, m, MPFR_RNDN);
        mpfr_exp(big.back(), wide, MPFR_RNDN);
      }
      const double h = mpfr_get_d(big.back(), MPFR_RNDN);
      mpfr_sub_d(dm, big.back(), h, MPFR_RNDN);
      e[j] = {h, mpfr_get_d(dm, MPFR_RNDN)};  // within 2^-1074 of e^(x_j - m): nothing to S
    } else {
      e[j] = exp_dd(d);
    }
    s = add_accurate(s, e[j]);
    el[j] = static_cast<long double>(e[j].hi) + e[j].lo;
    exl[j] = el[j] * std::fabs(static_cast<long double>(x[j]));
    s_l += el[j];
    b_l += exl[j];
  }
  OracleResult res;
  res.exact.resize(n);
  res.cond.resize(n);
  Real y(128), sm(128);
  mpfr_set_d(sm, s.hi, MPFR_RNDN);
  mpfr_add_d(sm, sm, s.lo, MPFR_RNDN);
  size_t next_big = 0;
  for (size_t i = 0; i < n; ++i) {
    std::optional<double> r;
    if (kind[i] == Term::zero || kind[i] == Term::tiny) {
      r = 0.0;
    } else if (kind[i] == Term::mpfr) {  // e_i within 2^-96, S within 2^-89.9: y within 2^-89
      mpfr_div(y, big[next_big++], sm, MPFR_RNDN);
      r = round_decided(y, 86, in.dtype);
    } else {
      const DD q = div(e[i], s);
      r = round_double_double(q, in.dtype);
      if (!r) {
        mpfr_set_d(y, q.hi, MPFR_RNDN);
        mpfr_add_d(y, y, q.lo, MPFR_RNDN);
        r = round_decided(y, 86, in.dtype);
      }
    }
    if (!r) return std::nullopt;
    res.exact[i] = *r;
    if (kind[i] == Term::zero) {
      res.cond[i] = 0;
      continue;
    }
    res.cond[i] = softmax_cond(x[i], el, s_l, exl, b_l, i);
  }
  res.precision_bits = 106;
  return res;
}

}  // namespace detail

OracleResult softmax(const Input& in) {
  if (auto r = detail::softmax_double_double(in)) return std::move(*r);
  return detail::softmax_mpfr(in);
}

}  // namespace stabfuzz::oracle
