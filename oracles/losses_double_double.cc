// The loss oracles' fast paths (oracles/losses.cc sends what these do not decide to MPFR):
// bce_with_logits, kl_div and entropy in double-double with proven bounds
// (oracles/double_double.h).
#include <cmath>
#include <optional>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"
#include "oracles/normalization.h"

namespace stabfuzz::oracle::detail {

// l = a + b with a = max(x, 0) - x z >= 0 (z in [0, 1]) and b = log1p(e^-|x|) > 0, in
// double-double, with its condition number; nullopt for non-finite x, z outside [0, 1], and where
// the bound does not decide. x z is exact (two_prod; nullopt where its low word may underflow), a
// within 3u^2 |a| (AccurateDWPlusDW), e^-|x| from exp_dd within 2^-90.5, b from log1p_dd within
// 2^-97.8 more (log1p does not amplify its argument's relative error), and the sum of two
// nonnegative terms 3u^2 more: l within 2^-90.3 |l|. Past |x| = 600, b < e^-600 < 2^-865: with
// a >= 2^-700 it is bounded instead of computed; with a = 0, l = b = e^-|x| (1 - t), t < 2^-865,
// which rounds to 0 outside f64 and is formed in f64 as e^-|x| 2^1074 (exp_scaled_1074, within
// 2^-90.4) below e^-800 (< 2^-1154, which rounds to 0).
std::optional<BceElement> bce_element_double_double(double x, double z, DType dt) {
  using dd::DD;
  constexpr double u2 = 0x1p-106;
  const double ax = std::fabs(x);
  if (!std::isfinite(x) || !(z >= 0 && z <= 1)) return std::nullopt;
  const DD xz = dd::two_prod(x, z);
  if (xz.hi != 0 && std::fabs(xz.hi) < 0x1p-960) return std::nullopt;
  const DD a = dd::add_accurate({std::fmax(x, 0.0), 0}, {-xz.hi, -xz.lo});
  // cond = (|sigmoid(x) - z| |x| + |x z|) / l, sigmoid(x) = 1 / (1 + e) or e / (1 + e), e = e^-|x|.
  const auto cond = [&](double e, double l) {
    const double sig = x >= 0 ? 1 / (1 + e) : e / (1 + e);
    return (std::fabs(sig - z) * ax + std::fabs(xz.hi)) / l;
  };
  if (ax <= -dd::kMinExpArg) {
    const DD e = dd::exp_dd({-ax, 0});
    const auto b = dd::log1p_dd(e);
    if (!b) return std::nullopt;
    const DD l = dd::add_accurate(a, *b);
    const auto v = dd::round_double_double(l, std::fabs(l.hi) * 0x1p-89, dt);  // 2^-90.3 |exact|
    if (!v) return std::nullopt;
    return BceElement{*v, cond(e.hi, l.hi + l.lo)};
  }
  if (a.hi >= 0x1p-700) {
    const auto v = dd::round_double_double(a, a.hi * 3.01 * u2 + 0x1p-865, dt);
    if (!v) return std::nullopt;
    return BceElement{*v, cond(std::exp(-ax), a.hi + a.lo)};
  }
  if (a.hi != 0) return std::nullopt;
  // a = 0 exactly: z = 1 for x > 0 (cond = |x| / ((1 + e) l) + |x| / l, l ~ e: |x| e^|x| within
  // a factor 1 + 2^-860, formed as e^(log |x| + |x|), which overflows to inf past 709.78 as MPFR's
  // quotient rounded to double does), z = 0 for x < 0 (cond = |x| e / ((1 + e) l) ~ |x|).
  // Past |x| = 2^29, where e^-|x| nears the bottom of MPFR's exponent range (2^-(2^30)), x < 0 goes
  // to MPFR, whose condition number is 0 once e^-|x| underflows there.
  if (x < 0 && ax > 0x1p29) return std::nullopt;
  const double c = x >= 0 ? std::exp(std::log(ax) + ax) : ax;
  if (dt != DType::f64 || ax > 800) return BceElement{0.0, c};
  const DD q = dd::exp_scaled_1074(-ax);
  const auto v = dd::round_f64_scaled(q, q.hi * 0x1p-89);
  if (!v) return std::nullopt;
  return BceElement{*v, c};
}

std::optional<OracleResult> bce_with_logits_double_double(const Input& in) {
  const auto& x = in.args.at(0).values;
  const auto& z = in.args.at(1).values;
  if (x.size() != z.size()) return std::nullopt;
  OracleResult r;
  for (size_t i = 0; i < x.size(); ++i) {
    const auto v = bce_element_double_double(x[i], z[i], in.dtype);
    if (!v) return std::nullopt;
    r.exact.push_back(v->exact);
    r.cond.push_back(v->cond);
  }
  r.decidable = true;
  r.precision_bits = 106;
  return r;
}

// y = sum over p_i > 0 of p_i (log p_i - logq_i) in double-double: L_i = log_dd(p_i) within
// 2^-95.4 |L_i|, D_i = L_i - logq_i (AccurateDWPlusDW) within that plus 3u^2 |D_i|, p_i D_i
// (DWTimesFP3) 2u^2 more, their sum within 3u^2 times the sum of |partial sums|; 2^-1070 per term
// for low words below the normal range (tiny p_i). Nullopt for y = 0, NaN or infinite inputs,
// rows over 2^20 values and undecided results.
std::optional<OracleResult> kl_div_double_double(const Input& in) {
  using dd::DD;
  constexpr double u2 = 0x1p-106;
  const auto& lq = in.args.at(0).values;
  const auto& pr = in.args.at(1).values;
  if (pr.size() > (size_t{1} << 20)) return std::nullopt;
  DD y{0, 0};
  double err = 0, partials = 0;
  long double num = 0;
  for (size_t i = 0; i < pr.size(); ++i) {
    if (pr[i] == 0) continue;
    if (!std::isfinite(lq[i]) || !(pr[i] > 0 && pr[i] <= 1)) return std::nullopt;
    const auto l = dd::log_dd({pr[i], 0});
    if (!l) return std::nullopt;
    const DD d = dd::add_accurate(*l, {-lq[i], 0});
    y = dd::add_accurate(y, dd::mul(d, pr[i]));
    partials += std::fabs(y.hi);
    err += pr[i] * (std::fabs(l->hi) * 0x1p-95 + 5 * u2 * std::fabs(d.hi)) + 0x1p-1070;
    const long double dl = static_cast<long double>(d.hi) + d.lo;
    num += pr[i] * (std::fabs(dl + 1) + std::fabs(static_cast<long double>(lq[i])));
  }
  if (y.hi == 0) return std::nullopt;
  const double delta = (err + 3 * u2 * partials) * 1.0625;
  std::optional<double> v = dd::round_double_double(y, delta, in.dtype);
  if (!v && delta <= std::fabs(y.hi) * 0x1p-88) {
    Real yr(128);  // hi + lo within 2^-128
    mpfr_set_d(yr, y.hi, MPFR_RNDN);
    mpfr_add_d(yr, yr, y.lo, MPFR_RNDN);
    v = round_decided(yr, 87, in.dtype);
  }
  if (!v) return std::nullopt;
  OracleResult r;
  r.exact = {*v};
  r.cond = {static_cast<double>(num / std::fabs(static_cast<long double>(y.hi) + y.lo))};
  r.decidable = true;
  r.precision_bits = 106;
  return r;
}

// H = sum over p_i > 0 of -p_i log p_i: every term >= 0, each within 2^-95.4 + 2u^2 of itself,
// their sum within 2^-94 (partial sums below H) for n <= 4096 (n 3u^2 beyond); 2^-1070 per term
// for tiny p_i. H = 0 exactly when every p_i is 0 or 1.
std::optional<OracleResult> entropy_double_double(const Input& in) {
  using dd::DD;
  constexpr double u2 = 0x1p-106;
  const auto& pr = in.args.at(0).values;
  if (pr.size() > (size_t{1} << 20)) return std::nullopt;
  DD h{0, 0};
  double tiny = 0;
  long double num = 0;
  for (double v : pr) {
    if (v == 0) continue;
    if (!(v > 0 && v <= 1)) return std::nullopt;
    const auto l = dd::log_dd({v, 0});
    if (!l) return std::nullopt;
    h = dd::add_accurate(h, dd::mul(*l, -v));
    tiny += 0x1p-1070;
    num += v * std::fabs(static_cast<long double>(l->hi) + l->lo + 1);
  }
  OracleResult r;
  r.decidable = true;
  r.precision_bits = 106;
  if (h.hi == 0) {  // every p_i is 0 or 1 (log 1 = 0 exactly): H = 0
    r.exact = {0.0};
    r.cond = {num == 0 ? 0.0 : INFINITY};
    return r;
  }
  const double n = static_cast<double>(pr.size());
  const double delta = std::fabs(h.hi) * (0x1p-93 + 3.3 * n * u2) + tiny;
  std::optional<double> v = dd::round_double_double(h, delta, in.dtype);
  if (!v && delta <= std::fabs(h.hi) * 0x1p-88) {
    Real yr(128);
    mpfr_set_d(yr, h.hi, MPFR_RNDN);
    mpfr_add_d(yr, yr, h.lo, MPFR_RNDN);
    v = round_decided(yr, 87, in.dtype);
  }
  if (!v) return std::nullopt;
  r.exact = {*v};
  r.cond = {static_cast<double>(num / (static_cast<long double>(h.hi) + h.lo))};
  return r;
}

}  // namespace stabfuzz::oracle::detail
