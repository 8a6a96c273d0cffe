// The linalg families dot, gemm and attention: value regimes, tolerances, stable CPU references.
#include "oracles/linalg.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "families/all_families.h"
#include "families/linalg_gen.h"
#include "stabfuzz/op.h"
#include "targets/cpu/linalg.h"

namespace stabfuzz::families {
namespace {

using namespace targets;  // NOLINT: the reference kernels this file registers

using namespace linalg_gen;  // NOLINT: the group's shared vocabulary

// ---- tolerances ---------------------------------------------------------------------------------
// The bounds set the thresholds, in units of each dtype's u (dot and gemm round per op in f16 and
// bf16; attention computes them in f32 and rounds once, well inside the bound). Measured worst
// error / tolerance of each stable target over `stabfuzz --target F --impl F/cpu/stable --seed S
// --runs 300`, S = 1..3 (summary.json max_error_over_tolerance), f64 / f32 / f16 / bf16: dot 0.087
// / 0.084 / 0.119 / 0.094, gemm 0.145 / 0.164 / 0.123 / 0.137, attention 0.035 / 0.057 / 0.024 /
// 0.025. In ULPs at cond <= 1, for n = all input values (n >= any reduction length, so log2 n
// bounds its log2). A pairwise sum of k terms errs by (7 + log2(k/8)) u sum |terms|, a product by
// u: a dot product errs by <= (8 + log2 k) u sum |a b| = (4 + log2(k)/2) u cond |y| (cond has the
// factor 2); e u |y| is < e ulps, + 1 for the rounding of the exact value. A gemm output is a dot
// product of length k <= n/2: the same tolerance.
double dot_tolerance(DType, size_t n) { return 5 + 0.5 * std::log2(double(n)); }
// Scores err by (K(d) + 1) u A_il (dot, scale), the shift x = S - max S by u |x|, exp by 2u, Z by
// (K'(t) + 2) u, N by (K'(t) + 3) u sum P |V|, the division by u; K'(t) <= 7 + log2 t (pairwise
// sum). Through the softmax Jacobian, P_il |x_il| <= ln(1/u) (P_il + u) bounds the shift's share
// by ln(1/u) (cV + 1) u |O| (first order), cV = sum P |V| / |O| >= 1. With cond = cV + cS the error
// is <= (2 (K'(t) + 3) + 2 ln(1/u)) cond u |O| (this coefficient exceeds the score term's
// (K(d) + 1)/2 on cS); + 1 for rounding.
double attention_tolerance(DType d, size_t n) {
  return 21 + 2 * std::log2(double(n)) + 2 * std::log(1 / dtype_unit_roundoff(d));
}

// f16's 40 binades hold less: products 2^-8..2^0, tiny factors from 64 denorm_min (2^-18), so that
// the large factor stays below 2^14 and a sum of 4096 products below 65504.
std::pair<double, double> tiny_times_large(Entropy& e, DType d) {
  const bool f16 = d == DType::f16;
  const double lo = (f16 ? 64 : 8) * min_subnormal(d),
               prod = f16 ? 0x1p-8 : 0x1p26 * dtype_min_normal(d);
  const double alpha = e.log_uniform(lo, 1e5 * dtype_min_normal(d));
  const double a = sign(e) * alpha * e.uniform(1, 16);
  const double b = sign(e) * prod / alpha * e.uniform(1, 16);
  return e.chance(0.5) ? std::pair{a, b} : std::pair{b, a};
}
// Magnitudes so that sum |a_i b_i| stays below 16 big, big up to 1e37 (f32, bf16) / 1e306 (f64) /
// 4000 (f16).
std::pair<double, double> overflow_scales(Entropy& e, DType d, size_t k) {
  const double big = e.log_uniform(by_range(d, 1e290, 1e30, 500), by_range(d, 1e306, 1e37, 4000));
  // Factors skewed by up to 1e+-3 (f16: 1e+-1, so that 4 x the larger factor stays below 65504).
  const double skew = by_range(d, 1e3, 1e3, 10);
  const double each = big / double(k), x = std::sqrt(each) * e.log_uniform(1 / skew, skew);
  return {x, each / x};
}

// ---- dot and gemm -------------------------------------------------------------------------------
std::vector<Regime> dot_regimes() {
  return {
      {"random_scales",
       "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3] ([0.05, 1] f16)",
       random_rows},
      {"cancellation", "products a_i b_i, a_i (1 + delta) (-b_i) in pairs; a residual: cond ~ 2C",
       [](Entropy& e, DType d) {
         const size_t h = std::max<size_t>(1, row_length(e) / 2), n = 2 * h + 1;
         const double c = cond_target(e, d, dot_tolerance(d, 2 * n)), delta = below(e, d, c);
         Vec a = log_mags(e, n, by_range(d, 1e-3, 1e-3, 1e-2), by_range(d, 1e3, 1e3, 1));
         Vec b = normals(e, n);
         double abs = 0;
         for (size_t i = 0; i < h; ++i) {
           a[h + i] = a[i] * (1 + delta * e.uniform(0.5, 1));
           b[h + i] = -b[i];
           abs += 2 * std::fabs(a[i] * b[i]);
         }
         const double r = std::sqrt(abs / c), split = e.log_uniform(0.1, 10);
         a[n - 1] = sign(e) * r * split;
         b[n - 1] = r / split;
         return rows(d, std::move(a), std::move(b));
       }},
      {"near_orthogonal", "a made orthogonal to b, then tilted: cond ~ 2C",
       [](Entropy& e, DType d) { return orthogonal_rows(e, d, dot_tolerance(d, 16384)); }},
      {"near_overflow",
       "sum |a_i b_i| up to 1.6e38 (f32) / 1.6e307 (f64) / 64000 (f16), factors skewed 1e+-3",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const auto [x, y] = overflow_scales(e, d, n);
         Vec a = normals(e, n), b = normals(e, n);
         for (size_t i = 0; i < n; ++i) a[i] = clip4(a[i]) * x, b[i] = clip4(b[i]) * y;
         return rows(d, std::move(a), std::move(b));
       }},
      {"tiny_subnormal", "one factor of each product subnormal or tiny, the other large",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec a(n), b(n);
         for (size_t i = 0; i < n; ++i) std::tie(a[i], b[i]) = tiny_times_large(e, d);
         return rows(d, std::move(a), std::move(b));
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1) (f16: 2 + 0.01 N), b = N(0, 1) or like a", shifted_rows},
  };
}

struct GemmShape {
  size_t m, k, n;
};
// m, n log-uniform in [1, mn_max], k in [kmin, kmax] with (m + n) k <= 16384 values.
GemmShape gemm_shape(Entropy& e, size_t kmin = 1, size_t kmax = 512, size_t mn_max = 48) {
  GemmShape s{log_int(e, 1, mn_max), log_int(e, kmin, kmax), log_int(e, 1, mn_max)};
  s.k = std::max(kmin, std::min(s.k, size_t{16384} / (s.m + s.n)));
  return s;
}
Input gemm_input(DType d, const GemmShape& s, Vec a, Vec b) {
  return regime::make_input(d, {mat(s.m, s.k, std::move(a)), mat(s.k, s.n, std::move(b))});
}
// A's columns in pairs x, x (1 + delta), B's rows y, -y, and a rank-1 residual: column r of A and
// row r of B with a_ir b_rj = sqrt(max_j A_ij max_i A_ij) / c >= A_ij / c, A_ij the pairs' sum
// |a_il b_lj|, so that every cond_ij <= ~2c.
Input gemm_cancellation(Entropy& e, DType d) {
  auto s = gemm_shape(e, 3);
  s.k -= 1 - s.k % 2;
  const size_t h = s.k / 2, r = 2 * h;
  const double c = cond_target(e, d, dot_tolerance(d, 16384)), delta = below(e, d, c);
  Vec a = log_mags(e, s.m * s.k, by_range(d, 1e-3, 1e-3, 1e-2), by_range(d, 1e3, 1e3, 1));
  Vec b = normals(e, s.k * s.n);
  for (size_t i = 0; i < s.m; ++i)
    for (size_t l = 0; l < h; ++l)
      a[i * s.k + h + l] = a[i * s.k + l] * (1 + delta * e.uniform(0.5, 1));
  for (size_t l = 0; l < h; ++l)
    for (size_t j = 0; j < s.n; ++j) b[(h + l) * s.n + j] = -b[l * s.n + j];
  Vec row(s.m, 0.0), col(s.n, 0.0);
  for (size_t i = 0; i < s.m; ++i)
    for (size_t j = 0; j < s.n; ++j) {
      double abs = 0;
      for (size_t l = 0; l < r; ++l) abs += std::fabs(a[i * s.k + l] * b[l * s.n + j]);
      row[i] = std::max(row[i], abs);
      col[j] = std::max(col[j], abs);
    }
  for (size_t i = 0; i < s.m; ++i) a[i * s.k + r] = sign(e) * std::sqrt(row[i] / c);
  for (size_t j = 0; j < s.n; ++j) b[r * s.n + j] = sign(e) * std::sqrt(col[j] / c);
  return gemm_input(d, s, std::move(a), std::move(b));
}

std::vector<Regime> gemm_regimes() {
  return {
      {"random_scales",
       "A_il = r_i N, B_lj = c_j N, row and column scales in [1e-3, 1e3] ([0.05, 1] f16)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         const double lo = by_range(d, 1e-3, 1e-3, 0.05), hi = by_range(d, 1e3, 1e3, 1);
         Vec b = normals(e, s.k * s.n), c = log_mags(e, s.n, lo, hi);
         for (size_t i = 0; i < b.size(); ++i) b[i] *= c[i % s.n];
         return gemm_input(d, s, scale_rows(e, normals(e, s.m * s.k), s.k, lo, hi), b);
       }},
      {"outer_product",
       "k = 1: every output one product, factors log-uniform over 1e-8..1e8 (1e-2..1e2 f16)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e, 1, 1);
         const double lo = by_range(d, 1e-8, 1e-8, 1e-2), hi = by_range(d, 1e8, 1e8, 1e2);
         Vec a = log_mags(e, s.m, lo, hi);  // one draw per statement (regimes.h)
         return gemm_input(d, s, std::move(a), log_mags(e, s.n, lo, hi));
       }},
      {"long_k", "k in [256, 512], m, n <= 8; entries 1 + 0.1 N (sums of positives) or N(0, 1)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e, 256, 512, 8);
         const double mean = e.chance(0.5) ? 1 : 0, sd = mean ? 0.1 : 1;
         Vec a = normals(e, s.m * s.k, sd, mean);  // one draw per statement (regimes.h)
         return gemm_input(d, s, std::move(a), normals(e, s.k * s.n, sd, mean));
       }},
      {"cancellation",
       "A's columns x, x (1 + delta), B's rows y, -y, a rank-1 residual: cond <~ 2C",
       gemm_cancellation},
      {"near_overflow", "sum_l |a_il b_lj| up to 1.6e38 (f32) / 1.6e307 (f64) / 64000 (f16)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         const auto [x, y] = overflow_scales(e, d, s.k);
         Vec a = normals(e, s.m * s.k), b = normals(e, s.k * s.n);
         for (auto& v : a) v = clip4(v) * x;
         for (auto& v : b) v = clip4(v) * y;
         return gemm_input(d, s, std::move(a), std::move(b));
       }},
      {"tiny_subnormal", "column l of A tiny or subnormal, row l of B large: every product normal",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         Vec a(s.m * s.k), b(s.k * s.n);
         for (size_t l = 0; l < s.k; ++l) {
           const auto [alpha, beta] = tiny_times_large(e, d);
           for (size_t i = 0; i < s.m; ++i) a[i * s.k + l] = sign(e) * alpha * e.uniform(1, 4);
           for (size_t j = 0; j < s.n; ++j) b[l * s.n + j] = sign(e) * beta * e.uniform(1, 4);
         }
         return gemm_input(d, s, std::move(a), std::move(b));
       }},
      {"mean_shifted", "A = 1e4 + N(0, 1) (f16: 16 + 0.25 N), B = N(0, 1)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         const double c = by_range(d, 1e4, 1e4, 16), sd = by_range(d, 1, 1, 0.25);
         Vec a = normals(e, s.m * s.k, sd, c);  // one draw per statement (regimes.h)
         return gemm_input(d, s, std::move(a), normals(e, s.k * s.n));
       }},
  };
}

// ---- attention ----------------------------------------------------------------------------------
struct AttnShape {
  size_t s, t, d;
  bool causal;
};
// s, t in [1, 32], d in [1, 64] log-uniform; causal (then t = s) 30% of the time.
AttnShape attn_shape(Entropy& e) {
  AttnShape a{log_int(e, 1, 32), 0, log_int(e, 1, 64), e.chance(0.3)};
  a.t = a.causal ? a.s : log_int(e, 1, 32);
  return a;
}
Input attn_input(DType d, const AttnShape& a, Vec q, Vec k, Vec v, Params p = {}) {
  p.emplace_back("causal", a.causal ? 1 : 0);
  return regime::make_input(
      d, {mat(a.s, a.d, std::move(q)), mat(a.t, a.d, std::move(k)), mat(a.t, a.d, std::move(v))},
      std::move(p));
}
// Keys in near-equal pairs with values v and -v (1 + delta) + rho_j, rho_j ~ 1/c: each pair nearly
// cancels and O_ij ~ rho_j / 2, so cV and cS are both ~ 2c.
Input attn_cancelling(Entropy& e, DType d) {
  auto a = attn_shape(e);
  a.t = std::max<size_t>(2, a.t - a.t % 2);
  if (a.causal) a.s = a.t;
  const double c = cond_target(e, d, attention_tolerance(d, 6144)) / 4, delta = below(e, d, c);
  Vec k = normals(e, a.t * a.d), v = normals(e, a.t * a.d), rho(a.d);
  for (auto& x : rho) x = sign(e) * e.uniform(0.5, 1) / c;
  for (size_t l = 0; l + 1 < a.t; l += 2)
    for (size_t j = 0; j < a.d; ++j) {
      k[(l + 1) * a.d + j] = k[l * a.d + j] * (1 + delta * e.uniform(-1, 1));
      v[(l + 1) * a.d + j] = -v[l * a.d + j] * (1 + delta * e.uniform(0.5, 1)) + rho[j];
    }
  return attn_input(d, a, normals(e, a.s * a.d), std::move(k), std::move(v));
}

std::vector<Regime> attention_regimes() {
  return {
      {"typical", "Q, K, V ~ N(0, 1), scale 1/sqrt(d), causal or not",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec q = normals(e, a.s * a.d), k = normals(e, a.t * a.d);  // one draw per statement
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d));
       }},
      {"large_scores",
       "scores ~ 1e2..1e4 (f32) / 1e3..1e5 (f64) / 10..100 (f16): exp overflows without the shift",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double sd =
             std::sqrt(e.log_uniform(by_range(d, 1e3, 1e2, 10), by_range(d, 1e5, 1e4, 100)));
         Vec q = normals(e, a.s * a.d, sd),
             k = normals(e, a.t * a.d, sd);  // one draw per statement
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d));
       }},
      {"peaked", "Q_i = lambda K_l + noise, one visible key l, lambda in [3, 30]: near one-hot",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec k = normals(e, a.t * a.d), q(a.s * a.d);
         for (size_t i = 0; i < a.s; ++i) {
           const size_t l = e.below(a.causal ? i + 1 : a.t);
           const double lambda = e.log_uniform(3, 30);
           for (size_t c = 0; c < a.d; ++c)
             q[i * a.d + c] = lambda * k[l * a.d + c] + 0.1 * e.normal();
         }
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d));
       }},
      {"cancelling_values", "key pairs with values v, -v (1 + delta) + rho, rho ~ 1/C: cond ~ 4C",
       attn_cancelling},
      {"mean_shifted",
       "K = c + N(0, 1), c ~ 10..50 per column (a shared score offset), V = 1e3 + N",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec off = log_mags(e, a.d, 10, 50), k = normals(e, a.t * a.d);
         for (size_t i = 0; i < k.size(); ++i) k[i] += off[i % a.d];
         Vec q = normals(e, a.s * a.d);  // one draw per statement (regimes.h)
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d, 1, 1e3));
       }},
      {"tiny",
       "Q, K subnormal or tiny (scores ~ 0), V ~ 1e-30..1e-20 (f32), 1e-300..1e-290 (f64), "
       "1e-7..1e-5 (f16)",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double lo = 8 * min_subnormal(d), hi = by_range(d, 1e-20, 1e-20, 1e-3);
         const double vs =
             std::pow(10.0, e.uniform(by_range(d, -300, -30, -7), by_range(d, -290, -20, -5)));
         Vec q = log_mags(e, a.s * a.d, lo, hi);  // one draw per statement (regimes.h)
         Vec k = log_mags(e, a.t * a.d, lo, hi);
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d, vs));
       }},
      {"scale_param",
       "scale log-uniform in [1e-3, 10] ([1e-3, 1] f16), rows of Q and K scaled over 0.1..10",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         // One draw per statement (regimes.h): Q, K, V, then the scale, as Clang evaluated them.
         Vec q = scale_rows(e, normals(e, a.s * a.d), a.d, 0.1, 10);
         Vec k = scale_rows(e, normals(e, a.t * a.d), a.d, 0.1, 10);
         Vec v = normals(e, a.t * a.d, e.log_uniform(1e-3, by_range(d, 1e3, 1e3, 1e2)));
         const double scale = e.log_uniform(1e-3, by_range(d, 10, 10, 1));
         return attn_input(d, a, std::move(q), std::move(k), std::move(v), {{"scale", scale}});
       }},
  };
}

}  // namespace

std::vector<Family> linalg_families() {
  std::vector<Family> out;
  out.push_back(reference_family<DotStable>(
      "dot", "y = sum_i a_i b_i; inputs a [n], b [n]; one output", dot_regimes(),
      oracle::validate_dot, oracle::dot, dot_tolerance, "rounded products, pairwise sum"));
  out.push_back(reference_family<GemmStable>(
      "gemm", "C = A B; inputs A [m,k], B [k,n] row-major; output C [m,n]", gemm_regimes(),
      oracle::validate_gemm, oracle::gemm, dot_tolerance,
      "every output a pairwise dot product over k"));
  out.push_back(reference_family<AttentionStable, OpmathAdapter>(
      "attention",
      "O = softmax(scale Q K^T [causal: mask j > i]) V, one head; inputs Q [s,d], K [t,d], V "
      "[t,dv]; params scale (default 1/sqrt(d)), causal (0 or 1, needs s = t); output O [s,dv]",
      attention_regimes(), oracle::validate_attention, oracle::attention, attention_tolerance,
      "pairwise-dot scores, max-shifted exp, pairwise weighted sum, one division; f16/bf16 "
      "computed in f32, output rounded once"));
  return out;
}

}  // namespace stabfuzz::families
