// The elementwise oracles' fast path: each output in double-double with a proven error bound
// (oracles/double_double.h), rounded when the bound decides it, a row's evaluations batched 8
// at a time; unary() (oracles/elementwise.cc) sends what this does not decide to MPFR.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/elementwise.h"
#include "oracles/mpfr_util.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz::oracle {
namespace {

constexpr mpfr_rnd_t kN = MPFR_RNDN;

using dd::DD;

// f(x) in double-double with an absolute error bound (value q 2^-1074 where `scaled`), or nullopt
// where the fast path does not apply (results near 0 or 1 that need more than 2^-89, zeros whose
// sign matters, infinities, ...). Every relative bound below is under 2^-89.4 (double_double.h
// states each primitive's):
//  - exp: exp_dd, 2^-90.5. log: log_dd, 2^-95.4. log1p: log1p_dd on [-0.5, 1], else log_dd of
//    1 + x (exact as a double-double).
//  - expm1: expm1_dd, 2^-89.5; below -600 it is -1 within e^-600 < 2^-865.
//  - tanh: e / (e + 2), e = expm1(2|x|): e's error damped by 2 / (e + 2) <= 1, the sum 3u^2 and
//    DWDivDW2 15u^2 + 56u^3: < 2^-89.49. Past |x| = 354.5 it is +-1 within 2^-1000.
//  - sigmoid: 1 / (1 + e^-x) or e^x / (1 + e^x) (e^(-|x|) from exp_dd, in both numerator and
//    denominator at worst): 2 x 2^-90.5 + 19u^2 < 2^-89.49; past 600 it is 1 within 2^-865.
//  - silu: x sigmoid(x), DWTimesFP3 2u^2 more.
//  - softplus: log1p(e^x) for x <= 0 (log1p damps e^x's error: t / ((1 + t) log1p t) <= 1):
//    2^-90.5 + 2^-97.8; x + log1p(e^-x) for x > 0, two positive terms: the same plus 3u^2; past
//    600, x within 2^-865. log_sigmoid(x) = -softplus(-x).
//  - Of |x| < 2^-900: exp is 1 within 2^-899, sigmoid 1/2 within 2^-900, softplus log 2 + x/2
//    (L0 + L1 within 2^-105), silu x/2 within |x| 2^-900 where x/2 is exact.
//  - Results of exp, sigmoid, softplus, log_sigmoid and silu below 2^-866 in f64 (x beyond -+600):
//    e^x 2^1074 = exp_dd(x + 1074 ln 2), the shift from two exact products and two
//    AccurateDWPlusDW (absolute error < 2 x 3u^2 x 145 + 1074 |L2| < 2^-96): < 2^-90.4. (silu
//    takes x down to -800, where 800 e^-800 < 2^-1144 rounds to -0.) Sigmoid
//    and softplus are e^x within a factor 1 + e^x (< 1 + 2^-800), silu x e^x (2u^2) within the
//    same.
//  - exp and expm1 (e^x within 2^-1000) of x in (709.78, 709.7828] in f64: 2 e^(x - ln 2), the
//  shift
//    within 2 x 3u^2 x 710 < 2^-94.
struct Approx {
  DD q;
  double delta;
  int shift = 0;  // the value is q 2^shift: 0, kSubnormalShift or 1
};
constexpr int kSubnormalShift = -1074;
constexpr double kRelBound = 0x1p-89;  // |exact| 2^-89.4 <= |q.hi| 2^-89
constexpr double kTiny = 0x1p-900;
std::optional<Approx> relative(std::optional<DD> q, int shift = 0) {
  if (!q) return std::nullopt;
  return Approx{*q, std::fabs(q->hi) * kRelBound, shift};
}
template <class P>
DD sigmoid_dd(double x, P& pr) {
  if (x >= 0) return dd::div({1, 0}, dd::add_accurate({1, 0}, pr.exp({-x, 0})));
  const DD e = pr.exp({x, 0});
  return dd::div(e, dd::add_accurate({1, 0}, e));
}
// e^x / 2 for x in (kMaxExpArg, 709.7828]: exp_dd(x - ln 2), the shift within 2 x 3u^2 x 710.
template <class P>
DD exp_halved(double x, P& pr) {
  const dd::ExpConstants& c = dd::exp_constants();
  return pr.exp(dd::add_accurate({x, 0}, {-c.l0, -c.l1}));
}
constexpr double kOverflowArg = 709.7828;  // e^x > DBL_MAX + ulp / 2 (log of it: 709.78271289...)
// The band of x where a result of e^x's size is below 2^-866 (f64 only: the other dtypes round it
// to 0) and above 2^-1076.
constexpr double kScaledFrom = -746, kScaledTo = dd::kMinExpArg;
template <class P>
std::optional<Approx> softplus_dd(double x, DType dt, P& pr) {
  if (std::fabs(x) < kTiny) {  // log 2 + x/2 + ...: L0 + L1 within |L2| + 2^-900 < 2^-105
    const dd::ExpConstants& c = dd::exp_constants();
    return Approx{{c.l0, c.l1}, 0x1p-105};
  }
  if (x > -dd::kMinExpArg) return Approx{{x, 0}, 0x1p-865};
  if (x < kScaledTo && dt == DType::f64)
    return relative(dd::exp_scaled_1074(x, pr), kSubnormalShift);
  if (x < dd::kMinExpArg) return std::nullopt;
  if (x <= 0) return relative(dd::log1p_dd(pr.exp({x, 0}), pr));
  const auto l = dd::log1p_dd(pr.exp({-x, 0}), pr);
  if (!l) return std::nullopt;
  return relative(dd::add_accurate({x, 0}, *l));
}
// gelu_tanh's z = 2u = 2 sqrt(2/pi) (x + 0.044715 x^3): the constants as double-doubles from MPFR
// (within u^2 each), x^3 from an exact square and DWTimesFP3 (2u^2), 0.044715 x^3 (4u^2), plus x
// of the same sign (3u^2), times the constant (4u^2): within 15u^2 < 2^-102 |z|. Below |x| =
// 2^-300, z = 2 sqrt(2/pi) x within 2^-600.
struct GeluTanhConstants {
  DD k, c;  // 2 sqrt(2/pi), 0.044715
  GeluTanhConstants() {
    Real v(320), h(320);
    mpfr_const_pi(v, kN);
    mpfr_ui_div(v, 8, v, kN);
    mpfr_sqrt(v, v, kN);
    k.hi = mpfr_get_d(v, kN);
    mpfr_sub_d(h, v, k.hi, kN);
    k.lo = mpfr_get_d(h, kN);
    mpfr_set_str(v, "0.044715", 10, kN);
    c.hi = mpfr_get_d(v, kN);
    mpfr_sub_d(h, v, c.hi, kN);
    c.lo = mpfr_get_d(h, kN);
  }
};
DD gelu_tanh_z(double x) {
  static const GeluTanhConstants g;
  if (std::fabs(x) < 0x1p-300) return dd::mul(g.k, DD{x, 0});
  const DD x3 = dd::mul(dd::two_prod(x, x), x);
  return dd::mul(g.k, dd::add_accurate({x, 0}, dd::mul(g.c, x3)));
}
// gelu_tanh(x) = x sigmoid(z) for 2^-900 <= |x| <= 20 (x > 20, or z > 600: x within 2^-865; x < -22
// is -0: special()). z's error (|z| 2^-102 absolute) moves e^z by |z| 2^-102 <= 2^-92.5 relative
// for |z| <= 800. z >= 0: 1 / (1 + e^-z), whose relative error is at most e^-z's (2^-90.5 +
// 2^-92.9), plus 19u^2; z in [-600, 0): e^z / (1 + e^z), within e^z's error (damped by 1 / (1 +
// e^z)) plus 19u^2; times x 2u^2: < 2^-90.2. f64 results with z in [-800, -600): x e^z within a
// factor 1 + 2^-865, from e^z 2^1074 (exp_scaled_1074 of z: 2^-90.4 + 2^-92.5); the other dtypes
// leave that band to MPFR (their results there round to -0).
template <class P>
std::optional<Approx> gelu_tanh_dd(double x, DType dt, P& pr) {
  if (x > 20) return Approx{{x, 0}, x * 0x1p-865};
  if (std::fabs(x) < kTiny) {  // x/2 + 0.4 x^2 + ...: x/2 when it is exact
    if (std::fabs(x) < 0x1p-1021) return std::nullopt;
    return Approx{{x / 2, 0}, std::fabs(x) * kTiny};
  }
  const DD z = gelu_tanh_z(x);
  if (z.hi > -dd::kMinExpArg) return Approx{{x, 0}, std::fabs(x) * 0x1p-865};  // 1 - e^-z, z > 600
  if (z.hi >= 0)
    return relative(dd::mul(dd::div({1, 0}, dd::add_accurate({1, 0}, pr.exp({-z.hi, -z.lo}))), x));
  if (z.hi >= dd::kMinExpArg) {
    const DD e = pr.exp(z);
    return relative(dd::mul(dd::div(e, dd::add_accurate({1, 0}, e)), x));
  }
  if (dt != DType::f64 || z.hi < -800) return std::nullopt;
  return relative(dd::mul(dd::exp_scaled_1074(z, pr), x), kSubnormalShift);
}
// 2 / sqrt(pi) and 1 / sqrt(2) as double-doubles from MPFR (within u^2 each).
struct ErfConstants {
  DD two_over_sqrt_pi, inv_sqrt2;
  ErfConstants() {
    Real v(320), h(320);
    const auto split = [&](DD& d) {
      d.hi = mpfr_get_d(v, kN);
      mpfr_sub_d(h, v, d.hi, kN);
      d.lo = mpfr_get_d(h, kN);
    };
    mpfr_const_pi(v, kN);
    mpfr_sqrt(v, v, kN);
    mpfr_ui_div(v, 2, v, kN);
    split(two_over_sqrt_pi);
    mpfr_set_ui(v, 2, kN);
    mpfr_rec_sqrt(v, v, kN);
    split(inv_sqrt2);
  }
};
const ErfConstants& erf_constants() {
  static const ErfConstants c;
  return c;
}
// erf(a) for a double-double a in [2^-300, 6), with its relative error bound: (2 / sqrt(pi))
// e^(-a^2) S, S = sum over n of a (2a^2)^n / (1 3 5 ... (2n+1)), every term positive. Each term is
// the previous one times 2a^2 (DWTimesDW3; a^2 from DWTimesDW3 too, 4u^2) over 2n + 1 (DWDivDW2,
// 16u^2): term n within 24n u^2; the sum of positive terms 3u^2 per addition; the series stops
// where a term is below 2^-110 of the sum and the ratio 2a^2 / (2n + 3) below 1/2, so the tail is
// below the last term (at most 130 terms below a = 6; nullopt past 200). e^(-a^2) from exp_dd
// within 2^-90.5 (a^2's own 4u^2 moves it by 36 x 4u^2 more), two products 4u^2 each, the constant
// u^2: in all 2^-90.5 + 200 x 27u^2 + 2^-110 + 190u^2 < 2^-90.
template <class P>
std::optional<DD> erf_series(DD a, P& pr) {
  const DD a2 = dd::mul(a, a), t{2 * a2.hi, 2 * a2.lo};
  DD term = a, sum = a;
  for (int n = 1; n <= 200; ++n) {
    term = dd::div(dd::mul(term, t), {2.0 * n + 1, 0});
    sum = dd::add_accurate(sum, term);
    if (term.hi < sum.hi * 0x1p-110 && 2 * t.hi < 2.0 * n + 3)
      return dd::mul(dd::mul(sum, pr.exp({-a2.hi, -a2.lo})), erf_constants().two_over_sqrt_pi);
  }
  return std::nullopt;
}
// erf(x): +-1 within erfc(6) < 2^-55 for |x| >= 6 (which rounds to +-1 in every dtype), x 2 /
// sqrt(pi) within 2^-600 relative below 2^-300 (below 2^-960 in the scale 2^1074, where f64's
// subnormals are integers), else erf_series (2^-90).
template <class P>
std::optional<Approx> erf_dd(double x, DType dt, P& pr) {
  const double a = std::fabs(x);
  DD q;
  double delta;
  if (a >= 6) {
    q = {1, 0};
    delta = 0x1p-55;
  } else if (a < 0x1p-960) {  // f64 only (the other dtypes hold no such x): in the 2^1074 scale
    if (dt != DType::f64) return std::nullopt;
    q = dd::mul(erf_constants().two_over_sqrt_pi, std::ldexp(x, 1074));  // x 2^1074 exact
    return Approx{q, std::fabs(q.hi) * 0x1p-100, kSubnormalShift};
  } else if (a < 0x1p-300) {
    q = dd::mul(erf_constants().two_over_sqrt_pi, a);
    delta = q.hi * 0x1p-100;
  } else {
    const auto e = erf_series({a, 0}, pr);
    if (!e) return std::nullopt;
    q = *e;
    delta = q.hi * kRelBound;
  }
  if (x < 0) q = {-q.hi, -q.lo};
  return Approx{q, delta};
}
// gelu(x) = (x / 2) (1 + erf(w)), w = x / sqrt(2) (DWTimesFP3 and the constant: 3u^2 of w, which
// moves erf by less than 3.4u^2 relatively). x >= 0: two nonnegative terms, within erf's 2^-90 +
// 3u^2, times x / 2 (exact halving, DWTimesFP3 2u^2): < 2^-89.9; from w >= 6 (x > 8.49), x within
// 2^-56. x < 0: (x / 2) (1 - erf|w|), the difference carrying erf's error times erf / (1 - erf):
// the bound grows as 1 - erf shrinks, and the rounding decides whether it still suffices; |w| past
// 5.9 goes to MPFR (x < -39 is -0: special()). Below |x| = 2^-900: x / 2 within |x| 2^-900.
template <class P>
std::optional<Approx> gelu_dd(double x, P& pr) {
  constexpr double u2 = 0x1p-106;
  const double a = std::fabs(x);
  if (a < kTiny) {  // x/2 + x^2 / sqrt(2 pi) + ...: x/2 when it is exact
    if (a < 0x1p-1021) return std::nullopt;
    return Approx{{x / 2, 0}, a * kTiny};
  }
  const DD w = dd::mul(erf_constants().inv_sqrt2, a);
  if (x >= 0 && w.hi >= 6) return Approx{{x, 0}, x * 0x1p-56};
  if (w.hi >= 5.9 || w.hi < 0x1p-300) return std::nullopt;
  const auto e = erf_series(w, pr);
  if (!e) return std::nullopt;
  const double rel_e = 0x1p-90 + 3.4 * u2;
  if (x >= 0) {
    const DD s = dd::add_accurate({1, 0}, *e);
    const DD q = dd::mul(s, x / 2);
    return Approx{q, q.hi * (rel_e + 6 * u2) * 1.01};
  }
  const DD c = dd::add_accurate({1, 0}, {-e->hi, -e->lo});
  const DD q = dd::mul(c, x / 2);
  const double rel = (rel_e * e->hi / c.hi + 3 * u2) * 1.01 + 2 * u2;
  return Approx{q, std::fabs(q.hi) * rel * 1.01};
}
template <class P>
std::optional<Approx> approx(Unary f, double x, DType dt, P& pr) {
  if (!std::isfinite(x)) return std::nullopt;
  const bool tiny = std::fabs(x) < kTiny;
  switch (f) {
    case Unary::exp:
      if (tiny) return Approx{{1, 0}, 0x1p-899};  // 1 + x + ...
      if (x < kScaledTo && dt == DType::f64)
        return relative(dd::exp_scaled_1074(x, pr), kSubnormalShift);
      if (x > dd::kMaxExpArg && dt == DType::f64) return relative(exp_halved(x, pr), 1);
      if (x < dd::kMinExpArg || x > dd::kMaxExpArg) return std::nullopt;
      return relative(pr.exp({x, 0}));
    case Unary::log:
      if (!(x > 0)) return std::nullopt;
      return relative(dd::log_dd({x, 0}, pr));
    case Unary::log1p:
      if (x >= -0.5 && x <= 1) return relative(dd::log1p_dd({x, 0}, pr));
      if (x > 1) return relative(dd::log_dd(dd::two_sum(1, x), pr));
      if (x > -1) return relative(dd::log_dd({1 + x, 0}, pr));  // 1 + x exact (Sterbenz)
      return std::nullopt;
    case Unary::expm1:
      if (x < dd::kMinExpArg) return Approx{{-1, 0}, 0x1p-865};
      if (x > dd::kMaxExpArg) {  // e^x - 1 = e^x (1 - e^-x), within 2^-1000 of e^x
        if (dt != DType::f64) return std::nullopt;
        return relative(exp_halved(x, pr), 1);
      }
      return relative(dd::expm1_dd(x, pr));
    case Unary::tanh: {
      const double a = std::fabs(x);
      DD q{1, 0};
      double delta = 0x1p-1000;
      if (2 * a <= dd::kMaxExpArg) {
        const DD e = dd::expm1_dd(2 * a, pr);
        q = dd::div(e, dd::add_accurate(e, {2, 0}));
        delta = q.hi * kRelBound;
      }
      if (x < 0) q = {-q.hi, -q.lo};
      return Approx{q, delta};
    }
    case Unary::sigmoid:
      if (tiny) return Approx{{0.5, 0}, 0x1p-900};  // 1/2 + x/4 + ...
      if (x > -dd::kMinExpArg) return Approx{{1, 0}, 0x1p-865};
      if (x < kScaledTo && dt == DType::f64)
        return relative(dd::exp_scaled_1074(x, pr), kSubnormalShift);
      if (x < dd::kMinExpArg) return std::nullopt;
      return relative(sigmoid_dd(x, pr));
    case Unary::silu:
      if (x > -dd::kMinExpArg) return Approx{{x, 0}, x * 0x1p-865};
      if (x < kScaledTo && dt == DType::f64)  // x >= -800 here
        return relative(dd::mul(dd::exp_scaled_1074(x, pr), x), kSubnormalShift);
      if (tiny) {  // x/2 + x^2/4 - ...: x/2 when it is exact
        if (std::fabs(x) < 0x1p-1021) return std::nullopt;
        return Approx{{x / 2, 0}, std::fabs(x) * kTiny};
      }
      if (x < dd::kMinExpArg) return std::nullopt;
      return relative(dd::mul(sigmoid_dd(x, pr), x));
    case Unary::softplus:
      return softplus_dd(x, dt, pr);
    case Unary::log_sigmoid: {
      auto a = softplus_dd(-x, dt, pr);
      if (a) a->q = {-a->q.hi, -a->q.lo};
      return a;
    }
    case Unary::gelu_tanh:
      return gelu_tanh_dd(x, dt, pr);
    case Unary::erf:
      return erf_dd(x, dt, pr);
    case Unary::gelu:
      return gelu_dd(x, pr);
  }
  return std::nullopt;
}

// Exact results, and results that round to 0 or overflow: e^x below 2^-1076 (e^-746 < 2^-1076,
// and 800 e^-800 < 2^-1144) in every dtype, below 2^-865 (x < -600) in the dtypes other than f64,
// e^x above DBL_MAX + ulp/2 (f64) or e^100 > 2^144 (the others); silu of tiny x.
std::optional<double> special(Unary f, double x, DType dt) {
  if (std::isinf(x)) {
    const double l = detail::unary_limit(f, x > 0);
    if (std::isnan(l)) return std::nullopt;
    return l;
  }
  // expm1, tanh and log1p of |x| < 2^-900 are x within x^2 / 2: x in every dtype (no arithmetic on
  // subnormals, which is slow).
  if ((f == Unary::expm1 || f == Unary::tanh || f == Unary::log1p) && std::fabs(x) < kTiny)
    return x;
  const double zero_below = dt == DType::f64 ? kScaledFrom : dd::kMinExpArg;
  switch (f) {
    case Unary::exp:
    case Unary::sigmoid:
    case Unary::softplus:
      if (x < zero_below) return 0.0;
      break;
    case Unary::log_sigmoid:
      if (x > -zero_below) return -0.0;
      break;
    case Unary::silu:
      if (x < (dt == DType::f64 ? -800 : dd::kMinExpArg)) return -0.0;
      if (x == 0) return x;
      break;
    case Unary::gelu_tanh:  // x < -22: z < -795, |x| e^z < 2^-1147
      if (x < -22) return -0.0;
      if (x == 0) return x;
      break;
    case Unary::gelu:  // x < -39: |x Phi(x)| < e^(-x^2 / 2) < 2^-1097
      if (x < -39) return -0.0;
      if (x == 0) return x;
      break;
    case Unary::erf:
      if (x == 0) return x;
      break;
    case Unary::log:
      if (x == 0) return -INFINITY;
      if (x == 1) return 0.0;
      break;
    case Unary::log1p:
      if (x == -1) return -INFINITY;
      break;
    default:
      break;
  }
  if ((f == Unary::exp || f == Unary::expm1) && x > (dt == DType::f64 ? kOverflowArg : 100))
    return INFINITY;
  // silu of an f64 below 2^-1021: x/2 + x^2/4 - ..., and x/2 = m/2 2^-1074 with m = x 2^1074 an
  // integer: m/2 when m is even; for odd m, x^2/4 > 0 breaks the tie upward.
  // gelu_tanh(x) = x/2 + sqrt(2/pi) x^2 / 2 + ... and gelu(x) = x/2 + x^2 / sqrt(2 pi) + ...: the
  // same.
  const bool half_plus_square = f == Unary::silu || f == Unary::gelu_tanh || f == Unary::gelu;
  if (half_plus_square && dt == DType::f64 && x != 0 && std::fabs(x) < 0x1p-1021)
    return std::ldexp(std::ceil(std::ldexp(x, 1074) / 2), -1074);
  // The same in the other dtypes, for |x| < 2^-60: silu(x) is in (x/2, x/2 + x^2/4] (gelu_tanh's
  // and gelu's in (x/2, x/2 + 0.4 x^2]), and x/2 (exact) lies on the dtype's grid of values and
  // midpoints, whose points are more than x^2/4 apart: the next double above x/2 rounds as every
  // value of that interval does.
  if (half_plus_square && dt != DType::f64 && x != 0 && std::fabs(x) < 0x1p-60)
    return round_to_format(dtype_format(dt), std::nextafter(x / 2, INFINITY));
  return std::nullopt;
}

// The dtype's rounding of an approximation, when its bound decides it.
std::optional<double> round_approx(const Approx& a, DType dt) {
  if (a.shift == kSubnormalShift) return dd::round_f64_scaled(a.q, a.delta);
  if (a.shift == 1) {  // f64 only: RN(2q) = 2 RN(q), overflowing when RN(q) = 2^1023
    const auto r = dd::round_double_double(a.q, a.delta, dt);
    if (!r) return std::nullopt;
    return 2 * *r;
  }
  if (auto r = dd::round_double_double(a.q, a.delta, dt)) return r;
  // Subnormal f64 results, and the ends of the interval rounding apart: through MPFR, with hi + lo
  // set in 128 bits (2^-128) and the bound as a relative one (2^-89 + 2^-128 < 2^-88).
  if (a.q.hi == 0 || a.delta > std::fabs(a.q.hi) * kRelBound) return std::nullopt;
  Real y(128);
  mpfr_set_d(y, a.q.hi, kN);
  mpfr_add_d(y, y, a.q.lo, kN);
  return round_decided(y, 88, dt);
}

// The primitive calls (e^x, small e^x - 1) of a block of outputs' evaluations, run 8 at a time: an
// evaluation is one chain of about 200 dependent operations, and 8 independent chains interleave
// (about 3x the throughput of one at a time). A pass over the outputs records each one's next call
// and gives it a placeholder (that output's result is discarded); run() computes the recorded
// calls; the next pass gets them, bit-identical arguments checked, and records the following call
// (softplus: e^x, then log1p's e^y - 1). At most kCalls calls per output.
class BatchedPrimitives {
 public:
  static constexpr size_t kCalls = 2;
  explicit BatchedPrimitives(size_t n) : slots_(kCalls * n) {}
  void begin(size_t i) {
    base_ = kCalls * i;
    used_ = 0;
    missing_ = false;
  }
  bool missing() const { return missing_; }
  DD exp(DD x) { return call(Kind::exp, x); }
  DD expm1_small(double x) { return call(Kind::expm1, {x, 0}); }
  void run() {
    run_kind(Kind::exp);
    run_kind(Kind::expm1);
  }

 private:
  enum class Kind : uint8_t { none, exp, expm1 };
  struct Slot {
    Kind kind = Kind::none;
    bool ready = false;
    DD arg{0, 0}, value{0, 0};
  };
  static constexpr size_t kLanes = 8;
  DD call(Kind k, DD x) {
    if (missing_) return {1, 0};  // this output is discarded: no more calls recorded
    if (used_ == kCalls) return k == Kind::exp ? dd::exp_dd(x) : dd::expm1_small(x.hi);
    Slot& s = slots_[base_ + used_++];
    if (s.ready && s.kind == k && s.arg.hi == x.hi && s.arg.lo == x.lo) return s.value;
    s = Slot{k, false, x, {0, 0}};
    missing_ = true;
    return {1, 0};
  }
  void run_kind(Kind k) {
    std::vector<size_t> at;
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].kind == k && !slots_[i].ready) at.push_back(i);
    for (size_t b = 0; b < at.size(); b += kLanes) {
      DD in[kLanes] = {}, out[kLanes];
      double in1[kLanes] = {};
      const size_t m = std::min(kLanes, at.size() - b);
      for (size_t j = 0; j < m; ++j) {
        in[j] = slots_[at[b + j]].arg;
        in1[j] = in[j].hi;
      }
      if (k == Kind::exp)
        dd::exp_dd_lanes<kLanes>(in, out);
      else
        dd::expm1_small_lanes<kLanes>(in1, out);
      for (size_t j = 0; j < m; ++j) {
        slots_[at[b + j]].value = out[j];
        slots_[at[b + j]].ready = true;
      }
    }
  }
  std::vector<Slot> slots_;
  size_t base_ = 0, used_ = 0;
  bool missing_ = false;
};

}  // namespace

namespace detail {

// Outputs [from, to) of unary(): the double-double path, batched; outputs it does not decide go to
// `rest`.
void unary_double_double_block(Unary f, const std::vector<double>& x, DType dt, size_t from,
                               size_t to, OracleResult& r, std::vector<size_t>& rest) {
  enum class State : uint8_t { pending, done, mpfr };
  std::vector<State> state(to - from, State::pending);
  for (size_t i = from; i < to; ++i) {
    if (const auto y = special(f, x[i], dt)) {
      r.exact[i] = *y;
      state[i - from] = State::done;
    } else if (!std::isfinite(x[i])) {
      state[i - from] = State::mpfr;
    }
  }
  BatchedPrimitives prims(to - from);
  for (size_t pass = 0; pass <= BatchedPrimitives::kCalls; ++pass) {
    bool recorded = false;
    for (size_t i = from; i < to; ++i) {
      if (state[i - from] != State::pending) continue;
      prims.begin(i - from);
      const auto a = approx(f, x[i], dt, prims);
      if (prims.missing()) {
        recorded = true;
        continue;
      }
      const auto y = a ? round_approx(*a, dt) : std::nullopt;
      if (y) r.exact[i] = *y;
      state[i - from] = y ? State::done : State::mpfr;
    }
    if (!recorded) break;
    prims.run();
  }
  for (size_t i = from; i < to; ++i) {
    State& s = state[i - from];
    if (s == State::pending) {  // not reached: each output makes at most kCalls calls
      const auto y = unary_double_double(f, x[i], dt);
      if (y) r.exact[i] = *y;
      s = y ? State::done : State::mpfr;
    }
    if (s == State::done)
      r.cond[i] = unary_cond(f, x[i]);
    else
      rest.push_back(i);
  }
}

std::optional<double> unary_double_double(Unary f, double x, DType dt) {
  if (const auto y = special(f, x, dt)) return y;
  dd::DirectPrimitives direct;
  const auto a = approx(f, x, dt, direct);
  if (!a) return std::nullopt;
  return round_approx(*a, dt);
}

}  // namespace detail

}  // namespace stabfuzz::oracle
