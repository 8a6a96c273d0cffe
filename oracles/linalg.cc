// Linalg oracles in MPFR: exact products, correctly rounded sums, Ziv's ladder for the rest.
#include "oracles/linalg.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle {

namespace {

// A product of two doubles holds exactly in 53 + 53 bits, and MPFR's exponent range holds every
// product of doubles, subnormals included: the terms of every sum below are exact.
constexpr mpfr_prec_t kProductPrecision = 106;

// The exact products a[i sa] b[i sb] of a dot product, and sum |a b| in long double (whose range
// holds every product of doubles; the condition number needs only a few digits).
class Products {
 public:
  void load(const double* a, size_t sa, const double* b, size_t sb, size_t n) {
    while (terms_.size() < n) terms_.emplace_back(kProductPrecision);
    ptrs_.clear();
    abs_sum_ = 0;
    for (size_t i = 0; i < n; ++i) {
      mpfr_set_d(terms_[i], a[i * sa], MPFR_RNDN);
      mpfr_mul_d(terms_[i], terms_[i], b[i * sb], MPFR_RNDN);  // exact
      ptrs_.push_back(terms_[i].get());
      abs_sum_ += std::fabs(static_cast<long double>(a[i * sa]) * b[i * sb]);
    }
  }
  long double abs_sum() const { return abs_sum_; }

  // The exact sum correctly rounded to out's precision (mpfr_sum); the ternary value, 0 if exact.
  int sum(mpfr_ptr out) const {
    if (ptrs_.empty()) {
      mpfr_set_zero(out, 1);
      return 0;
    }
    return mpfr_sum(out, const_cast<mpfr_ptr*>(ptrs_.data()), ptrs_.size(), MPFR_RNDN);
  }

  // The exact sum correctly rounded to d by Ziv's ladder; `value` gets it in long double and
  // `precision` the largest precision used. mpfr_sum rounds correctly, |y - exact| <= 2^-p |y|,
  // so round_decided gets p - 1 bits; a sum exact at p rounds directly, which decides midpoints
  // (1 + 2^-24 in f32) that no error interval can. nullopt past the cap.
  std::optional<double> round_sum(DType d, long& precision, long double& value) const {
    for (mpfr_prec_t p = start_precision(); p <= kPrecisionCap; p *= 2) {
      Real y(p);
      const int ternary = sum(y);
      precision = std::max<long>(precision, p);
      value = mpfr_get_ld(y, MPFR_RNDN);
      if (ternary == 0) return round_nearest(y, d);
      if (auto r = round_decided(y, p - 1, d)) return r;
    }
    return std::nullopt;
  }

 private:
  std::vector<Real> terms_;
  std::vector<mpfr_ptr> ptrs_;
  long double abs_sum_ = 0;
};

// 2 sum |a_i b_i| / |sum a_i b_i|, with the convention for exact zeros of oracles/linalg.h.
double sum_cond(long double abs_sum, long double value) {
  if (value == 0) return abs_sum > 0 ? INFINITY : 0.0;
  return static_cast<double>(2 * abs_sum / std::fabs(value));
}

}  // namespace

OracleResult dot(const Input& in) {
  const auto& a = in.args.at(0).values;
  const auto& b = in.args.at(1).values;
  Products prod;
  prod.load(a.data(), 1, b.data(), 1, a.size());
  OracleResult r;
  long double value = 0;
  const auto y = prod.round_sum(in.dtype, r.precision_bits, value);
  if (!y) {
    r.decidable = false;
    return r;
  }
  r.exact = {*y};
  r.cond = {sum_cond(prod.abs_sum(), value)};
  return r;
}

OracleResult gemm(const Input& in) {
  const auto& A = in.args.at(0);
  const auto& B = in.args.at(1);
  const auto m = static_cast<size_t>(A.shape.at(0)), k = static_cast<size_t>(A.shape.at(1));
  const auto n = static_cast<size_t>(B.shape.at(1));
  OracleResult r;
  r.exact.resize(m * n);
  r.cond.resize(m * n);
  Products prod;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      prod.load(A.values.data() + i * k, 1, B.values.data() + j, n, k);
      long double value = 0;
      const auto y = prod.round_sum(in.dtype, r.precision_bits, value);
      if (!y) {
        OracleResult u;
        u.decidable = false;
        return u;
      }
      r.exact[i * n + j] = *y;
      r.cond[i * n + j] = sum_cond(prod.abs_sum(), value);
    }
  return r;
}

namespace {

using detail::AttentionShape;

// One attempt at working precision p. Error budget (2^-p units, first order):
// - scores S = scale (Q_i . K_l): mpfr_sum then one multiplication at Ps = p + 64 + E bits with
//   |S| <= 2^E, so each score, and x = S - max S (rounded at Ps), is off by < 2^-(p+61) absolutely;
// - e_l = exp(x_l) rounded at p: relative error <= 2^-p (1 + 2^-61); Z = sum e_l (mpfr_sum): 2;
// - N = sum e_l V_lj: products exact at p + 53 bits, mpfr_sum: |dN| <= 2^-p (sum |e V| + |N|);
// - O = N / Z: one more rounding. Total |dO| / |O| <= 2^-p (kappa + 5), kappa = sum |e V| / |N|,
//   so round_decided gets p - ceil(log2(kappa + 5)) - 1 bits. Where every step was exact (ternary
//   0: equal scores, e = 1) O is exact and rounds directly: the mean of two values can be a tie.
bool attention_attempt(const Input& in, const AttentionShape& sh,
                       const std::vector<long double>& amp, long exp_bound, mpfr_prec_t p,
                       OracleResult& r) {
  const auto& Q = in.args[0].values;
  const auto& K = in.args[1].values;
  const auto& V = in.args[2].values;
  const mpfr_prec_t ps = p + 64 + exp_bound;
  r.exact.assign(sh.s * sh.dv, 0.0);
  r.cond.assign(sh.s * sh.dv, 0.0);
  Products prod;
  std::vector<Real> e, w;
  std::vector<mpfr_ptr> wp;
  Real z(p), num(p), o(p), x(ps), mx(ps);
  for (size_t i = 0; i < sh.s; ++i) {
    const size_t tl = sh.keys(i);
    std::vector<Real> sc;
    int inexact = 0;  // any nonzero ternary value
    for (size_t l = 0; l < tl; ++l) {
      sc.emplace_back(ps);
      prod.load(Q.data() + i * sh.d, 1, K.data() + l * sh.d, 1, sh.d);
      inexact |= prod.sum(sc.back());
      inexact |= mpfr_mul_d(sc.back(), sc.back(), sh.prm.scale, MPFR_RNDN);
    }
    mpfr_set(mx, sc[0], MPFR_RNDN);
    for (size_t l = 1; l < tl; ++l)
      if (mpfr_cmp(sc[l], mx) > 0) mpfr_set(mx, sc[l], MPFR_RNDN);
    e.clear();
    for (size_t l = 0; l < tl; ++l) {
      e.emplace_back(p);
      inexact |= mpfr_sub(x, sc[l], mx, MPFR_RNDN);
      inexact |= mpfr_exp(e.back(), x, MPFR_RNDN);
    }
    std::vector<mpfr_ptr> ep;
    for (auto& v : e) ep.push_back(v);
    inexact |= mpfr_sum(z, ep.data(), ep.size(), MPFR_RNDN);
    const long double zl = mpfr_get_ld(z, MPFR_RNDN);
    while (w.size() < tl) w.emplace_back(p + 53);
    for (size_t j = 0; j < sh.dv; ++j) {
      // sum_l |w_l| <= tl 2^max_exp: the cancellation bound in exponents, which no long double
      // can overflow or flush (e_l spans MPFR's exponent range, far beyond long double's).
      mpfr_exp_t max_exp = mpfr_get_emin();
      bool column_zero = true;
      wp.clear();
      for (size_t l = 0; l < tl; ++l) {
        const double v = V[l * sh.dv + j];
        column_zero &= v == 0;
        mpfr_mul_d(w[l], e[l], v, MPFR_RNDN);  // exact
        if (!mpfr_zero_p(w[l])) max_exp = std::max(max_exp, mpfr_get_exp(w[l]));
        wp.push_back(w[l].get());
      }
      const int num_inexact = inexact | mpfr_sum(num, wp.data(), wp.size(), MPFR_RNDN);
      const size_t out = i * sh.dv + j;
      if (mpfr_zero_p(num)) {
        if (!column_zero) return false;  // the approximations cancelled: 0 is not proven
        r.exact[out] = 0.0;
        r.cond[out] = 0.0;
        continue;
      }
      const bool exact = (num_inexact | mpfr_div(o, num, z, MPFR_RNDN)) == 0;
      // log2(sum |w_l| / |num|) < max_exp + log2(tl) - (exp(num) - 1); + 3 bits for the sum's
      // and the division's own roundings (kappa + 5 before: 2^3 >= 5 at kappa = 1).
      const long kappa_bits =
          std::max<long>(0, static_cast<long>(max_exp - mpfr_get_exp(num)) + 1 +
                                static_cast<long>(std::ceil(std::log2(static_cast<double>(tl)))));
      const long err_bits = p - kappa_bits - 4;
      if (!exact && err_bits < 2) return false;  // cancelled beyond this precision: try more bits
      const auto y = exact ? round_nearest(o, in.dtype) : round_decided(o, err_bits, in.dtype);
      if (!y) return false;
      r.exact[out] = *y;
      // cond_ij = (sum_l P |V_lj| + 2 sum_l P A_il |V_lj - O_ij|) / |O_ij|, P = e_l / Z.
      const long double ol = mpfr_get_ld(o, MPFR_RNDN);
      long double c = 0;
      for (size_t l = 0; l < tl; ++l) {
        const long double pl = mpfr_get_ld(e[l], MPFR_RNDN) / zl, v = V[l * sh.dv + j];
        c += pl * (std::fabs(v) + 2 * amp[i * sh.t + l] * std::fabs(v - ol));
      }
      r.cond[out] = static_cast<double>(c / std::fabs(ol));
    }
  }
  return true;
}

}  // namespace

namespace detail {

AttentionShape attention_shape(const Input& in) {
  AttentionShape sh;
  sh.s = static_cast<size_t>(in.args.at(0).shape.at(0));
  sh.d = static_cast<size_t>(in.args.at(0).shape.at(1));
  sh.t = static_cast<size_t>(in.args.at(1).shape.at(0));
  sh.dv = static_cast<size_t>(in.args.at(2).shape.at(1));
  sh.prm = params::attention_params(in, static_cast<double>(sh.d));
  return sh;
}

// A_il = |scale| sum_c |Q_ic K_lc| bounds |S_il|: it sizes the score precision and enters cond.
std::vector<long double> attention_amp(const Input& in, const AttentionShape& sh,
                                       long double* amax) {
  const auto& Q = in.args[0].values;
  const auto& K = in.args[1].values;
  std::vector<long double> amp(sh.s * sh.t, 0.0L);
  *amax = 0;
  for (size_t i = 0; i < sh.s; ++i)
    for (size_t l = 0; l < sh.keys(i); ++l) {
      long double a = 0;
      for (size_t c = 0; c < sh.d; ++c)
        a += std::fabs(static_cast<long double>(Q[i * sh.d + c]) * K[l * sh.d + c]);
      amp[i * sh.t + l] = a * std::fabs(sh.prm.scale);
      *amax = std::max(*amax, amp[i * sh.t + l]);
    }
  return amp;
}

OracleResult attention_mpfr(const Input& in) {
  const AttentionShape sh = attention_shape(in);
  long double amax;
  const std::vector<long double> amp = attention_amp(in, sh, &amax);
  const long exp_bound = amax >= 1 ? std::ilogb(amax) + 2 : 0;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return attention_attempt(in, sh, amp, exp_bound, p, r);
  });
}

}  // namespace detail

OracleResult attention(const Input& in) {
  if (auto r = detail::attention_double_double(in)) return std::move(*r);
  return detail::attention_mpfr(in);
}

// Error budget at working precision p (2^-p units): a.b, |a|^2 and |b|^2 are correctly rounded
// sums of exact products (1 each); |a| |b| = sqrt(|a|^2 |b|^2): 1 + 3/2 = 2.5; max(., eps) is
// 1-Lipschitz, so either branch near the kink keeps that; the division adds 1: 4.5 < 2^3. An
// exact result (every ternary 0) rounds directly.
OracleResult cosine_similarity(const Input& in) {
  const auto& a = in.args.at(0).values;
  const auto& b = in.args.at(1).values;
  const size_t n = a.size();
  const double eps = params::cosine_eps(in);
  Products ab, aa, bb;
  ab.load(a.data(), 1, b.data(), 1, n);
  aa.load(a.data(), 1, a.data(), 1, n);
  bb.load(b.data(), 1, b.data(), 1, n);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real dab(p), saa(p), sbb(p), nn(p), y(p);
    const int dab_inexact = ab.sum(dab);  // 0 only when a.b is exactly 0
    if (mpfr_zero_p(dab)) {
      r.exact = {0.0};
      r.cond = {sum_cond(ab.abs_sum(), 0)};
      return true;
    }
    int inexact = dab_inexact | aa.sum(saa) | bb.sum(sbb);
    inexact |= mpfr_mul(nn, saa, sbb, MPFR_RNDN);
    inexact |= mpfr_sqrt(nn, nn, MPFR_RNDN);
    const bool above = mpfr_cmp_d(nn, eps) >= 0;
    inexact |= above ? mpfr_div(y, dab, nn, MPFR_RNDN) : mpfr_div_d(y, dab, eps, MPFR_RNDN);
    const auto rounded =
        inexact == 0 ? round_nearest(y, in.dtype) : round_decided(y, p - 3, in.dtype);
    if (!rounded) return false;
    r.exact = {*rounded};
    const long double yl = mpfr_get_ld(y, MPFR_RNDN);
    if (!above) {
      r.cond = {sum_cond(ab.abs_sum(), mpfr_get_ld(dab, MPFR_RNDN))};
      return true;
    }
    // With unit vectors a^ = a/|a|, b^ = b/|b|: a_i dy/da_i = a^_i b^_i - y a^_i^2.
    const long double na = std::sqrt(mpfr_get_ld(saa, MPFR_RNDN));
    const long double nb = std::sqrt(mpfr_get_ld(sbb, MPFR_RNDN));
    long double c = 0;
    for (size_t i = 0; i < n; ++i) {
      const long double ai = a[i] / na, bi = b[i] / nb;
      c += std::fabs(ai * bi - yl * ai * ai) + std::fabs(ai * bi - yl * bi * bi);
    }
    r.cond = {static_cast<double>(c / std::fabs(yl))};
    return true;
  });
}

// Error budget at working precision p (2^-p units): d_i = a_i - b_i + eps is a correctly rounded
// mpfr_sum at q = p + 10 bits, its square adds a rounding at q: 3 2^-q each; their mpfr_sum adds 1;
// sqrt halves that and adds 1: < 2 = 2^1. When every step was exact (ternary 0) y is exact and
// rounds directly: |a - b + eps| can be a midpoint of the dtype, which no error interval decides.
OracleResult pairwise_distance(const Input& in) {
  const auto& a = in.args.at(0).values;
  const auto& b = in.args.at(1).values;
  const size_t n = a.size();
  const double eps = params::pairwise_eps(in);
  bool inputs_zero = true;
  for (size_t i = 0; i < n; ++i) inputs_zero &= a[i] == 0 && b[i] == 0;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    const mpfr_prec_t q = p + 10;
    std::vector<Real> d, sq;
    Real xa(kExactDoublePrecision), xb(kExactDoublePrecision), xe(kExactDoublePrecision, eps);
    mpfr_ptr three[3] = {xa, xb, xe};
    bool exact = true;
    for (size_t i = 0; i < n; ++i) {
      mpfr_set_d(xa, a[i], MPFR_RNDN);
      mpfr_set_d(xb, -b[i], MPFR_RNDN);
      d.emplace_back(q);
      exact &= mpfr_sum(d.back(), three, 3, MPFR_RNDN) == 0;
      sq.emplace_back(q);
      exact &= mpfr_sqr(sq.back(), d.back(), MPFR_RNDN) == 0;
    }
    Real s(p), y(p);
    std::vector<mpfr_ptr> sp;
    for (auto& x : sq) sp.push_back(x);
    exact &= mpfr_sum(s, sp.data(), sp.size(), MPFR_RNDN) == 0;
    if (mpfr_zero_p(s)) {  // every d_i is exactly 0
      r.exact = {0.0};
      r.cond = {inputs_zero ? 0.0 : INFINITY};
      return true;
    }
    exact &= mpfr_sqrt(y, s, MPFR_RNDN) == 0;
    const auto rounded = exact ? round_nearest(y, in.dtype) : round_decided(y, p - 1, in.dtype);
    if (!rounded) return false;
    r.exact = {*rounded};
    const long double y2 = mpfr_get_ld(s, MPFR_RNDN);
    long double c = 0;
    for (size_t i = 0; i < n; ++i)
      c += std::fabs(mpfr_get_ld(d[i], MPFR_RNDN)) *
           (std::fabs(static_cast<long double>(a[i])) + std::fabs(static_cast<long double>(b[i])));
    r.cond = {static_cast<double>(c / y2)};
    return true;
  });
}

namespace {

// 1 - beta^t into `out` (precision P = p + 64 + k, 1 - beta >= 2^-k): beta^t is rounded at P
// (absolute error <= 2^-P, as beta^t < 1) and the subtraction adds 2^-P relative, so the relative
// error is <= 2^-(P-k) + 2^-P <= 2^-(p+63): negligible next to the 2^-p steps below.
// Returns nonzero when inexact.
int bias_correction(Real& out, double beta, double t, mpfr_prec_t p) {
  const mpfr_prec_t k = beta > 0 ? 1 - std::ilogb(1 - beta) : 0;
  out.set_prec(p + 64 + k);
  if (beta == 0) return mpfr_set_ui(out, 1, MPFR_RNDN);
  mpfr_set_d(out, beta, MPFR_RNDN);
  return mpfr_pow_ui(out, out, static_cast<unsigned long>(t), MPFR_RNDN) |
         mpfr_ui_sub(out, 1, out, MPFR_RNDN);
}

}  // namespace

namespace detail {

// cond_i (the formula above adam()) from the element's inputs and step quantities.
double adam_cond(const params::AdamParams& prm, double p, double g, double m, double v,
                 const AdamTerms& t) {
  const long double lr = prm.lr, b1 = prm.beta1, b2 = prm.beta2, gl = g;
  const long double k1 = lr / (t.bc1 * t.den), w = t.u * t.sq / (2 * t.den);
  const long double rv = t.vp > 0 ? b2 * v / t.vp : 0,
                    rg = t.vp > 0 ? 2 * (1 - b2) * gl * gl / t.vp : 0;
  const long double num = std::fabs(static_cast<long double>(p)) + std::fabs(k1 * b1 * m) +
                          std::fabs(w * rv) + std::fabs(k1 * (1 - b1) * gl - w * rg);
  return t.pp != 0 ? static_cast<double>(num / std::fabs(t.pp)) : (num > 0 ? INFINITY : 0.0);
}

}  // namespace detail

// p' = p - lr m^ / (sqrt(v^) + eps), m^ = m' / (1 - b1^t), v^ = v' / (1 - b2^t), m' = b1 m +
// (1 - b1) g, v' = b2 v + (1 - b2) g^2, with the parameters as the dtype holds them.
// Error budget at p (2^-p units): m' = mpfr_sum(b1 m, g, -b1 g) and v' = mpfr_sum(b2 v, g^2,
// -b2 g^2) of exact products: 1 each; m^ = m' / bc1: 2; lr m^: 3; v^: 2; sqrt: 2; D = sqrt + eps:
// 3; U = lr m^ / D: 7, say 8 with second-order terms; p - U: |dp'| <= 2^-p (8 |U| + |p'|), so
// round_decided gets p - ceil(log2(8 |U| / |p'| + 1)) - 1 bits; an exact p' rounds directly.
//
// cond_i = (|p| + |K1 b1 m| + |W r_v| + |K1 (1 - b1) g - W r_g|) / |p'| from dp' = p e_p - dU,
// dU = K1 dm' - W dv'/v', K1 = lr / (bc1 D) = U / m', W = U sqrt(v^) / (2 D) (the v' derivative
// times v'), dm' = b1 m e_m + (1 - b1) g e_g, dv'/v' = r_v e_v + r_g e_g, r_v = b2 v / v',
// r_g = 2 (1 - b2) g^2 / v' (the v terms vanish where v' = 0: then v = g = 0).
OracleResult adam(const Input& in) {
  if (auto r = detail::adam_double_double(in)) return std::move(*r);
  return detail::adam_mpfr(in);
}

namespace detail {

OracleResult adam_mpfr(const Input& in) {
  const auto& P = in.args.at(0).values;
  const auto& G = in.args.at(1).values;
  const auto& M = in.args.at(2).values;
  const auto& V = in.args.at(3).values;
  const params::AdamParams prm = params::adam_params(in);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real bc1(2), bc2(2);
    const int bc_inexact =
        bias_correction(bc1, prm.beta1, prm.step, p) | bias_correction(bc2, prm.beta2, prm.step, p);
    const long double bc1l = mpfr_get_ld(bc1, MPFR_RNDN);
    std::vector<Real> t;
    for (int k = 0; k < 3; ++k) t.emplace_back(160);
    mpfr_ptr tp[3] = {t[0], t[1], t[2]};
    Real mp(p), vp(p), sq(p), den(p), mh(p), u(p), pp(p);
    r.exact.resize(P.size());
    r.cond.resize(P.size());
    for (size_t i = 0; i < P.size(); ++i) {
      mpfr_set_d(t[0], M[i], MPFR_RNDN);
      mpfr_mul_d(t[0], t[0], prm.beta1, MPFR_RNDN);  // exact (160 bits)
      mpfr_set_d(t[1], G[i], MPFR_RNDN);
      mpfr_mul_d(t[2], t[1], -prm.beta1, MPFR_RNDN);
      int inexact = bc_inexact | mpfr_sum(mp, tp, 3, MPFR_RNDN);
      mpfr_set_d(t[0], V[i], MPFR_RNDN);
      mpfr_mul_d(t[0], t[0], prm.beta2, MPFR_RNDN);
      mpfr_set_d(t[1], G[i], MPFR_RNDN);
      mpfr_sqr(t[1], t[1], MPFR_RNDN);
      mpfr_mul_d(t[2], t[1], -prm.beta2, MPFR_RNDN);
      inexact |= mpfr_sum(vp, tp, 3, MPFR_RNDN);
      inexact |= mpfr_div(sq, vp, bc2, MPFR_RNDN);
      inexact |= mpfr_sqrt(sq, sq, MPFR_RNDN);
      inexact |= mpfr_add_d(den, sq, prm.eps, MPFR_RNDN);
      inexact |= mpfr_div(mh, mp, bc1, MPFR_RNDN);
      inexact |= mpfr_mul_d(u, mh, prm.lr, MPFR_RNDN);
      inexact |= mpfr_div(u, u, den, MPFR_RNDN);
      inexact |= mpfr_sub_d(pp, u, P[i], MPFR_RNDN);
      mpfr_neg(pp, pp, MPFR_RNDN);  // p - U
      const long double ul = mpfr_get_ld(u, MPFR_RNDN), ppl = mpfr_get_ld(pp, MPFR_RNDN);
      if (mpfr_zero_p(u)) {  // m' or lr is exactly 0: p' = p
        r.exact[i] = P[i];
      } else if (inexact == 0) {  // every step exact, 0 included
        r.exact[i] = round_nearest(pp, in.dtype);
      } else {
        if (mpfr_zero_p(pp)) return false;  // p ~ U: 0 is not proven
        const long err =
            p - static_cast<long>(std::ceil(std::log2(8 * std::fabs(ul / ppl) + 1))) - 1;
        const auto y = round_decided(pp, err, in.dtype);
        if (!y) return false;
        r.exact[i] = *y;
      }
      r.cond[i] = adam_cond(prm, P[i], G[i], M[i], V[i],
                            {ul, ppl, mpfr_get_ld(den, MPFR_RNDN), mpfr_get_ld(vp, MPFR_RNDN),
                             mpfr_get_ld(sq, MPFR_RNDN), bc1l});
    }
    return true;
  });
}

}  // namespace detail

// ---- validation
// ----------------------------------------------------------------------------------
namespace {

using Error = std::optional<std::string>;

// Tensor count and ranks, every dimension >= 1, values matching the shape: all O(1), so that the
// shrinker's many candidates with rows of unequal length are rejected before any value is read.
Error check_shapes(const Input& in, std::initializer_list<size_t> ranks, const char* what) {
  if (in.args.size() != ranks.size()) return std::string(what);
  size_t k = 0;
  for (size_t r : ranks) {
    const auto& t = in.args[k++];
    if (t.shape.size() != r) return std::string(what);
    size_t n = 1;
    for (auto s : t.shape) {
      if (s < 1) return "every dimension must be at least 1";
      n *= static_cast<size_t>(s);
      if (n > (size_t{1} << 24)) return "a tensor holds more than 16777216 values";
    }
    if (n != t.values.size()) return "a tensor's values do not match its shape";
  }
  return std::nullopt;
}

// Every value finite and representable in the dtype; every parameter known and finite.
Error check_values(const Input& in, std::initializer_list<std::string_view> params) {
  for (const auto& t : in.args)
    for (double x : t.values) {
      if (!std::isfinite(x)) return "inputs must be finite";
      if (!representable(in.dtype, x)) return "a value is not representable in the dtype";
    }
  for (const auto& [k, v] : in.params) {
    bool known = false;
    for (auto a : params) known |= k == a;
    if (!known) return "unknown parameter '" + k + "'";
    if (!std::isfinite(v)) return "parameter '" + k + "' must be finite";
  }
  return std::nullopt;
}

Error two_rows(const Input& in, const char* what, std::initializer_list<std::string_view> params) {
  if (auto err = check_shapes(in, {1, 1}, what)) return err;
  if (in.args[0].values.size() != in.args[1].values.size()) return "the two rows differ in length";
  return check_values(in, params);
}

}  // namespace

Error validate_dot(const Input& in) { return two_rows(in, "dot takes two rows a [n], b [n]", {}); }

Error validate_gemm(const Input& in) {
  if (auto err = check_shapes(in, {2, 2}, "gemm takes A [m,k] and B [k,n]")) return err;
  const auto& a = in.args[0].shape;
  const auto& b = in.args[1].shape;
  if (a[1] != b[0]) return "gemm: A's columns and B's rows differ";
  if (double(a[0]) * double(a[1]) * double(b[1]) > 0x1p26) return "gemm: m n k above 2^26";
  return check_values(in, {});
}

Error validate_attention(const Input& in) {
  if (auto err = check_shapes(in, {2, 2, 2}, "attention takes Q [s,d], K [t,d], V [t,dv]"))
    return err;
  const auto& q = in.args[0].shape;
  const auto& k = in.args[1].shape;
  const auto& v = in.args[2].shape;
  if (q[1] != k[1]) return "attention: Q and K differ in head dimension";
  if (k[0] != v[0]) return "attention: K and V differ in length";
  if (double(q[0]) * double(k[0]) * double(q[1] + v[1]) > 0x1p24)
    return "attention: s t (d + dv) above 2^24";
  if (auto err = check_values(in, {"scale", "causal"})) return err;
  const double causal = in.param("causal", 0);
  if (causal != 0 && causal != 1) return "attention: causal must be 0 or 1";
  if (causal == 1 && q[0] != k[0]) return "attention: causal needs as many queries as keys";
  return std::nullopt;
}

Error validate_cosine_similarity(const Input& in) {
  if (auto err = two_rows(in, "cosine_similarity takes two rows a [n], b [n]", {"eps"})) return err;
  const double eps = in.param("eps", params::kCosineEpsDefault);
  if (!(eps == 0 || (eps >= 1e-30 && eps <= 1)))
    return "cosine_similarity: eps must be 0 or lie in [1e-30, 1]";
  return std::nullopt;
}

Error validate_pairwise_distance(const Input& in) {
  return two_rows(in, "pairwise_distance takes two rows a [n], b [n]", {"eps"});
}

Error validate_adam(const Input& in) {
  if (auto err = check_shapes(in, {1, 1, 1, 1}, "adam takes rows p, g, m, v of one length"))
    return err;
  const size_t n = in.args[0].values.size();
  for (const auto& t : in.args)
    if (t.values.size() != n) return "adam: p, g, m and v differ in length";
  if (auto err = check_values(in, {"lr", "beta1", "beta2", "eps", "step"})) return err;
  for (double v : in.args[3].values)
    if (v < 0) return "adam: the second moment v must be >= 0";
  const auto q = params::adam_params(in);
  if (q.lr < 0) return "adam: lr must be >= 0";
  if (!(q.beta1 >= 0 && q.beta1 < 1) || !(q.beta2 >= 0 && q.beta2 < 1))
    return "adam: betas must lie in [0, 1) in the dtype";
  if (!(q.eps > 0)) return "adam: eps must be > 0 in the dtype";
  if (q.step < 1 || q.step > 0x1p24 || q.step != std::floor(q.step))
    return "adam: step must be an integer in [1, 2^24]";
  if (!representable(params::opmath_dtype(in.dtype), q.step))
    return "adam: step must be exact in the compute type";
  // The step's own state v' must exist in the format it is kept in: a gradient whose square
  // overflows (|g| > ~2^64 in f32) leaves no representable v', in any implementation.
  const long double c2 = 1.0L - static_cast<long double>(q.beta2);
  for (size_t i = 0; i < n; ++i) {
    const long double g = in.args[1].values[i], v = in.args[3].values[i];
    if (!std::isfinite(
            round_to(params::opmath_dtype(in.dtype), static_cast<double>(v + c2 * (g * g - v)))))
      return "adam: the new second moment v + (1 - beta2)(g^2 - v) overflows the compute type";
  }
  return std::nullopt;
}

}  // namespace stabfuzz::oracle
