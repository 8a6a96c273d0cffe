// Elementwise oracles in MPFR: each function's evaluation with its error bound, and its
// conditioning.
//
// Every evaluation returns a margin m: the value it leaves in y (precision p) is within
// |y| 2^(m - p) of f(x), and round_decided is asked for exactly that. Error counts below are in
// units of 2^-p (one correctly rounded MPFR operation); x is exact (53 bits).
#include "oracles/elementwise.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle {
namespace {

constexpr mpfr_rnd_t kN = MPFR_RNDN;
// x^3 of a double is exact in 3 x 53 bits.
constexpr mpfr_prec_t kExactCubePrecision = 3 * kExactDoublePrecision;

// Temporaries and constants at the working precision, made once per Ziv attempt.
struct Scratch {
  Scratch(Unary f, mpfr_prec_t p) : a(p), b(p), c(p), d(p), x3(kExactCubePrecision), k(p) {
    if (f == Unary::gelu) {
      mpfr_sqrt_ui(k, 2, kN);  // sqrt 2: 1
    } else if (f == Unary::gelu_tanh) {
      mpfr_const_pi(k, kN);      // pi: 1
      mpfr_ui_div(k, 2, k, kN);  // 2/pi: 2
      mpfr_sqrt(k, k, kN);       // sqrt(2/pi): 2/2 + 1 = 2
    }
  }
  Real a, b, c, d, x3;
  Real k;  // gelu: sqrt 2; gelu_tanh: sqrt(2/pi)
};

// f at x = +inf and x = -inf (NaN: outside the domain, rejected by validation).
double limit(Unary f, bool positive) {
  switch (f) {
    case Unary::exp:
      return positive ? INFINITY : 0.0;
    case Unary::log:
    case Unary::log1p:
      return positive ? INFINITY : NAN;
    case Unary::expm1:
      return positive ? INFINITY : -1.0;
    case Unary::tanh:
    case Unary::erf:
      return positive ? 1.0 : -1.0;
    case Unary::sigmoid:
      return positive ? 1.0 : 0.0;
    case Unary::log_sigmoid:
      return positive ? -0.0 : -INFINITY;
    case Unary::softplus:
      return positive ? INFINITY : 0.0;
    case Unary::silu:
    case Unary::gelu:
    case Unary::gelu_tanh:
      return positive ? INFINITY : -0.0;
  }
  return NAN;
}

// y = 1/(1 + e^-z) from e^-|z| <= 1 (no overflow): e^z or e^-z: 1, 1 + e: 1 + 1 damped by
// e/(1+e) <= 1, the quotient: 1. Total 4, beyond the error z itself carries.
void sigmoid(mpfr_ptr y, mpfr_srcptr z, Scratch& s) {
  if (mpfr_sgn(z) >= 0) {
    mpfr_neg(s.c, z, kN);
    mpfr_exp(s.c, s.c, kN);
    mpfr_add_ui(s.c, s.c, 1, kN);
    mpfr_ui_div(y, 1, s.c, kN);
  } else {
    mpfr_exp(s.c, z, kN);
    mpfr_add_ui(s.d, s.c, 1, kN);
    mpfr_div(y, s.c, s.d, kN);
  }
}

// |x| < 2^e for x != 0.
long exponent_bound(mpfr_srcptr x) {
  return mpfr_zero_p(x) ? 0 : static_cast<long>(mpfr_get_exp(x));
}

// f(x) into y; returns the margin m (error <= |y| 2^(m - p)). log1p(t), t > 0, damps a relative
// error of t by t / ((1 + t) log1p t) <= 1, which the softplus family relies on.
long evaluate(Unary f, mpfr_ptr y, mpfr_srcptr x, Scratch& s) {
  if (mpfr_inf_p(x)) {
    mpfr_set_d(y, limit(f, mpfr_sgn(x) > 0), kN);
    return 0;
  }
  switch (f) {
    // Correctly rounded MPFR functions: error <= 2^-p relative; margin 1 leaves room.
    case Unary::exp:
      mpfr_exp(y, x, kN);
      return 1;
    case Unary::log:
      mpfr_log(y, x, kN);
      return 1;  // log(+-0) = -inf
    case Unary::log1p:
      mpfr_log1p(y, x, kN);
      return 1;  // log1p(-1) = -inf
    case Unary::expm1:
      mpfr_expm1(y, x, kN);
      return 1;
    case Unary::tanh:
      mpfr_tanh(y, x, kN);
      return 1;
    case Unary::erf:
      mpfr_erf(y, x, kN);
      return 1;
    case Unary::sigmoid:  // 4 (x exact)
      sigmoid(y, x, s);
      return 3;
    case Unary::silu:  // sigmoid 4, product 1: 5 < 2^3
      sigmoid(y, x, s);
      mpfr_mul(y, y, x, kN);
      return 3;
    case Unary::log_sigmoid:
      // x >= 0: -log1p(e^-x): exp 1 (damped), log1p 1: 2. x < 0: x - log1p(e^x), two terms of one
      // sign: 2 + the difference 1: 3 < 2^3 with second-order terms.
      if (mpfr_sgn(x) >= 0) {
        mpfr_neg(s.a, x, kN);
        mpfr_exp(s.a, s.a, kN);
        mpfr_log1p(s.a, s.a, kN);
        mpfr_neg(y, s.a, kN);
      } else {
        mpfr_exp(s.a, x, kN);
        mpfr_log1p(s.a, s.a, kN);
        mpfr_sub(y, x, s.a, kN);
      }
      return 3;
    case Unary::softplus:
      // x <= 0: log1p(e^x): 2. x > 0: x + log1p(e^-x), two positive terms: 3.
      if (mpfr_sgn(x) <= 0) {
        mpfr_exp(s.a, x, kN);
        mpfr_log1p(y, s.a, kN);
      } else {
        mpfr_neg(s.a, x, kN);
        mpfr_exp(s.a, s.a, kN);
        mpfr_log1p(s.a, s.a, kN);
        mpfr_add(y, x, s.a, kN);
      }
      return 3;
    case Unary::gelu: {
      // y = x erfc(w) / 2, w = -x / sqrt 2 (w: 2). erfc turns w's error into cond_erfc(w) times it:
      // cond_erfc(w) = 2|w| e^(-w^2) / (sqrt(pi) erfc w) < 0.49 for w <= 0 (erfc >= 1), and
      // < w (w + sqrt(w^2 + 2)) <= 2w^2 + 1 for w > 0 (erfc w > 2 e^(-w^2) / (sqrt(pi) (w +
      // sqrt(w^2 + 2))), Abramowitz-Stegun 7.1.13). With erfc's own 1 and the product's 1:
      // x >= 0: < 3; x < 0: < 2 (x^2 + 1) + 2 < 2^(2E + 3) for |x| < 2^E, E >= 0.
      mpfr_div(s.a, x, s.k, kN);
      mpfr_neg(s.a, s.a, kN);
      mpfr_erfc(s.b, s.a, kN);
      mpfr_mul(y, s.b, x, kN);
      mpfr_div_2ui(y, y, 1, kN);  // exact
      if (mpfr_sgn(x) >= 0) return 3;
      return 2 * std::max(0L, exponent_bound(x)) + 4;
    }
    case Unary::gelu_tanh: {
      // The definition evaluated as x sigmoid(2u), the same real number as x/2 (1 + tanh u)
      // without 1 + tanh u cancelling for u << 0. u = sqrt(2/pi) (x + 0.044715 x^3): the decimal
      // 0.044715: 1, times the exact x^3: 2, plus x (same sign): 3, times sqrt(2/pi) (2): 6.
      // sigmoid turns z = 2u's relative error e into |z (1 - sigmoid z)| e, <= 0.28 e for z >= 0
      // and <= |z| e for z < 0; with its own 4 and the product's 1:
      // z >= 0: < 6 * 0.28 + 5 < 2^3; z < 0: < 6|z| + 5 < 2^(E + 4) for |z| < 2^E, E >= 0.
      mpfr_sqr(s.x3, x, kN);        // exact (106 bits)
      mpfr_mul(s.x3, s.x3, x, kN);  // exact (159 bits)
      mpfr_set_str(s.a, "0.044715", 10, kN);
      mpfr_mul(s.a, s.a, s.x3, kN);
      mpfr_add(s.a, s.a, x, kN);
      mpfr_mul(s.a, s.a, s.k, kN);
      mpfr_mul_2ui(s.a, s.a, 1, kN);  // z = 2u, exact
      sigmoid(y, s.a, s);
      mpfr_mul(y, y, x, kN);
      if (mpfr_sgn(s.a.get()) >= 0) return 4;
      return std::max(0L, exponent_bound(s.a)) + 5;
    }
  }
  return 0;
}

using LD = long double;
constexpr LD kPi = 3.141592653589793238462643383279502884L;

// t / ((1 + t) log1p t) for t >= 0, with its limit 1 at t = 0 (and for t that underflowed).
template <class R>
R log1p_damping(R t) {
  return t == 0 ? R(1) : t / ((1 + t) * std::log1p(t));
}

}  // namespace

std::string_view unary_name(Unary f) {
  switch (f) {
    case Unary::exp:
      return "exp";
    case Unary::log:
      return "log";
    case Unary::log1p:
      return "log1p";
    case Unary::expm1:
      return "expm1";
    case Unary::tanh:
      return "tanh";
    case Unary::erf:
      return "erf";
    case Unary::sigmoid:
      return "sigmoid";
    case Unary::log_sigmoid:
      return "log_sigmoid";
    case Unary::softplus:
      return "softplus";
    case Unary::silu:
      return "silu";
    case Unary::gelu:
      return "gelu";
    case Unary::gelu_tanh:
      return "gelu_tanh";
  }
  return "?";
}

double unary_cond(Unary f, double xd) {
  if (std::isinf(xd)) return 0.0;
  // The functions the double-double path serves, in double (a few correct digits are enough, and
  // each quotient is formed so that overflow or underflow gives its limit); erf and the gelus in
  // long double.
  {
    const double x = xd, ax = std::fabs(x);
    // Their limit at 0, which the formulas below also give there (without slow subnormal
    // arithmetic).
    if (ax < 0x1p-900 &&
        (f == Unary::log1p || f == Unary::expm1 || f == Unary::tanh || f == Unary::silu))
      return 1;
    switch (f) {
      case Unary::exp:  // x e^x / e^x
        return ax;
      case Unary::log:  // 1 / |log x|; log1p near 1, where x - 1 is exact
        if (x == 1) return 1;
        if (x == 0) return 0;
        return 1 / std::fabs(x > 0.5 && x < 2 ? std::log1p(x - 1) : std::log(x));
      case Unary::log1p:  // |x / ((1 + x) log1p x)|
        if (x == 0) return 1;
        if (x == -1) return 0;
        return std::fabs(x / (1 + x)) / std::fabs(std::log1p(x));
      case Unary::expm1:  // |x e^x / (e^x - 1)|, written without overflow for x > 0
        if (x == 0) return 1;
        if (x > 0) return x / -std::expm1(-x);
        return ax * std::exp(x) / -std::expm1(x);
      case Unary::tanh:  // |x (1 - tanh^2 x) / tanh x| = |2x / sinh 2x|
        if (x == 0) return 1;
        if (ax > 400) return 0;  // 4|x| e^(-2|x|) < 2^-1143
        return ax > 20 ? 4 * ax * std::exp(-2 * ax) : std::fabs(2 * x / std::sinh(2 * x));
      case Unary::sigmoid:  // |x (1 - sigmoid x)| = |x| / (1 + e^x)
        return ax / (1 + std::exp(x));
      case Unary::log_sigmoid:                               // |x sigmoid(-x) / log_sigmoid x|
        if (x >= 0) return x * log1p_damping(std::exp(-x));  // -> x as x -> inf: f ~ -e^-x
        return ax / (1 + std::exp(x)) / (ax + std::log1p(std::exp(x)));
      case Unary::softplus:                                  // |x sigmoid(x) / softplus x|
        if (x <= 0) return ax * log1p_damping(std::exp(x));  // -> |x| as x -> -inf: f ~ e^x
        return x / (1 + std::exp(-x)) / (x + std::log1p(std::exp(-x)));
      case Unary::silu:  // |1 + x (1 - sigmoid x)|
        return std::fabs(1 + x / (1 + std::exp(x)));
      default:
        break;
    }
  }
  const LD x = xd, ax = std::fabs(x);
  LD c = 0;
  switch (f) {
    case Unary::erf:  // |x (2/sqrt pi) e^(-x^2) / erf x|
      c = x == 0 ? 1 : ax * (2 / std::sqrt(kPi)) * std::exp(-x * x) / std::fabs(std::erf(x));
      break;
    case Unary::gelu:  // |1 + x phi(x) / Phi(x)|
      if (x < -100) {
        // Mills ratio: x phi / Phi = -(x^2 + 1) + O(x^-2), so cond = x^2 within 1e-8 (and
        // erfcl would underflow past x ~ -150).
        c = x * x;
      } else {
        const LD phi = std::exp(-x * x / 2) / std::sqrt(2 * kPi);
        const LD Phi = std::erfc(-x / std::sqrt(LD(2))) / 2;
        c = std::fabs(1 + x * phi / Phi);
      }
      break;
    case Unary::gelu_tanh: {  // f = x s(z), z = 2u: |1 + x z'(x) (1 - s(z))|
      const LD k = 2 * std::sqrt(2 / kPi), a = 0.044715L;
      const LD z = k * (x + a * x * x * x), xdz = k * (x + 3 * a * x * x * x);
      c = std::fabs(1 + xdz / (1 + std::exp(z)));
      break;
    }
    default:  // served above
      break;
  }
  return c > DBL_MAX ? DBL_MAX : static_cast<double>(c);
}

namespace {

// The MPFR evaluation (Ziv's ladder) of the outputs at `at`, in that order.
OracleResult unary_mpfr_at(Unary f, const Input& in, const std::vector<size_t>& at) {
  const auto& x = in.args.at(0).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real xm(kExactDoublePrecision), y(p);
    Scratch s(f, p);
    r.exact.resize(at.size());
    r.cond.resize(at.size());
    for (size_t k = 0; k < at.size(); ++k) {
      const double xi = x[at[k]];
      mpfr_set_d(xm, xi, kN);  // exact
      const long margin = evaluate(f, y, xm, s);
      // A bound that leaves fewer than 2 good bits decides nothing but 0 and inf.
      const bool trivial = mpfr_zero_p(y) || mpfr_inf_p(y);
      if (!trivial && margin > static_cast<long>(p) - 2) return false;
      const auto e = round_decided(y, static_cast<long>(p) - margin, in.dtype);
      if (!e) return false;
      r.exact[k] = *e;
      r.cond[k] = unary_cond(f, xi);
    }
    return true;
  });
}

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
// e^x 2^1074 for x in [-800, kMinExpArg).
template <class P>
DD exp_scaled(double x, P& pr) {
  const dd::ExpConstants& c = dd::exp_constants();
  DD a = dd::add_accurate({x, 0}, dd::two_prod(1074, c.l0));
  a = dd::add_accurate(a, dd::two_prod(1074, c.l1));
  return pr.exp(a);
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
  if (x < kScaledTo && dt == DType::f64) return relative(exp_scaled(x, pr), kSubnormalShift);
  if (x < dd::kMinExpArg) return std::nullopt;
  if (x <= 0) return relative(dd::log1p_dd(pr.exp({x, 0}), pr));
  const auto l = dd::log1p_dd(pr.exp({-x, 0}), pr);
  if (!l) return std::nullopt;
  return relative(dd::add_accurate({x, 0}, *l));
}
template <class P>
std::optional<Approx> approx(Unary f, double x, DType dt, P& pr) {
  if (!std::isfinite(x)) return std::nullopt;
  const bool tiny = std::fabs(x) < kTiny;
  switch (f) {
    case Unary::exp:
      if (tiny) return Approx{{1, 0}, 0x1p-899};  // 1 + x + ...
      if (x < kScaledTo && dt == DType::f64) return relative(exp_scaled(x, pr), kSubnormalShift);
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
      if (x < kScaledTo && dt == DType::f64) return relative(exp_scaled(x, pr), kSubnormalShift);
      if (x < dd::kMinExpArg) return std::nullopt;
      return relative(sigmoid_dd(x, pr));
    case Unary::silu:
      if (x > -dd::kMinExpArg) return Approx{{x, 0}, x * 0x1p-865};
      if (x < kScaledTo && dt == DType::f64)  // x >= -800 here
        return relative(dd::mul(exp_scaled(x, pr), x), kSubnormalShift);
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
    case Unary::erf:
    case Unary::gelu:
    case Unary::gelu_tanh:
      return std::nullopt;
  }
  return std::nullopt;
}

// Exact results, and results that round to 0 or overflow: e^x below 2^-1076 (e^-746 < 2^-1076,
// and 800 e^-800 < 2^-1144) in every dtype, below 2^-865 (x < -600) in the dtypes other than f64,
// e^x above DBL_MAX + ulp/2 (f64) or e^100 > 2^144 (the others); silu of tiny x.
std::optional<double> special(Unary f, double x, DType dt) {
  if (std::isinf(x)) {
    const double l = limit(f, x > 0);
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
  if (f == Unary::silu && dt == DType::f64 && x != 0 && std::fabs(x) < 0x1p-1021)
    return std::ldexp(std::ceil(std::ldexp(x, 1074) / 2), -1074);
  // The same in the other dtypes, for |x| < 2^-60: silu(x) is in (x/2, x/2 + x^2/4], and x/2
  // (exact) lies on the dtype's grid of values and midpoints, whose points are more than x^2/4
  // apart: the next double above x/2 rounds as every value of that interval does.
  if (f == Unary::silu && dt != DType::f64 && x != 0 && std::fabs(x) < 0x1p-60)
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
    } else if (!std::isfinite(x[i]) || f == Unary::erf || f == Unary::gelu ||
               f == Unary::gelu_tanh) {
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
      const auto y = detail::unary_double_double(f, x[i], dt);
      if (y) r.exact[i] = *y;
      s = y ? State::done : State::mpfr;
    }
    if (s == State::done)
      r.cond[i] = unary_cond(f, x[i]);
    else
      rest.push_back(i);
  }
}

}  // namespace

namespace detail {

std::optional<double> unary_double_double(Unary f, double x, DType dt) {
  if (const auto y = special(f, x, dt)) return y;
  dd::DirectPrimitives direct;
  const auto a = approx(f, x, dt, direct);
  if (!a) return std::nullopt;
  return round_approx(*a, dt);
}

OracleResult unary_mpfr(Unary f, const Input& in) {
  std::vector<size_t> all(in.args.at(0).values.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return unary_mpfr_at(f, in, all);
}

}  // namespace detail

OracleResult unary(Unary f, const Input& in) {
  const auto& x = in.args.at(0).values;
  const size_t n = x.size();
  OracleResult r;
  r.exact.resize(n);
  r.cond.resize(n);
  std::vector<size_t> rest;
  constexpr size_t kBlock = 512;
  for (size_t from = 0; from < n; from += kBlock)
    unary_double_double_block(f, x, in.dtype, from, std::min(n, from + kBlock), r, rest);
  r.decidable = true;
  r.precision_bits = 106;
  if (rest.empty()) return r;
  OracleResult m = unary_mpfr_at(f, in, rest);
  if (!m.decidable) return m;
  for (size_t k = 0; k < rest.size(); ++k) {
    r.exact[rest[k]] = m.exact[k];
    r.cond[rest[k]] = m.cond[k];
  }
  r.precision_bits =
      rest.size() == n ? m.precision_bits : std::max(r.precision_bits, m.precision_bits);
  return r;
}

}  // namespace stabfuzz::oracle
