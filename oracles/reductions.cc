// Reduction oracles in MPFR: exact sums where cheap, Ziv's ladder with error bounds elsewhere.
#include "oracles/reductions.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"
#include "stabfuzz/params.h"

namespace stabfuzz::oracle {
namespace {

// Exact difference of two doubles: exponents span [-1074, 1023] and 53 bits, so 2150 bits hold it.
constexpr mpfr_prec_t kExactDiffPrec = 2150;
// Precision for condition numbers: a few correct digits are all a tolerance needs.
constexpr mpfr_prec_t kCondPrec = 64;

// Bits that hold any partial sum of x exactly: every x_i is a multiple of 2^lsb with
// lsb >= max(ilogb - 52, -1074), and |partial sum| < n 2^(top + 1).
mpfr_prec_t exact_sum_precision(const std::vector<double>& x) {
  int top = INT_MIN, lsb = INT_MAX;
  for (double v : x) {
    if (v == 0 || !std::isfinite(v)) continue;
    const int e = std::ilogb(v);
    top = std::max(top, e);
    lsb = std::min(lsb, std::max(e - 52, -1074));
  }
  if (top == INT_MIN) return kExactDoublePrecision;
  const int grow = static_cast<int>(std::ceil(std::log2(static_cast<double>(x.size())))) + 1;
  return static_cast<mpfr_prec_t>(top - lsb + grow + 2);
}

// sum |x| / |s| for an exact sum s; inf when s = 0 but not every term is (see the header).
double sum_cond(long double abs_sum, mpfr_srcptr s) {
  if (mpfr_zero_p(s)) return abs_sum == 0 ? 0.0 : INFINITY;
  return static_cast<double>(abs_sum / std::fabs(approx_long_double(s)));
}

// Running exact prefix sums: `emit(k, s)` sees the exact sum of x_0..x_k. False if an addition
// was inexact, which the precision above rules out (then the result is undecidable, not guessed).
template <class Emit>
bool exact_prefix_sums(const std::vector<double>& x, mpfr_prec_t prec, const Emit& emit) {
  Real s(prec);
  mpfr_set_zero(s, 1);
  for (size_t k = 0; k < x.size(); ++k) {
    if (mpfr_add_d(s, s, x[k], MPFR_RNDN) != 0) return false;
    emit(k, s.get());
  }
  return true;
}

OracleResult undecidable() {
  OracleResult r;
  r.decidable = false;
  return r;
}

// ---- log-sum-exp scan -------------------------------------------------------------------------

// Running logsumexp of a row at working precision p, shifted by the running maximum m:
// y = m + log1p(t), t = sum over the prefix of e^(x_i - m) except one instance of the maximum
// (log1p keeps y accurate when one logit dominates and y is near 0).
//
// Error bound: x_i - m is exact (kExactDiffPrec); each step rounds t at most three times
// (exp, add, multiply by the rescale factor), all on positive terms, so after s steps t has
// relative error <= eps_t = 3s 2^-p (1 + o(1)) <= (4s + 4) 2^-p. Since t / (1 + t) <= log1p(t),
// log1p(t) then errs by <= (eps_t + 2^-p) L, L = log1p(t), and y = m + L by a further 2^-p |y|:
// |err| / |y| <= (4s + 5) 2^-p L / |y| + 2^-p, which err_bits below bounds from the exponents.
class LseScan {
 public:
  LseScan(mpfr_prec_t p, DType d)
      : p_(p), d_(d), t_(p), b_(p), e_(p), l_(p), y_(p), diff_(kExactDiffPrec) {
    mpfr_set_zero(t_, 1);
    mpfr_set_zero(b_, 1);
  }

  void add(double x) {
    if (x == INFINITY) pos_inf_ = true;
    if (pos_inf_ || x == -INFINITY) return;
    if (m_ == -INFINITY) {
      m_ = x;
      mpfr_set_d(b_, std::fabs(x), MPFR_RNDN);
      return;
    }
    ++steps_;
    if (x > m_) {  // new maximum: the old one joins t, and t, b are rescaled by e^(m - x)
      mpfr_set_d(diff_, m_, MPFR_RNDN);
      mpfr_sub_d(diff_, diff_, x, MPFR_RNDN);  // exact
      mpfr_exp(e_, diff_, MPFR_RNDN);
      mpfr_add_ui(t_, t_, 1, MPFR_RNDN);
      mpfr_mul(t_, t_, e_, MPFR_RNDN);
      mpfr_mul(b_, b_, e_, MPFR_RNDN);
      mpfr_add_d(b_, b_, std::fabs(x), MPFR_RNDN);
      m_ = x;
    } else {
      mpfr_set_d(diff_, x, MPFR_RNDN);
      mpfr_sub_d(diff_, diff_, m_, MPFR_RNDN);  // exact
      mpfr_exp(e_, diff_, MPFR_RNDN);
      mpfr_add(t_, t_, e_, MPFR_RNDN);
      mpfr_mul_d(e_, e_, std::fabs(x), MPFR_RNDN);
      mpfr_add(b_, b_, e_, MPFR_RNDN);
    }
  }

  // The current logsumexp rounded to the dtype and its condition number; false if undecided.
  bool value(double& exact, double& cond) {
    cond = 0;
    if (pos_inf_ || m_ == -INFINITY) {  // exact infinities
      exact = pos_inf_ ? INFINITY : -INFINITY;
      return true;
    }
    mpfr_log1p(l_, t_, MPFR_RNDN);
    mpfr_add_d(y_, l_, m_, MPFR_RNDN);
    if (mpfr_zero_p(y_)) {
      // y = 0 only for m = 0 with nothing else (or terms below MPFR's range: y < 2^-2^30 -> +0).
      if (m_ != 0 || !mpfr_zero_p(l_)) return false;
      exact = 0;
      return true;
    }
    const long c = static_cast<long>(std::ceil(std::log2(4.0 * static_cast<double>(steps_) + 5.0)));
    const long extra =
        mpfr_zero_p(l_) ? 0
                        : std::max(0L, static_cast<long>(mpfr_get_exp(l_) - mpfr_get_exp(y_)) + 1);
    const auto r = round_decided(y_, static_cast<long>(p_) - c - extra - 1, d_);
    if (!r) return false;
    exact = *r;
    // cond = sum e^(x_i - m) |x_i| / ((1 + t) |y|)
    Real den(kCondPrec), q(kCondPrec);
    mpfr_add_ui(den, t_, 1, MPFR_RNDN);
    mpfr_mul(den, den, y_, MPFR_RNDN);
    mpfr_abs(den, den, MPFR_RNDN);
    mpfr_div(q, b_, den, MPFR_RNDN);
    cond = mpfr_get_d(q, MPFR_RNDN);
    return true;
  }

 private:
  mpfr_prec_t p_;
  DType d_;
  Real t_, b_, e_, l_, y_, diff_;
  double m_ = -INFINITY;
  bool pos_inf_ = false;
  size_t steps_ = 0;
};

// Variance (or std) at working precision p. The mean m^ = S/n is rounded once (S exact), with
// |m^ - m| = delta <= 2^-p |m^|; sum (x_i - m^)^2 = sum (x_i - m)^2 + n delta^2 since
// sum (x_i - m) = 0, and we require n delta^2 <= 2^-p / 2 of the computed sum. Then the
// differences (2^-p each, doubled by squaring), squares (2^-p), mpfr_sum (2^-p) and the division
// (2^-p) give a relative error <= 6.1 2^-p < 2^-(p-3); the square root halves it and adds 2^-p:
// < 2^-(p-3) too. So err_bits = p - 3. When no step rounded, the value is exact and is rounded
// directly (var of two values is often a tie of the output format).
bool variance_at(const std::vector<double>& x, mpfr_srcptr s, double unbiased, bool take_sqrt,
                 DType d, mpfr_prec_t p, OracleResult& r) {
  const size_t n = x.size();
  Real mean(p), dev(p), s2(p), v(p);
  const bool mean_inexact = mpfr_div_ui(mean, s, static_cast<unsigned long>(n), MPFR_RNDN) != 0;
  bool inexact = mean_inexact;  // any rounding at all: when none, the result is exact (a tie)
  std::vector<Real> sq, dx;
  sq.reserve(n);
  dx.reserve(n);
  for (double xi : x) {
    inexact |= mpfr_d_sub(dev, xi, mean, MPFR_RNDN) != 0;
    sq.emplace_back(p);
    inexact |= mpfr_sqr(sq.back(), dev, MPFR_RNDN) != 0;
    dx.emplace_back(kCondPrec);
    mpfr_mul_d(dx.back(), dev, std::fabs(xi), MPFR_RNDN);
    mpfr_abs(dx.back(), dx.back(), MPFR_RNDN);
  }
  std::vector<mpfr_ptr> ptrs;
  for (auto& t : sq) ptrs.push_back(t.get());
  inexact |= mpfr_sum(s2, ptrs.data(), ptrs.size(), MPFR_RNDN) != 0;
  if (mpfr_zero_p(s2)) {
    if (mean_inexact) return false;  // x_i == m^ for all i forces m^ == m; never guess
    r.exact = {0.0};
    r.cond = {0.0};
    return true;
  }
  if (mean_inexact) {
    Real lhs(kCondPrec), rhs(kCondPrec);
    mpfr_sqr(lhs, mean, MPFR_RNDU);
    mpfr_mul_ui(lhs, lhs, static_cast<unsigned long>(n), MPFR_RNDU);
    mpfr_mul_2si(lhs, lhs, -2 * static_cast<long>(p) + 1, MPFR_RNDU);  // 2 n (2^-p m^)^2
    mpfr_mul_2si(rhs, s2, -static_cast<long>(p), MPFR_RNDD);
    mpfr_nextbelow(rhs);
    if (mpfr_greater_p(lhs, rhs)) return false;
  }
  inexact |= mpfr_div_ui(v, s2, static_cast<unsigned long>(static_cast<double>(n) - unbiased),
                         MPFR_RNDN) != 0;
  if (take_sqrt) inexact |= mpfr_sqrt(v, v, MPFR_RNDN) != 0;
  const auto e = inexact ? round_decided(v, static_cast<long>(p) - 3, d)
                         : std::optional<double>(round_nearest(v, d));
  if (!e) return false;
  Real c(kCondPrec);
  sum(c, dx);
  mpfr_mul_2si(c, c, 1, MPFR_RNDN);
  mpfr_div(c, c, s2, MPFR_RNDN);  // 2 sum |d_i x_i| / sum d_i^2
  r.exact = {*e};
  r.cond = {mpfr_get_d(c, MPFR_RNDN) / (take_sqrt ? 2 : 1)};
  return true;
}

OracleResult variance_impl(const Input& in, bool take_sqrt) {
  const auto& x = in.args.at(0).values;
  Real s(exact_sum_precision(x));
  if (!exact_prefix_sums(x, mpfr_get_prec(s), [&](size_t k, mpfr_srcptr v) {
        if (k + 1 == x.size()) mpfr_set(s, v, MPFR_RNDN);  // exact: same precision
      }))
    return undecidable();
  const double unbiased = in.param("unbiased", params::kUnbiasedDefault);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return variance_at(x, s, unbiased, take_sqrt, in.dtype, p, r);
  });
}

}  // namespace

OracleResult reduce_sum(const Input& in) {
  const auto& x = in.args.at(0).values;
  OracleResult r;
  r.precision_bits = exact_sum_precision(x);
  long double abs_sum = 0;
  for (double v : x) abs_sum += std::fabs(v);
  if (!exact_prefix_sums(x, r.precision_bits, [&](size_t k, mpfr_srcptr s) {
        if (k + 1 < x.size()) return;
        r.exact = {round_nearest(s, in.dtype)};
        r.cond = {sum_cond(abs_sum, s)};
      }))
    return undecidable();
  return r;
}

OracleResult reduce_mean(const Input& in) {
  const auto& x = in.args.at(0).values;
  Real s(exact_sum_precision(x));
  long double abs_sum = 0;
  for (double v : x) abs_sum += std::fabs(v);
  if (!exact_prefix_sums(x, mpfr_get_prec(s), [&](size_t k, mpfr_srcptr v) {
        if (k + 1 == x.size()) mpfr_set(s, v, MPFR_RNDN);
      }))
    return undecidable();
  const double cond = sum_cond(abs_sum, s);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real y(p);
    // One rounding of the exact S / n: error <= 2^-p |y|, none when the quotient is exact (a
    // tie of the output format, such as the mean of 1 and 1 + 2^-23 in f32, is then decided).
    const int inexact = mpfr_div_ui(y, s, static_cast<unsigned long>(x.size()), MPFR_RNDN);
    std::optional<double> e;
    if (inexact)
      e = round_decided(y, static_cast<long>(p) - 1, in.dtype);
    else
      e = round_nearest(y, in.dtype);
    if (!e) return false;
    r.exact = {*e};
    r.cond = {cond};
    return true;
  });
}

OracleResult cumsum(const Input& in) {
  const auto& x = in.args.at(0).values;
  OracleResult r;
  r.precision_bits = exact_sum_precision(x);
  r.exact.resize(x.size());
  r.cond.resize(x.size());
  long double abs_sum = 0;
  if (!exact_prefix_sums(x, r.precision_bits, [&](size_t k, mpfr_srcptr s) {
        abs_sum += std::fabs(x[k]);
        r.exact[k] = round_nearest(s, in.dtype);
        r.cond[k] = sum_cond(abs_sum, s);
      }))
    return undecidable();
  return r;
}

OracleResult variance(const Input& in) { return variance_impl(in, false); }

OracleResult standard_deviation(const Input& in) { return variance_impl(in, true); }

OracleResult l2_norm(const Input& in) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    // Squares (2^-p each), their sum (2^-p) and the square root (2^-p) give a relative error
    // <= 2^-p + 2^-p < 2^-(p-2). Exact when no step rounded (||(3, 4)|| = 5, or a tie).
    std::vector<Real> sq;
    sq.reserve(x.size());
    bool inexact = false;
    for (double v : x) {
      sq.emplace_back(p);
      inexact |= mpfr_set_d(sq.back(), v, MPFR_RNDN) != 0;
      inexact |= mpfr_sqr(sq.back(), sq.back(), MPFR_RNDN) != 0;
    }
    Real s(p);
    std::vector<mpfr_ptr> ptrs;
    for (auto& t : sq) ptrs.push_back(t.get());
    inexact |= mpfr_sum(s, ptrs.data(), ptrs.size(), MPFR_RNDN) != 0;
    inexact |= mpfr_sqrt(s, s, MPFR_RNDN) != 0;
    const auto e = inexact ? round_decided(s, static_cast<long>(p) - 2, in.dtype)
                           : std::optional<double>(round_nearest(s, in.dtype));
    if (!e) return false;
    r.exact = {*e};
    r.cond = {mpfr_zero_p(s) ? 0.0 : 1.0};
    return true;
  });
}

namespace detail {

OracleResult logsumexp_mpfr(const Input& in) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    LseScan scan(p, in.dtype);
    for (double v : x) scan.add(v);
    r.exact.resize(1);
    r.cond.resize(1);
    return scan.value(r.exact[0], r.cond[0]);
  });
}

}  // namespace detail

OracleResult logsumexp(const Input& in) {
  if (auto r = detail::logsumexp_double_double(in)) return std::move(*r);
  return detail::logsumexp_mpfr(in);
}

namespace detail {

OracleResult logcumsumexp_mpfr(const Input& in) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    LseScan scan(p, in.dtype);
    r.exact.resize(x.size());
    r.cond.resize(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      scan.add(x[k]);
      if (!scan.value(r.exact[k], r.cond[k])) return false;
    }
    return true;
  });
}

}  // namespace detail

OracleResult logcumsumexp(const Input& in) {
  if (auto r = detail::logcumsumexp_double_double(in)) return std::move(*r);
  return detail::logcumsumexp_mpfr(in);
}

namespace {

// The pairs `at` of logaddexp in MPFR (LseScan, Ziv's ladder), in that order.
OracleResult logaddexp_mpfr_at(const Input& in, const std::vector<size_t>& at) {
  const auto& a = in.args.at(0).values;
  const auto& b = in.args.at(1).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    r.exact.resize(at.size());
    r.cond.resize(at.size());
    for (size_t k = 0; k < at.size(); ++k) {
      LseScan scan(p, in.dtype);
      scan.add(a[at[k]]);
      scan.add(b[at[k]]);
      if (!scan.value(r.exact[k], r.cond[k])) return false;
    }
    return true;
  });
}

}  // namespace

namespace detail {

OracleResult logaddexp_mpfr(const Input& in) {
  std::vector<size_t> all(in.args.at(0).values.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return logaddexp_mpfr_at(in, all);
}

}  // namespace detail

OracleResult logaddexp(const Input& in) {
  const auto& a = in.args.at(0).values;
  const auto& b = in.args.at(1).values;
  OracleResult r;
  r.exact.resize(a.size());
  r.cond.resize(a.size());
  std::vector<size_t> rest;
  for (size_t i = 0; i < a.size(); ++i) {
    if (const auto y = detail::logaddexp_double_double(a[i], b[i], in.dtype, &r.cond[i]))
      r.exact[i] = *y;
    else
      rest.push_back(i);
  }
  r.decidable = true;
  r.precision_bits = 106;
  if (rest.empty()) return r;
  OracleResult m = logaddexp_mpfr_at(in, rest);
  if (!m.decidable) return m;
  for (size_t k = 0; k < rest.size(); ++k) {
    r.exact[rest[k]] = m.exact[k];
    r.cond[rest[k]] = m.cond[k];
  }
  r.precision_bits = rest.size() == a.size() ? m.precision_bits : std::max(106L, m.precision_bits);
  return r;
}

}  // namespace stabfuzz::oracle
