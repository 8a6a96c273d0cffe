// The linalg oracles' fast paths (oracles/linalg.cc sends what these do not decide to MPFR):
// attention and adam in double-double, with absolute error bounds carried through every step
// (oracles/double_double.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "oracles/double_double.h"
#include "oracles/linalg.h"
#include "oracles/mpfr_util.h"

namespace stabfuzz::oracle::detail {
namespace {

// b^t for an integer t >= 1 and b in (0, 1), by squaring in double-double, with a bound on its
// relative error in *rel: b^1 and b^2 are exact; each further DWTimesDW3 adds 4u^2 to the
// operands' errors. A power below 2^-900 (whose low word may be subnormal) is returned as 0 with
// *abs = 2^-900, its absolute error.
dd::DD pow_dd(double b, double t, double* rel, double* abs) {
  constexpr double u2 = 0x1p-106;
  *rel = 0;
  *abs = 0;
  dd::DD result{1, 0}, base{b, 0};
  double rr = 0, rb = 0;
  bool first = true;
  for (auto k = static_cast<uint64_t>(t); k > 0; k >>= 1) {
    if (k & 1) {
      if (first) {
        result = base;
        rr = rb;
      } else {
        result = dd::mul(result, base);
        rr += rb + 4 * u2;
      }
      first = false;
      if (result.hi < 0x1p-900) {
        *abs = 0x1p-900;
        return {0, 0};
      }
    }
    if (k > 1) {
      const bool exact = base.lo == 0 && rb == 0;  // the square of a double is exact
      base = exact ? dd::two_prod(base.hi, base.hi) : dd::mul(base, base);
      rb = exact ? 0 : 2 * rb + 4 * u2;
      if (base.hi < 0x1p-900) {  // every later factor is below it too
        *abs = 0x1p-900;
        return {0, 0};
      }
    }
  }
  *rel = rr;
  return result;
}

// 1 - b^t in double-double and its relative error bound (b = 0: 1 exactly).
dd::DD bias_correction_dd(double b, double t, double* rel) {
  constexpr double u2 = 0x1p-106;
  if (b == 0) {
    *rel = 0;
    return {1, 0};
  }
  double rp, ap;
  const dd::DD p = pow_dd(b, t, &rp, &ap);
  const dd::DD c = dd::add_accurate({1, 0}, {-p.hi, -p.lo});
  *rel = (p.hi * rp + ap) / c.hi * 1.0001 + 3 * u2;
  return c;
}

}  // namespace

// The attention_attempt steps in double-double with absolute error bounds carried along:
// - S_l = scale (Q_i . K_l): exact products (two_prod; nullopt where one may underflow) summed by
//   AccurateDWPlusDW, within 3u^2 times the sum of the partial sums' magnitudes, then times scale
//   (DWTimesFP3, 2u^2);
// - x_l = S_l - c with c the largest computed score, a constant (softmax does not depend on the
//   shift): S_l's error plus 3u^2 |x_l|, which moves e_l = exp_dd(x_l) by as much relatively,
//   beyond exp_dd's 2^-90.5; x_l below -600 gives e_l = 0 within 2^-865;
// - Z = sum e_l, positive terms: the largest term error plus 3u^2 per addition; N = sum e_l V_lj
//   (DWTimesFP3 products): sum |e_l V_lj| times (e_l's error + 2u^2), plus 3u^2 per partial sum;
// - O = N / Z (DWDivDW2, 16u^2): relative error N's + Z's + 16u^2; 1.01 times |O| that goes to the
//   rounding.
// Nullopt for non-finite inputs, rows over 4096 keys, O = 0 from a column that is not all zeros,
// and any undecided output.
std::optional<OracleResult> attention_double_double(const Input& in) {
  using dd::DD;
  constexpr double u2 = 0x1p-106, kExp = 0x1.6a09e667f3bcdp-91;  // 2^-90.5 rounded up
  const AttentionShape sh = attention_shape(in);
  const auto& Q = in.args[0].values;
  const auto& K = in.args[1].values;
  const auto& V = in.args[2].values;
  if (sh.t > 4096 || !std::isfinite(sh.prm.scale)) return std::nullopt;
  for (const auto* a : {&Q, &K, &V})
    for (double v : *a)
      if (!std::isfinite(v)) return std::nullopt;
  long double amax;
  const std::vector<long double> amp = attention_amp(in, sh, &amax);
  OracleResult r;
  r.exact.assign(sh.s * sh.dv, 0.0);
  r.cond.assign(sh.s * sh.dv, 0.0);
  r.decidable = true;
  r.precision_bits = 106;
  std::vector<DD> sc(sh.t), x(sh.t), e(sh.t);
  std::vector<double> err_s(sh.t), rel_e(sh.t);
  for (size_t i = 0; i < sh.s; ++i) {
    const size_t tl = sh.keys(i);
    for (size_t l = 0; l < tl; ++l) {
      DD dot{0, 0};
      double partials = 0;
      for (size_t c = 0; c < sh.d; ++c) {
        const DD pr = dd::two_prod(Q[i * sh.d + c], K[l * sh.d + c]);
        if (pr.hi != 0 && std::fabs(pr.hi) < 0x1p-960) return std::nullopt;
        dot = dd::add_accurate(dot, pr);
        partials += std::fabs(dot.hi);
      }
      sc[l] = dd::mul(dot, sh.prm.scale);
      err_s[l] = std::fabs(sh.prm.scale) * 3.01 * u2 * partials + 2.01 * u2 * std::fabs(sc[l].hi);
    }
    DD c = sc[0];
    for (size_t l = 1; l < tl; ++l)
      if (sc[l].hi > c.hi || (sc[l].hi == c.hi && sc[l].lo > c.lo)) c = sc[l];
    for (size_t l = 0; l < tl; ++l) {
      x[l] = dd::add_accurate(sc[l], {-c.hi, -c.lo});
      const double ex = err_s[l] + 3.01 * u2 * std::fabs(x[l].hi);
      rel_e[l] = x[l].hi >= dd::kMinExpArg ? kExp + ex * 1.01 : -1;  // -1: e_l = 0 within 2^-865
    }
    for (size_t l = 0; l < tl; ++l) e[l] = DD{0, 0};
    {
      std::vector<DD> in_args, out(tl);
      std::vector<size_t> at;
      for (size_t l = 0; l < tl; ++l)
        if (rel_e[l] >= 0) {
          in_args.push_back(x[l]);
          at.push_back(l);
        }
      dd::exp_dd_many(in_args.data(), out.data(), in_args.size());
      for (size_t k = 0; k < at.size(); ++k) e[at[k]] = out[k];
    }
    DD z{0, 0};
    double rel_z = 0, tiny_z = 0;
    for (size_t l = 0; l < tl; ++l) {
      if (rel_e[l] < 0) {
        tiny_z += 0x1p-865;
        continue;
      }
      z = dd::add_accurate(z, e[l]);
      rel_z = std::fmax(rel_z, rel_e[l]) + 3.01 * u2;
    }
    rel_z += tiny_z / z.hi;  // z >= 1: the largest score's term is e^0
    const long double zl = static_cast<long double>(z.hi) + z.lo;
    for (size_t j = 0; j < sh.dv; ++j) {
      DD num{0, 0};
      double err_n = 0, partials = 0;
      bool column_zero = true;
      for (size_t l = 0; l < tl; ++l) {
        const double v = V[l * sh.dv + j];
        column_zero &= v == 0;
        if (rel_e[l] < 0) {
          err_n += std::fabs(v) * 0x1p-865;
          continue;
        }
        const DD w = dd::mul(e[l], v);
        if (w.hi != 0 && std::fabs(w.hi) < 0x1p-960) return std::nullopt;
        err_n += std::fabs(w.hi) * (rel_e[l] + 2.01 * u2);
        num = dd::add_accurate(num, w);
        partials += std::fabs(num.hi);
      }
      err_n += 3.01 * u2 * partials;
      const size_t out = i * sh.dv + j;
      if (column_zero) continue;  // O = 0 exactly, condition 0
      if (num.hi == 0) return std::nullopt;
      const DD o = dd::div(num, z);
      const double rel_o = err_n / std::fabs(num.hi) * 1.0001 + rel_z + 16.01 * u2;
      const auto y = dd::round_signed(o, 1.01 * rel_o * std::fabs(o.hi), in.dtype);
      if (!y) return std::nullopt;
      r.exact[out] = *y;
      // cond_ij = (sum_l P |V_lj| + 2 sum_l P A_il |V_lj - O_ij|) / |O_ij|, P = e_l / Z.
      const long double ol = static_cast<long double>(o.hi) + o.lo;
      long double cnd = 0;
      for (size_t l = 0; l < tl; ++l) {
        const long double pl = (static_cast<long double>(e[l].hi) + e[l].lo) / zl;
        const long double v = V[l * sh.dv + j];
        cnd += pl * (std::fabs(v) + 2 * amp[i * sh.t + l] * std::fabs(v - ol));
      }
      r.cond[out] = static_cast<double>(cnd / std::fabs(ol));
    }
  }
  return r;
}

// The Adam step below in double-double with absolute error bounds carried along: m' and v' as
// sums of exact products (b g^2 by DWTimesFP3, 2u^2) with AccurateDWPlusDW, within 7u^2 of the sum
// of their terms' magnitudes; the bias corrections by pow_dd; v^ = v' / bc2 (DWDivDW2, 16u^2),
// sqrt (sqrt_dd, half the error plus 3u^2), + eps (two nonnegative terms), U = lr m' / (bc1 D)
// (two products and a quotient, 22u^2 with the errors of m', bc1 and D), p' = p - U within |U|
// times U's relative error plus 3u^2 |p'|; 1.01 times that goes to the rounding. Nullopt for
// non-finite values, products that may underflow, a step that is not an integer in [1, 2^40],
// v^ in (0, 2^-900), D = 0 and any undecided output.
std::optional<OracleResult> adam_double_double(const Input& in) {
  using dd::DD;
  constexpr double u2 = 0x1p-106;
  const auto& P = in.args.at(0).values;
  const auto& G = in.args.at(1).values;
  const auto& M = in.args.at(2).values;
  const auto& V = in.args.at(3).values;
  const params::AdamParams prm = params::adam_params(in);
  if (!(prm.step >= 1 && prm.step <= 0x1p40 && prm.step == std::floor(prm.step)))
    return std::nullopt;
  if (!(prm.beta1 >= 0 && prm.beta1 < 1 && prm.beta2 >= 0 && prm.beta2 < 1 && prm.eps >= 0 &&
        std::isfinite(prm.lr)))
    return std::nullopt;
  double rbc1, rbc2;
  const DD bc1 = bias_correction_dd(prm.beta1, prm.step, &rbc1);
  const DD bc2 = bias_correction_dd(prm.beta2, prm.step, &rbc2);
  const long double bc1l = static_cast<long double>(bc1.hi) + bc1.lo;
  const auto small = [](DD x) { return x.hi != 0 && std::fabs(x.hi) < 0x1p-960; };
  OracleResult r;
  r.exact.resize(P.size());
  r.cond.resize(P.size());
  r.decidable = true;
  r.precision_bits = 106;
  for (size_t i = 0; i < P.size(); ++i) {
    const double p = P[i], g = G[i], m = M[i], v = V[i];
    if (!std::isfinite(p) || !std::isfinite(g) || !std::isfinite(m) || !std::isfinite(v))
      return std::nullopt;
    const DD a1 = dd::two_prod(prm.beta1, m), c1 = dd::two_prod(-prm.beta1, g);
    const DD a2 = dd::two_prod(prm.beta2, v), g2 = dd::two_prod(g, g);
    if (small(a1) || small(c1) || small(a2) || small(g2)) return std::nullopt;
    const DD c2 = dd::mul(g2, -prm.beta2);
    const DD mp = dd::add_accurate(dd::add_accurate(a1, {g, 0}), c1);
    const double err_m = 7 * u2 * (std::fabs(a1.hi) + std::fabs(g) + std::fabs(c1.hi));
    const DD vp = dd::add_accurate(dd::add_accurate(a2, g2), c2);
    const double err_v =
        2 * u2 * std::fabs(c2.hi) + 7 * u2 * (std::fabs(a2.hi) + g2.hi + std::fabs(c2.hi));
    if (mp.hi == 0 || prm.lr == 0) {  // U = 0 exactly when m' is (the bound must then be 0)
      if (mp.hi == 0 && err_m != 0 && prm.lr != 0) return std::nullopt;
      r.exact[i] = p;
    }
    DD sq{0, 0};
    double rel_sq = 0;
    if (vp.hi != 0) {
      if (!(vp.hi > 0) || err_v >= vp.hi * 0x1p-60) return std::nullopt;
      const DD q = dd::div(vp, bc2);
      if (!(q.hi >= 0x1p-900)) return std::nullopt;
      sq = dd::sqrt_dd(q);
      rel_sq = (err_v / vp.hi + rbc2 + 16 * u2) / 2 * 1.0001 + 3 * u2;
    } else if (err_v != 0) {
      return std::nullopt;
    }
    const DD den = dd::add_accurate(sq, {prm.eps, 0});
    if (!(den.hi > 0)) return std::nullopt;
    const double rel_den = rel_sq + 3 * u2;
    DD u{0, 0}, pp{p, 0};
    if (mp.hi != 0 && prm.lr != 0) {
      u = dd::div(dd::mul(mp, prm.lr), dd::mul(bc1, den));
      const double rel_u = (err_m / std::fabs(mp.hi) + rbc1 + rel_den) * 1.0001 + 22 * u2;
      pp = dd::add_accurate({p, 0}, {-u.hi, -u.lo});
      const double bound = 1.01 * (std::fabs(u.hi) * rel_u + 3 * u2 * std::fabs(pp.hi));
      const auto y = dd::round_signed(pp, bound, in.dtype);
      if (!y) return std::nullopt;
      r.exact[i] = *y;
    }
    // The condition number as the MPFR path forms it, from the same quantities in long double.
    const auto ld = [](DD x) { return static_cast<long double>(x.hi) + x.lo; };
    r.cond[i] = adam_cond(
        prm, p, g, m, v,
        {ld(u), u.hi == 0 ? static_cast<long double>(p) : ld(pp), ld(den), ld(vp), ld(sq), bc1l});
  }
  return r;
}

}  // namespace stabfuzz::oracle::detail
