// Softmax oracle in MPFR with Ziv's precision ladder.
#include "oracles/softmax.h"

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
    // cond_i = (|x_i| (S - e_i) + B - e_i |x_i|) / S.
    const long double c = (std::fabs(static_cast<long double>(x[i])) * sum_without(el, s_l, i) +
                           sum_without(exl, b_l, i)) /
                          s_l;
    a.cond[i] = std::fmax(0.0, static_cast<double>(c));
  }
  return a;
}

}  // namespace

OracleResult softmax(const Input& in) {
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

}  // namespace stabfuzz::oracle
