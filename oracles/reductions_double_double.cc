// The reduction oracles' fast paths (oracles/reductions.cc sends what these do not decide to
// MPFR): logsumexp, logcumsumexp and logaddexp in double-double with proven bounds
// (oracles/double_double.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"
#include "oracles/reductions.h"

namespace stabfuzz::oracle::detail {

// log1p(T) for a double-double T >= 0 (T.hi > 0) by one Newton step from y0 = log1p(T_hi) (libm;
// its error is measured, not assumed): rho = (1 + T) e^(-y0) - 1 (e^(-y0) within 2^-90.5, the
// product and sums within 2^-102: rho within 2^-90.3 absolute), accepted when |rho| <= 2^-40; L
// = y0 + rho - rho^2 / 2, within 2^-90.3 (1 + 2^-40) + |rho|^3 / 3 + 2 x 3u^2 L < 2^-90.2 + 2^-103
// L (beyond what T's own error makes of it). Nullopt when libm's guess is farther off.
std::optional<dd::DD> log1p_newton(dd::DD t) {
  using dd::DD;
  const double y0 = std::log1p(t.hi);
  const DD p = dd::mul(dd::add_accurate({1, 0}, t), dd::exp_dd({-y0, 0}));
  const DD rho = dd::add_accurate(p, {-1, 0});
  if (!(std::fabs(rho.hi) <= 0x1p-40)) return std::nullopt;
  return dd::add_accurate(dd::add_accurate({y0, 0}, rho), {-rho.hi * rho.hi / 2, 0});
}

// y = m + L, L = log1p(T), T = sum of e^(x_j - m) over every j but one instance of the maximum.
// - e_j by dd::exp_dd (relative error < 2^-90.5); T, an AccurateDWPlusDW sum of at most 4096
//   positive terms, within 2^-90.5 + 4096 x 3u^2 < 2^-89.9 of it; then L errs by at most
//   2^-89.9 T / (1 + T) <= 2^-89.9 L.
// - L by one Newton step from y0 = log1p(T_hi) (libm; its error is measured, not assumed):
//   rho = (1 + T) e^(-y0) - 1 (e^(-y0) within 2^-90.5, the product and sums within 2^-102: rho
//   within 2^-90.3 absolute), accepted when |rho| <= 2^-40; L = y0 + rho - rho^2 / 2, within
//   2^-90.3 (1 + 2^-40) + |rho|^3 / 3 + 2 x 3u^2 L < 2^-90.2 + 2^-103 L.
// - y = m + L by AccurateDWPlusDW (3u^2 |y|).
// In all, |error| < 2^-89 (1 + L) + 2^-100 |y|: the bound handed to the rounding.
std::optional<OracleResult> logsumexp_double_double(const Input& in) {
  using dd::DD;
  const auto& x = in.args.at(0).values;
  const size_t n = x.size();
  if (n == 0 || n > 4096) return std::nullopt;
  size_t top = 0;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(x[j])) return std::nullopt;
    if (x[j] > x[top]) top = j;
  }
  const double m = x[top];
  std::vector<DD> d, e(n - 1);
  d.reserve(n - 1);
  for (size_t j = 0; j < n; ++j) {
    if (j == top) continue;
    d.push_back(dd::two_sum(x[j], -m));
    if (!std::isfinite(d.back().hi) || d.back().hi < dd::kMinExpArg) return std::nullopt;
  }
  dd::exp_dd_many(d.data(), e.data(), d.size());
  DD t{0, 0};
  long double b_l = std::fabs(static_cast<long double>(m)), s_l = 1;
  for (size_t j = 0, k = 0; j < n; ++j) {
    if (j == top) continue;
    t = dd::add_accurate(t, e[k]);
    const long double el = static_cast<long double>(e[k].hi) + e[k].lo;
    ++k;
    s_l += el;
    b_l += el * std::fabs(static_cast<long double>(x[j]));
  }
  DD y{m, 0};
  double bound = 0;
  if (t.hi != 0) {
    const auto l = log1p_newton(t);
    if (!l) return std::nullopt;
    y = dd::add_accurate({m, 0}, *l);
    bound = 0x1p-89 * (1 + std::fabs(l->hi)) + 0x1p-100 * std::fabs(y.hi);
  }
  OracleResult res;
  res.exact.resize(1);
  res.cond.resize(1);
  res.precision_bits = 106;
  if (t.hi == 0) {  // one element: y = m exactly (condition 1; 0 for y = 0, the scan's rule)
    res.exact[0] = m;
    res.cond[0] = m == 0 ? 0 : 1;
    return res;
  }
  const auto r = dd::round_signed(y, bound, in.dtype);
  if (!r) return std::nullopt;
  res.exact[0] = *r;
  // cond = sum_j e^(x_j - m) |x_j| / ((1 + T) |y|)
  res.cond[0] = static_cast<double>(b_l / (s_l * std::fabs(static_cast<long double>(y.hi))));
  return res;
}

// The prefixes' y_k = m_k + log1p(T_k) by the scan LseScan runs, in double-double: m_k the running
// maximum, T_k the sum of e^(x_j - m_k) over the prefix but one instance of m_k. A new maximum
// rescales T to (T + 1) e^(m_old - m_new), any other element adds e^(x_j - m_k) (differences
// exact, exp_dd within 2^-90.5). T's relative error e is tracked along the scan: a term raises it
// to max(e, 2^-90.5) + 3u^2 (AccurateDWPlusDW of positive terms), a rescale to e + 2^-90.5 + 7u^2.
// L_k = log1p_newton(T_k) errs by e T / (1 + T) <= e L plus 2^-90.2 + 2^-103 L, and y_k = m_k +
// L_k (AccurateDWPlusDW) 3u^2 |y_k| more; the bound handed to the rounding is 1.01 times that.
// Nullopt for NaN, rows over 4096 values, a term or a rescaling factor below e^-600, and any
// undecided output (y_k near 0 by cancellation, or near a rounding boundary).
std::optional<OracleResult> logcumsumexp_double_double(const Input& in) {
  using dd::DD;
  constexpr double u2 = 0x1p-106, kExp = 0x1.6a09e667f3bcdp-91;  // 2^-90.5 (rounded up)
  const auto& x = in.args.at(0).values;
  if (x.size() > 4096) return std::nullopt;
  OracleResult r;
  r.exact.resize(x.size());
  r.cond.resize(x.size());
  r.decidable = true;
  r.precision_bits = 106;
  double m = -INFINITY, rel = 0;
  DD t{0, 0};
  long double b = 0;  // sum of e^(x_j - m) |x_j| over the prefix, for the condition number
  bool pos_inf = false;
  for (size_t k = 0; k < x.size(); ++k) {
    const double v = x[k];
    if (std::isnan(v)) return std::nullopt;
    if (v == INFINITY) pos_inf = true;
    if (!pos_inf && v != -INFINITY) {
      if (m == -INFINITY) {
        m = v;
        b = std::fabs(static_cast<long double>(v));
      } else if (v > m) {
        const DD d = dd::two_sum(m, -v);  // exact
        if (!(d.hi >= dd::kMinExpArg)) return std::nullopt;
        const DD e = dd::exp_dd(d);
        t = dd::mul(dd::add_accurate(t, {1, 0}), e);
        rel += kExp + 7 * u2;
        b = b * (static_cast<long double>(e.hi) + e.lo) + std::fabs(static_cast<long double>(v));
        m = v;
      } else {
        const DD d = dd::two_sum(v, -m);
        if (!(d.hi >= dd::kMinExpArg)) return std::nullopt;
        const DD e = dd::exp_dd(d);
        t = dd::add_accurate(t, e);
        rel = std::fmax(rel, kExp) + 3 * u2;
        b += (static_cast<long double>(e.hi) + e.lo) * std::fabs(static_cast<long double>(v));
      }
    }
    if (pos_inf || m == -INFINITY) {  // exact infinities, condition 0
      r.exact[k] = pos_inf ? INFINITY : -INFINITY;
      r.cond[k] = 0;
      continue;
    }
    if (t.hi == 0) {  // the maximum alone: y = m exactly (condition 1; 0 for y = 0)
      r.exact[k] = m == 0 ? 0.0 : m;
      r.cond[k] = m == 0 ? 0 : 1;
      continue;
    }
    const auto l = log1p_newton(t);
    if (!l) return std::nullopt;
    const DD y = dd::add_accurate({m, 0}, *l);
    const double bound =  // 0x1.bep-91 >= 2^-90.2
        1.01 * (rel * l->hi + 0x1.bep-91 + 0x1p-103 * l->hi + 3 * u2 * std::fabs(y.hi));
    const auto v_k = dd::round_signed(y, bound, in.dtype);
    if (!v_k) return std::nullopt;
    r.exact[k] = *v_k;
    const long double s = 1 + (static_cast<long double>(t.hi) + t.lo);
    r.cond[k] = static_cast<double>(b / (s * std::fabs(static_cast<long double>(y.hi) + y.lo)));
  }
  return r;
}

// y = m + log1p(E), m = max(a, b), E = e^(o - m) (o - m exact, exp_dd within 2^-90.5, E <= 1),
// l = log1p_dd(E) within 2^-90.5 + 2^-97.8 (log1p does not amplify E's relative error); below
// e^-600, E < 2^-865 and l in (0, 2^-865]. When l is far below m's spacing, y is just above m
// (round_just_beyond); otherwise y = m + l (AccurateDWPlusDW) within 2^-89 l + 3u^2 |y|. Pairs
// with NaN, and undecided ones (y near 0 by cancellation), are nullopt.
std::optional<double> logaddexp_double_double(double a, double b, DType dt, double* cond) {
  using dd::DD;
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  // Infinities as LseScan takes them: +inf wins, -inf drops out (y = the other value exactly,
  // condition 1, or 0 for y = 0), both -inf give -inf; conditions 0 for infinite results.
  if (a == INFINITY || b == INFINITY || (a == -INFINITY && b == -INFINITY)) {
    *cond = 0;
    return a == INFINITY || b == INFINITY ? INFINITY : -INFINITY;
  }
  if (a == -INFINITY || b == -INFINITY) {
    const double x = a == -INFINITY ? b : a;
    *cond = x == 0 ? 0 : 1;
    return x;
  }
  const double m = std::fmax(a, b), o = std::fmin(a, b);
  const DD d = dd::two_sum(o, -m);
  DD e{0, 0}, l{0, 0};
  double lmax = 0x1p-865;
  if (d.hi >= dd::kMinExpArg) {
    e = dd::exp_dd(d);
    const auto lt = dd::log1p_dd(e);
    if (!lt) return std::nullopt;
    l = *lt;
    lmax = l.hi + std::fabs(l.lo) + l.hi * 0x1p-88;
  }
  std::optional<double> r;
  long double yl = std::fabs(static_cast<long double>(m) + l.hi);  // |y|, for the condition
  if (m != 0 && lmax <= std::fabs(m) * 0x1p-70) {
    r = dd::round_just_beyond({m, 0}, 1, lmax, dt);
  } else if (l.hi != 0) {
    const DD y = dd::add_accurate({m, 0}, l);
    yl = std::fabs(static_cast<long double>(y.hi) + y.lo);
    const double delta = l.hi * 0x1p-89 + std::fabs(y.hi) * 0x1p-104;
    r = dd::round_double_double(y, delta, dt);
    if (!r && y.hi != 0 && delta <= std::fabs(y.hi) * 0x1p-88) {
      Real yr(128);  // hi + lo within 2^-128
      mpfr_set_d(yr, y.hi, MPFR_RNDN);
      mpfr_add_d(yr, yr, y.lo, MPFR_RNDN);
      r = round_decided(yr, 87, dt);
    }
  }
  if (!r) return std::nullopt;
  // cond = (|m| + E |o|) / ((1 + E) |y|), as LseScan forms it.
  const long double el = static_cast<long double>(e.hi) + e.lo;
  *cond = static_cast<double>(
      (std::fabs(static_cast<long double>(m)) + el * std::fabs(static_cast<long double>(o))) /
      ((1 + el) * yl));
  return r;
}

}  // namespace stabfuzz::oracle::detail
