// Decidable rounding of MPFR approximations to f32/f64, and correctly rounded sums.
#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle {

double round_nearest(mpfr_srcptr x, DType d) {
  // mpfr_get_d / mpfr_get_flt round once, directly from the MPFR value, subnormals included.
  return d == DType::f64 ? mpfr_get_d(x, MPFR_RNDN) : static_cast<double>(mpfr_get_flt(x, MPFR_RNDN));
}

std::optional<double> round_decided(mpfr_srcptr approx, long err_bits, DType d) {
  if (mpfr_nan_p(approx)) return std::nullopt;
  if (mpfr_inf_p(approx) || mpfr_zero_p(approx)) return mpfr_get_d(approx, MPFR_RNDN);
  const mpfr_prec_t p = mpfr_get_prec(approx) + err_bits + 4;
  Real delta(p), lo(p), hi(p);
  mpfr_abs(delta, approx, MPFR_RNDN);
  mpfr_mul_2si(delta, delta, -err_bits, MPFR_RNDU);  // exact: a power-of-two scaling
  mpfr_sub(lo, approx, delta, MPFR_RNDD);              // exact at this precision
  mpfr_add(hi, approx, delta, MPFR_RNDU);
  const double a = round_nearest(lo, d), b = round_nearest(hi, d);
  if (a != b) return std::nullopt;
  return round_nearest(approx, d);
}

void sum(mpfr_ptr out, const std::vector<Real>& terms) {
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (const auto& t : terms) ptrs.push_back(const_cast<mpfr_ptr>(t.get()));
  mpfr_sum(out, ptrs.data(), ptrs.size(), MPFR_RNDN);
}

OracleResult ziv(const std::function<bool(mpfr_prec_t, OracleResult&)>& attempt) {
  for (mpfr_prec_t p = kStartPrecision; p <= kPrecisionCap; p *= 2) {
    OracleResult r;
    if (attempt(p, r)) {
      r.decidable = true;
      r.precision_bits = p;
      return r;
    }
  }
  OracleResult r;
  r.decidable = false;
  return r;
}

OracleResult elementwise(const Input& in, const std::function<void(mpfr_ptr y, mpfr_srcptr x)>& f,
                         long err_margin_bits, const std::function<double(double x)>& cond) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real xm(kExactDoublePrecision), y(p);
    r.exact.resize(x.size());
    r.cond.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      mpfr_set_d(xm, x[i], MPFR_RNDN);
      f(y, xm);
      auto e = round_decided(y, p - err_margin_bits, in.dtype);
      if (!e) return false;
      r.exact[i] = *e;
      r.cond[i] = cond(x[i]);
    }
    return true;
  });
}

}  // namespace stabfuzz::oracle
