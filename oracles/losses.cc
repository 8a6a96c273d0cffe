// Oracles of the log-softmax and loss families: log_softmax, cross_entropy, bce, kl_div, entropy.
#include <algorithm>
#include <cmath>

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

}  // namespace

OracleResult log_softmax(const Input& in) {
  const auto& x = in.args.at(0).values;
  std::vector<size_t> all(x.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return log_softmax_at(x, in.dtype, p, all, false, r);
  });
}

OracleResult cross_entropy(const Input& in) {
  const auto& x = in.args.at(0).values;
  const std::vector<size_t> t{static_cast<size_t>(in.param("target", 0))};
  return ziv(
      [&](mpfr_prec_t p, OracleResult& r) { return log_softmax_at(x, in.dtype, p, t, true, r); });
}

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
OracleResult bce_with_logits(const Input& in) {
  const auto& x = in.args.at(0).values;
  const auto& z = in.args.at(1).values;
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    Real xm(kExactDoublePrecision), zm(kExactDoublePrecision), pos(kExactDoublePrecision);
    Real xz(2 * kExactDoublePrecision), a(p), e(p), b(p), l(p), sig(p), num(kCondPrec);
    Real ax(kExactA), lx(kExactA + 64), nudged(kExactA + 2);
    for (size_t i = 0; i < x.size(); ++i) {
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

// y = sum of t_i = p_i (L_i - logq_i), L_i = log p_i. The terms may cancel, so the error bound is
// absolute: |L~ - L| <= 2^-p |L~|, D = L~ - logq rounds by 2^-p |D|, t by 2^-p |t|, the sum
// (mpfr_sum) by 2^-p |y~|; altogether |y~ - y| <= 2^-p * 1.01 * E with
// E = sum p_i (|L~_i| + 2 |D_i|) + |y~|. With E < 2^eE and |y~| >= 2^(eA-1) (MPFR exponents),
// err_bits = p - (eE - eA) - 2. A computed zero is exact only when every p_i is 0 or 1 (all L_i
// are then exactly 0); otherwise y is a nonzero transcendental number and p is raised.
OracleResult kl_div(const Input& in) {
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
OracleResult entropy(const Input& in) {
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

}  // namespace stabfuzz::oracle
