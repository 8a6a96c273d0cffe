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
    mpfr_set_d(y, detail::unary_limit(f, mpfr_sgn(x) > 0), kN);
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

}  // namespace

namespace detail {

double unary_limit(Unary f, bool positive) {
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
    detail::unary_double_double_block(f, x, in.dtype, from, std::min(n, from + kBlock), r, rest);
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
