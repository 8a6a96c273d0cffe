// Oracles of the log-softmax and loss families: log_softmax, cross_entropy, bce, kl_div, entropy.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"
#include "oracles/normalization.h"

namespace stabfuzz::oracle {
namespace {

// Exact difference of two doubles: exponents span [-1074, 1024], so 2150 bits hold it.
constexpr mpfr_prec_t kExactDiffPrec = 2150;
// Precision of the condition numbers: a few correct digits are all the verdict needs.
constexpr mpfr_prec_t kCondPrec = 64;

// cond = num / |y|, with the zero-output convention of normalization.h.
double cond_ratio(mpfr_srcptr num, mpfr_srcptr y) {
  if (mpfr_zero_p(y)) return mpfr_zero_p(num) ? 0.0 : INFINITY;
  Real c(kCondPrec);
  mpfr_div(c, num, y, MPFR_RNDN);
  return std::fabs(mpfr_get_d(c, MPFR_RNDN));
}

// log_softmax outputs `which` of row x at working precision p (negated for cross_entropy).
// k = argmax, e_j = e^(x_j - m) (e_k excluded), T = sum e_j, l = log1p(T), y_i = (x_i - m) - l.
// Error: e_j and T are within 2 * 2^-p, l within 3 * 2^-p (log1p does not amplify a relative
// error of its argument: T / ((1 + T) log1p T) <= 1), and y_i = (x_i - m) - l adds two terms of
// one sign, so |y_i - exact| <= 4 * 2^-p |y_i|: err_bits p - 2, passed as p - 3 for second order.
bool log_softmax_at(const std::vector<double>& x, DType dt, mpfr_prec_t p,
                    const std::vector<size_t>& which, bool negate, OracleResult& r) {
  const size_t n = x.size();
  size_t k = 0;
  for (size_t i = 1; i < n; ++i)
    if (x[i] > x[k]) k = i;
  const double m = x[k];
  std::vector<Real> e, ex;  // e_j and e_j |x_j|, zero at k
  e.reserve(n);
  ex.reserve(n);
  Real d(kExactDiffPrec);
  for (size_t j = 0; j < n; ++j) {
    e.emplace_back(p);
    ex.emplace_back(p);
    if (j == k) {
      mpfr_set_zero(e.back(), 1);
      mpfr_set_zero(ex.back(), 1);
      continue;
    }
    mpfr_set_d(d, x[j], MPFR_RNDN);
    mpfr_sub_d(d, d, m, MPFR_RNDN);  // exact
    mpfr_exp(e.back(), d, MPFR_RNDN);
    mpfr_mul_d(ex.back(), e.back(), std::fabs(x[j]), MPFR_RNDN);
  }
  Real t(p), b(p), l(p), s(p);
  sum(t, e);
  sum(b, ex);  // sum_{j != k} e_j |x_j|
  mpfr_log1p(l, t, MPFR_RNDN);
  mpfr_add_ui(s, t, 1, MPFR_RNDN);  // the softmax denominator
  Real y(p), num(p), w(p);
  for (size_t i : which) {
    mpfr_set_d(d, x[i], MPFR_RNDN);
    mpfr_sub_d(d, d, m, MPFR_RNDN);  // exact
    mpfr_sub(y, d, l, MPFR_RNDN);
    if (negate) mpfr_neg(y, y, MPFR_RNDN);
    const auto v = round_decided(y, p - 3, dt);
    if (!v) return false;
    r.exact.push_back(*v);
    // num = |x_i| (1 - s_i) + sum_{j != i} s_j |x_j|, times S: for i = k, |x_k| T + B; else
    // |x_i| (S - e_i) + B - e_i |x_i| + |x_k| (B excludes k, the j = k term is e_k |x_k| = |x_k|).
    if (i == k) {
      mpfr_mul_d(num, t, std::fabs(x[i]), MPFR_RNDN);
      mpfr_add(num, num, b, MPFR_RNDN);
    } else {
      mpfr_sub(w, s, e[i], MPFR_RNDN);
      mpfr_mul_d(num, w, std::fabs(x[i]), MPFR_RNDN);
      mpfr_add(num, num, b, MPFR_RNDN);
      mpfr_sub(num, num, ex[i], MPFR_RNDN);
      mpfr_add_d(num, num, std::fabs(m), MPFR_RNDN);
    }
    mpfr_div(num, num, s, MPFR_RNDN);
    r.cond.push_back(cond_ratio(num, y));
  }
  return true;
}

// The same outputs in double-double (oracles/double_double.h); false when the row is out of range
// (more than 4096 values, a non-finite one) or an output is not decided, and log_softmax_at
// decides them in MPFR. u = 2^-53.
//  - d_j = x_j - m exactly (TwoSum); e_j = exp_dd(d_j) within 2^-90.5, or, for d_j < -600, a term
//    below 2^-865 left out of T and counted in an absolute bound a = (count) 2^-865.
//  - T = sum e_j (AccurateDWPlusDW over positive terms: partial sums below T): within 2^-90.5 +
//    4096 x 3u^2 < 2^-89.9 of T, plus a.
//  - l = log1p(T): log1p_dd for T <= 1 (2^-97.8), log_dd(1 + T) past 1 (2^-95.4 and 3u^2 / ln 2
//    for the sum): T's relative error passes at most unamplified (T / ((1 + T) log1p T) <= 1),
//    its absolute error a at most as a: l within 2^-89.8 l + a.
//  - y_i = d_i - l, two terms of one sign (d_i <= 0 <= l): within 2^-89.8 |y_i| + 3u^2 |y_i| + a,
//    handed to the rounding as 2^-89 |y_i| + a.
bool log_softmax_dd(const std::vector<double>& x, DType dt, const std::vector<size_t>& which,
                    bool negate, OracleResult& r) {
  using dd::DD;
  const size_t n = x.size();
  if (n == 0 || n > 4096) return false;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
    if (x[i] > x[k]) k = i;
  }
  const double m = x[k];
  std::vector<DD> d(n), args, e(n, DD{0, 0});
  std::vector<size_t> at;
  double a = 0;
  for (size_t j = 0; j < n; ++j) {
    d[j] = dd::two_sum(x[j], -m);
    if (j == k) continue;
    if (d[j].hi < dd::kMinExpArg) {
      a += 0x1p-865;
      continue;
    }
    at.push_back(j);
    args.push_back(d[j]);
  }
  std::vector<DD> vals(args.size());
  dd::exp_dd_many(args.data(), vals.data(), args.size());
  DD t{0, 0};
  for (size_t q = 0; q < at.size(); ++q) {
    e[at[q]] = vals[q];
    t = dd::add_accurate(t, vals[q]);
  }
  // Every term below e^-600 (a row dominated by its maximum): T in a scale where it is normal,
  // T' = T 2^1074 = sum e^(d_j + 1074 ln 2) (exp_dd, the shift within 2^-96: 2^-90.4), terms below
  // e^-1344 within 2^-865 each; l = log1p(T) = T (1 - T/2 ...) within 2^-860 of T.
  DD t_scaled{0, 0};
  double a_scaled = 0;
  if (t.hi == 0 && a > 0) {
    const dd::ExpConstants& c = dd::exp_constants();
    std::vector<DD> sargs;
    std::vector<size_t> sat;
    for (size_t j = 0; j < n; ++j) {
      if (j == k) continue;
      DD z = dd::add_accurate(d[j], dd::two_prod(1074, c.l0));
      z = dd::add_accurate(z, dd::two_prod(1074, c.l1));
      if (z.hi < dd::kMinExpArg) {
        a_scaled += 0x1p-865;
        continue;
      }
      sat.push_back(j);
      sargs.push_back(z);
    }
    std::vector<DD> svals(sargs.size());
    dd::exp_dd_many(sargs.data(), svals.data(), sargs.size());
    for (size_t q = 0; q < sat.size(); ++q) {
      e[sat[q]] = svals[q];  // scaled: the condition numbers below only take ratios of them
      t_scaled = dd::add_accurate(t_scaled, svals[q]);
    }
    if (t_scaled.hi == 0) return false;
  }
  DD l{0, 0};
  if (t.hi != 0) {
    const auto lt = t.hi <= 1 ? dd::log1p_dd(t) : dd::log_dd(dd::add_accurate({1, 0}, t));
    if (!lt) return false;
    l = *lt;
  }
  // The condition numbers' sums, in long double (a few digits are needed): T, S = 1 + T and B =
  // sum_{j != k} e_j |x_j|.
  long double t_l = 0, b_l = 0;
  for (size_t j = 0; j < n; ++j) {
    const long double ej = static_cast<long double>(e[j].hi) + e[j].lo;
    t_l += ej;
    b_l += ej * std::fabs(static_cast<long double>(x[j]));
  }
  const long double s_l = 1 + t_l;
  const size_t first = r.exact.size();
  const bool scaled = t_scaled.hi != 0;
  // l's upper bound: l (1 + 2^-88) + a, or T (scaled) and its bounds (plus 2^-1074 for the
  // rounding of the product into the subnormal range).
  const double lmax = scaled ? (t_scaled.hi * (1 + 0x1p-80) + a_scaled) * 0x1p-1074 + 0x1p-1074
                             : l.hi + std::fabs(l.lo) + l.hi * 0x1p-88 + a;
  for (size_t i : which) {
    DD y = dd::add_accurate(d[i], {-l.hi, -l.lo});
    if (negate) y = {-y.hi, -y.lo};
    std::optional<double> v;
    double delta = std::fabs(y.hi) * 0x1p-89 + a;
    if (scaled && i == k) {  // y = -l, l = T within 2^-89 T + a
      const DD ts = negate ? t_scaled : DD{-t_scaled.hi, -t_scaled.lo};
      if (dt == DType::f64)
        v = dd::round_f64_scaled(ts, std::fabs(t_scaled.hi) * 0x1p-89 + a_scaled);
      else  // below 4096 x 2^-865 (times 2^1074 here): 0 in f32, f16 and bf16
        v = negate ? 0.0 : -0.0;
      y = {ts.hi * 0x1p-1074, 0};  // its sign and size, for the condition number
    } else if (d[i].hi != 0 && lmax <= std::fabs(d[i].hi) * 0x1p-70) {
      // l below d_i's spacing: y is just beyond d_i, which may be a tie exactly (d_i = x_i - m
      // often is): round from d_i's side (l > 0: y < d_i, or y > -d_i for cross_entropy).
      v = dd::round_just_beyond(negate ? DD{-d[i].hi, -d[i].lo} : d[i], negate ? 1 : -1, lmax, dt);
      delta = 0;
    } else {
      v = dd::round_double_double(y, delta, dt);
    }
    if (!v && delta != 0 && y.hi != 0 && delta <= std::fabs(y.hi) * 0x1p-88) {
      Real yr(128);  // hi + lo within 2^-128
      mpfr_set_d(yr, y.hi, MPFR_RNDN);
      mpfr_add_d(yr, yr, y.lo, MPFR_RNDN);
      v = round_decided(yr, 87, dt);
    }
    if (!v) {
      r.exact.resize(first);
      r.cond.resize(first);
      return false;
    }
    r.exact.push_back(*v);
    // num / S as in log_softmax_at.
    const long double ax = std::fabs(static_cast<long double>(x[i]));
    long double num;
    // Scaled: T and B are below 4096 x 2^-865, so S = 1 within 2^-850 and, for i != k, num / S =
    // |x_i| + |m|.
    const long double s_div = scaled ? 1 : s_l;
    if (scaled && i != k) {
      num = ax + std::fabs(static_cast<long double>(m));
    } else if (i == k) {
      num = ax * t_l + b_l;
    } else {
      const long double ei = static_cast<long double>(e[i].hi) + e[i].lo;
      num = ax * (s_l - ei) + b_l - ei * ax + std::fabs(static_cast<long double>(m));
    }
    long double yl = std::fabs(static_cast<long double>(y.hi) + y.lo);
    if (scaled && i == k) {  // num / |y| = (|x_k| T + B) / T: the scale cancels
      num = ax * t_l + b_l;
      yl = t_l;
    }
    if (yl == 0)
      r.cond.push_back(num == 0 ? 0.0 : INFINITY);
    else
      r.cond.push_back(static_cast<double>(num / s_div / yl));
  }
  return true;
}

std::vector<size_t> every_index(size_t n) {
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

}  // namespace

namespace detail {

std::optional<OracleResult> log_softmax_double_double(const Input& in, bool cross_entropy) {
  const auto& x = in.args.at(0).values;
  const std::vector<size_t> which =
      cross_entropy ? std::vector<size_t>{static_cast<size_t>(in.param("target", 0))}
                    : every_index(x.size());
  OracleResult r;
  if (!log_softmax_dd(x, in.dtype, which, cross_entropy, r)) return std::nullopt;
  r.decidable = true;
  r.precision_bits = 106;
  return r;
}

OracleResult log_softmax_mpfr(const Input& in, bool cross_entropy) {
  const auto& x = in.args.at(0).values;
  const std::vector<size_t> which =
      cross_entropy ? std::vector<size_t>{static_cast<size_t>(in.param("target", 0))}
                    : every_index(x.size());
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return log_softmax_at(x, in.dtype, p, which, cross_entropy, r);
  });
}

}  // namespace detail

OracleResult log_softmax(const Input& in) {
  if (auto r = detail::log_softmax_double_double(in, false)) return std::move(*r);
  return detail::log_softmax_mpfr(in, false);
}

OracleResult cross_entropy(const Input& in) {
  if (auto r = detail::log_softmax_double_double(in, true)) return std::move(*r);
  return detail::log_softmax_mpfr(in, true);
}

namespace {

// The outputs of bce_with_logits at indices `at`, by MPFR.
OracleResult bce_with_logits_mpfr_at(const Input& in, const std::vector<size_t>& at);

}  // namespace

namespace detail {

OracleResult bce_with_logits_mpfr(const Input& in) {
  std::vector<size_t> all(in.args.at(0).values.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return bce_with_logits_mpfr_at(in, all);
}

}  // namespace detail

namespace {

// l = A + B with A = max(x, 0) - x z (x z exact in 106 bits, A rounded once: 2^-p) and
// B = log1p(e^-|x|) (e^-|x| within 2^-p, log1p propagates at most that and rounds: 2 * 2^-p).
// A, B >= 0, so l is within 3 * 2^-p: err_bits p - 2, passed as p - 3.
// A, a product of dtype values subtracted from one, is often exactly a midpoint of f16 or bf16
// (11- or 8-bit factors give 22- or 16-bit products), and B ~ e^-|x| can be far below 2^-p A. So
// A is held exactly (kExactA bits) and l = A + B formed at kExactA + 64 bits: its error is B's,
// 2^-(p-2) B, plus 2^-(kExactA+64) l, which err_bits states relative to l. B > 0, so when even that
// cannot decide (B below the spacing of kExactA bits at A, while A is a rounding boundary), l
// rounds like A nudged up by a quarter of that spacing: nothing of either dtype lies between.
constexpr mpfr_prec_t kExactA = 3400;  // a difference of doubles spans < 2^1024 / 2^-2200
OracleResult bce_with_logits_mpfr_at(const Input& in, const std::vector<size_t>& at) {
  const auto& x = in.args.at(0).values;
  const auto& z = in.args.at(1).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real xm(kExactDoublePrecision), zm(kExactDoublePrecision), pos(kExactDoublePrecision);
    Real xz(2 * kExactDoublePrecision), a(p), e(p), b(p), l(p), sig(p), num(kCondPrec);
    Real ax(kExactA), lx(kExactA + 64), nudged(kExactA + 2);
    for (size_t i : at) {
      mpfr_set_d(xm, x[i], MPFR_RNDN);
      mpfr_set_d(zm, z[i], MPFR_RNDN);
      mpfr_set_d(pos, std::fmax(x[i], 0.0), MPFR_RNDN);
      mpfr_mul(xz, xm, zm, MPFR_RNDN);  // exact
      mpfr_sub(a, pos, xz, MPFR_RNDN);
      mpfr_set_d(e, -std::fabs(x[i]), MPFR_RNDN);
      mpfr_exp(e, e, MPFR_RNDN);
      mpfr_log1p(b, e, MPFR_RNDN);
      mpfr_add(l, a, b, MPFR_RNDN);
      mpfr_sub(ax, pos, xz, MPFR_RNDN);  // exact
      mpfr_add(lx, ax, b, MPFR_RNDN);
      long err = kExactA + 60;
      if (!mpfr_zero_p(b) && !mpfr_zero_p(lx))
        err = std::min<long>(err, p - 3 + (mpfr_get_exp(lx) - mpfr_get_exp(b)));
      auto v = round_decided(lx, err, in.dtype);
      if (!v && !mpfr_zero_p(ax) && mpfr_cmp_ui_2exp(e, 1, mpfr_get_exp(ax) - kExactA - 4) < 0) {
        mpfr_set(nudged, ax, MPFR_RNDN);
        mpfr_nextabove(nudged);
        v = round_nearest(nudged, in.dtype);
      }
      if (!v) return false;
      r.exact.push_back(*v);
      // sigmoid(x) = 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, with e = e^-|x|.
      mpfr_add_ui(sig, e, 1, MPFR_RNDN);
      mpfr_ui_div(sig, 1, sig, MPFR_RNDN);
      if (x[i] < 0) mpfr_mul(sig, sig, e, MPFR_RNDN);
      mpfr_sub(sig, sig, zm, MPFR_RNDN);
      mpfr_abs(sig, sig, MPFR_RNDN);
      mpfr_mul_d(num, sig, std::fabs(x[i]), MPFR_RNDN);
      mpfr_abs(xz, xz, MPFR_RNDN);
      mpfr_add(num, num, xz, MPFR_RNDN);
      r.cond.push_back(cond_ratio(num, l));
    }
    return true;
  });
}

}  // namespace

namespace detail {

// y = sum of t_i = p_i (L_i - logq_i), L_i = log p_i. The terms may cancel, so the error bound is
// absolute: |L~ - L| <= 2^-p |L~|, D = L~ - logq rounds by 2^-p |D|, t by 2^-p |t|, the sum
// (mpfr_sum) by 2^-p |y~|; altogether |y~ - y| <= 2^-p * 1.01 * E with
// E = sum p_i (|L~_i| + 2 |D_i|) + |y~|. With E < 2^eE and |y~| >= 2^(eA-1) (MPFR exponents),
// err_bits = p - (eE - eA) - 2. A computed zero is exact only when every p_i is 0 or 1 (all L_i
// are then exactly 0); otherwise y is a nonzero transcendental number and p is raised.

OracleResult kl_div_mpfr(const Input& in) {
  const auto& lq = in.args.at(0).values;
  const auto& pr = in.args.at(1).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real pm(kExactDoublePrecision), lg(p), dd(p), err(kCondPrec), num(kCondPrec), w(kCondPrec),
        al(kCondPrec);
    std::vector<Real> terms;
    bool all_exact = true;
    mpfr_set_zero(err, 1);
    mpfr_set_zero(num, 1);
    for (size_t i = 0; i < pr.size(); ++i) {
      if (pr[i] == 0) continue;  // 0 log 0 = 0
      all_exact &= pr[i] == 1;
      mpfr_set_d(pm, pr[i], MPFR_RNDN);
      mpfr_log(lg, pm, MPFR_RNDN);
      mpfr_sub_d(dd, lg, lq[i], MPFR_RNDN);
      terms.emplace_back(p);
      mpfr_mul_d(terms.back(), dd, pr[i], MPFR_RNDN);
      // err += p_i (|L| + 2 |D|), rounded up
      mpfr_abs(w, dd, MPFR_RNDU);
      mpfr_mul_2ui(w, w, 1, MPFR_RNDU);
      mpfr_abs(al, lg, MPFR_RNDU);
      mpfr_add(w, w, al, MPFR_RNDU);
      mpfr_mul_d(w, w, pr[i], MPFR_RNDU);
      mpfr_add(err, err, w, MPFR_RNDU);
      // num += p_i (|D + 1| + |logq_i|)
      mpfr_add_ui(w, dd, 1, MPFR_RNDN);
      mpfr_abs(w, w, MPFR_RNDN);
      mpfr_add_d(w, w, std::fabs(lq[i]), MPFR_RNDN);
      mpfr_mul_d(w, w, pr[i], MPFR_RNDN);
      mpfr_add(num, num, w, MPFR_RNDN);
    }
    Real y(p);
    sum(y, terms);
    if (mpfr_zero_p(y)) {
      if (!all_exact) return false;
      r.exact = {0.0};
      r.cond = {cond_ratio(num, y)};
      return true;
    }
    mpfr_abs(w, y, MPFR_RNDU);
    mpfr_add(err, err, w, MPFR_RNDU);
    const long bits = static_cast<long>(p) - (mpfr_get_exp(err) - mpfr_get_exp(y)) - 2;
    if (bits < 2) return false;
    const auto v = round_decided(y, bits, in.dtype);
    if (!v) return false;
    r.exact = {*v};
    r.cond = {cond_ratio(num, y)};
    return true;
  });
}

// H = -sum p_i L_i: L_i within 2^-p, each product within 2 * 2^-p, and every term has one sign
// (p in [0, 1]), so the sum is within 3 * 2^-p: err_bits p - 2, passed as p - 3. H is exactly 0
// only when every p_i is 0 or 1, and then every term is an exact 0.
OracleResult entropy_mpfr(const Input& in) {
  const auto& pr = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real pm(kExactDoublePrecision), lg(p), num(kCondPrec), w(kCondPrec);
    std::vector<Real> terms;
    mpfr_set_zero(num, 1);
    for (double v : pr) {
      if (v == 0) continue;
      mpfr_set_d(pm, v, MPFR_RNDN);
      mpfr_log(lg, pm, MPFR_RNDN);
      terms.emplace_back(p);
      mpfr_mul_d(terms.back(), lg, -v, MPFR_RNDN);
      mpfr_add_ui(w, lg, 1, MPFR_RNDN);  // num += p_i |L_i + 1|
      mpfr_abs(w, w, MPFR_RNDN);
      mpfr_mul_d(w, w, v, MPFR_RNDN);
      mpfr_add(num, num, w, MPFR_RNDN);
    }
    Real h(p);
    sum(h, terms);
    const auto v = round_decided(h, p - 3, in.dtype);
    if (!v) return false;
    r.exact = {*v};
    r.cond = {cond_ratio(num, h)};
    return true;
  });
}

}  // namespace detail

// Each output by double-double where its bound decides; the others by MPFR together.
OracleResult bce_with_logits(const Input& in) {
  const auto& x = in.args.at(0).values;
  const auto& z = in.args.at(1).values;
  if (x.size() != z.size()) return detail::bce_with_logits_mpfr(in);
  OracleResult r;
  r.exact.resize(x.size());
  r.cond.resize(x.size());
  std::vector<size_t> rest;
  for (size_t i = 0; i < x.size(); ++i) {
    if (const auto v = detail::bce_element_double_double(x[i], z[i], in.dtype)) {
      r.exact[i] = v->exact;
      r.cond[i] = v->cond;
    } else {
      rest.push_back(i);
    }
  }
  r.decidable = true;
  r.precision_bits = 106;
  if (rest.empty()) return r;
  const OracleResult m = bce_with_logits_mpfr_at(in, rest);
  if (!m.decidable) return detail::bce_with_logits_mpfr(in);
  for (size_t k = 0; k < rest.size(); ++k) {
    r.exact[rest[k]] = m.exact.at(k);
    r.cond[rest[k]] = m.cond.at(k);
  }
  r.precision_bits = m.precision_bits;
  return r;
}

OracleResult kl_div(const Input& in) {
  if (auto r = detail::kl_div_double_double(in)) return std::move(*r);
  return detail::kl_div_mpfr(in);
}

OracleResult entropy(const Input& in) {
  if (auto r = detail::entropy_double_double(in)) return std::move(*r);
  return detail::entropy_mpfr(in);
}

}  // namespace stabfuzz::oracle
