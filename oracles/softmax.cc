// Softmax oracle in MPFR with Ziv's precision ladder.
#include "oracles/softmax.h"

#include <cmath>

#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle {
namespace {

// Exact difference of two doubles: exponents span [-1074, 1023] and 53 bits, so 2150 bits hold it.
constexpr mpfr_prec_t kExactDiffPrec = 2150;

struct Attempt {
  bool decided = true;
  std::vector<double> exact;
  std::vector<double> cond;
};

Attempt evaluate(const std::vector<double>& x, DType dt, mpfr_prec_t p) {
  const size_t n = x.size();
  double m = -INFINITY;
  for (double v : x) m = std::fmax(m, v);
  std::vector<Real> e, ex;  // e_j = exp(x_j - m), ex_j = e_j |x_j|
  e.reserve(n);
  ex.reserve(n);
  Real d(kExactDiffPrec);
  for (size_t j = 0; j < n; ++j) {
    e.emplace_back(p);
    ex.emplace_back(p);
    if (std::isinf(x[j])) {  // -inf entry: contributes exactly 0
      mpfr_set_zero(e.back(), 1);
      mpfr_set_zero(ex.back(), 1);
      continue;
    }
    mpfr_set_d(d, x[j], MPFR_RNDN);
    mpfr_sub_d(d, d, m, MPFR_RNDN);    // exact
    mpfr_exp(e.back(), d, MPFR_RNDN);  // rel. error <= 2^-p
    mpfr_mul_d(ex.back(), e.back(), std::fabs(x[j]), MPFR_RNDN);
  }
  Real s(p), b(p);
  sum(s, e);  // rel. error <= 2^-p + 2^-p (terms, then the sum's own rounding)
  sum(b, ex);
  Attempt a;
  a.exact.resize(n);
  a.cond.resize(n);
  Real y(p), t(p), u(p);
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
    // cond_i = (|x_i| (S - e_i) + B - e_i |x_i|) / S; a few correct digits are all we need.
    mpfr_sub(t, s, e[i], MPFR_RNDN);
    mpfr_mul_d(t, t, std::fabs(x[i]), MPFR_RNDN);
    mpfr_add(t, t, b, MPFR_RNDN);
    mpfr_sub(t, t, ex[i], MPFR_RNDN);
    mpfr_div(u, t, s, MPFR_RNDN);
    a.cond[i] = std::fmax(0.0, mpfr_get_d(u, MPFR_RNDN));
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
