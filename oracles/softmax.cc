// Softmax oracle in MPFR with Ziv's precision ladder.
#include "oracles/softmax.h"

#include <array>
#include <cmath>

#include "oracles/double_double.h"
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

using dd::DD;

// Rows the double-double path takes: every x finite, x_j - m >= kMinDiff (e^(x_j - m) >= 2^-866,
// so both words stay normal), at most kMaxTerms terms (the sum's bound below).
constexpr double kMinDiff = dd::kMinExpArg;
constexpr size_t kMaxTerms = 4096;
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
    const DD d = dd::two_sum(x[j], -m);
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
      e[j] = d;  // the argument, until exp_dd_many below
    }
  }
  std::vector<DD> args, vals;
  std::vector<size_t> at;
  for (size_t j = 0; j < n; ++j)
    if (kind[j] == Term::dd) {
      at.push_back(j);
      args.push_back(e[j]);
    }
  vals.resize(args.size());
  dd::exp_dd_many(args.data(), vals.data(), args.size());
  for (size_t k = 0; k < at.size(); ++k) e[at[k]] = vals[k];
  for (size_t j = 0; j < n; ++j) {
    if (kind[j] != Term::dd && kind[j] != Term::mpfr) continue;
    s = dd::add_accurate(s, e[j]);
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
      const DD q = dd::div(e[i], s);
      r = dd::round_double_double(q, q.hi * 0x1p-86, in.dtype);
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
