// The linalg families: value regimes, tolerances and stable CPU references of each.
// dot, gemm, attention, cosine_similarity, pairwise_distance, adam; contracts: oracles/linalg.h.
#include "oracles/linalg.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "harness/gen/regimes.h"
#include "stabfuzz/op.h"
#include "targets/cpu/linalg.h"
#include "targets/families.h"

namespace stabfuzz::targets {
namespace {

using gen::row_length;
using Params = std::vector<std::pair<std::string, double>>;
using Vec = std::vector<double>;
using Sampler = std::function<Input(Entropy&, DType)>;

// ---- tolerances ---------------------------------------------------------------------------------
// The bounds set the thresholds. Measured worst error / tolerance of each stable target over
// `stabfuzz --target F --seed S --runs 300`, S = 1, 2, 3 (summary.json max_error_over_tolerance),
// f64 / f32: dot 0.083 / 0.084, gemm 0.145 / 0.164, attention 0.035 / 0.057, cosine_similarity
// 0.083 / 0.061, pairwise_distance 0.133 / 0.182, adam 0.073 / 0.098.
// In ULPs at cond <= 1, for n = all input values (n >= any reduction length, so log2 n bounds its
// log2). A pairwise sum of k terms errs by (7 + log2(k/8)) u sum |terms|, a product by u: a dot
// product errs by <= (8 + log2 k) u sum |a b| = (4 + log2(k)/2) u cond |y| (cond has the factor
// 2); e u |y| is < e ulps, + 1 for the rounding of the exact value. A gemm output is a dot product
// of length k <= n/2: the same tolerance.
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
// K = 8 + log2(n/2), the dot bound: the scaled dot errs by (K + 2) u sum |a^ b^| <= (K + 2)
// (cond/2 + 1) u |y| (triangle inequality on cond's terms), each norm by ((K + 2)/2 + 1) u, their
// product, the division and (below eps) rho's 4 roundings by 6u more: <= (2.5 K + 16) u max(1,
// cond) |y|; + 1 for rounding.
double cosine_tolerance(DType, size_t n) { return 35 + 2.5 * std::log2(double(n)); }
// d_i errs by u (|a_i| + |b_i|) + u |d_i|: u (cond + 1) |y| through dy = sum d_i dd_i / y; the
// scaled norm adds ((K'(n) + 2)/2 + 2) u, K'(n) <= 7 + log2 n: <= (8.5 + log2(n)/2) u max(1, cond)
// |y|; + 1 for rounding.
double pairwise_tolerance(DType, size_t n) { return 10 + 0.5 * std::log2(double(n)); }
// U errs by (2 kappa + 16.5) u |U|, kappa = (|b1 m| + |(1 - b1) g|) / |m'| (m' may cancel; the bias
// corrections via expm1/log1p 5u each; sqrt halves v^'s 9u); kappa |U| <= cond |p'| + |U| and
// |U| <= |p| + |p'| <= (cond + 1) |p'|, so with p - U's rounding the error is <= 40 u max(1, cond)
// |p'|; + 1 for rounding.
double adam_tolerance(DType, size_t) { return 41; }

// ---- sampling helpers ---------------------------------------------------------------------------
double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }
double clip4(double x) { return std::fmax(-4.0, std::fmin(4.0, x)); }
double min_subnormal(DType d) { return d == DType::f64 ? 0x1p-1074 : 0x1p-149; }
// 10^-c, c uniform over what the dtype resolves: for cancellations that cannot flip a sign.
double depth(Entropy& e, DType d) {
  return std::pow(10.0, -e.uniform(1.0, d == DType::f64 ? 16.0 : 7.5));
}
// Conditioning the cancellation regimes aim at: C log-uniform in [10, 0.02 / (u tol)]. Beyond
// cond ~ 1 / (u tol) the allowed error tol cond ulp exceeds the exact value itself: a correct
// kernel may return 0 or the wrong sign, and only a non-finite output could still be judged.
double cond_target(Entropy& e, DType d, double tol) {
  return e.log_uniform(10, 0.02 / (dtype_unit_roundoff(d) * tol));
}
// A relative perturbation far below 1 / c (and no smaller than u), random sign.
double below(Entropy& e, DType d, double c) {
  const double lo = std::log10(c) + 2, hi = -std::log10(dtype_unit_roundoff(d));
  return sign(e) * std::pow(10.0, -e.uniform(lo, std::max(lo, hi) + 1e-9));
}
// Log-uniform integer in [lo, hi].
size_t log_int(Entropy& e, size_t lo, size_t hi) {
  const double l = e.uniform(std::log(double(lo)), std::log(hi + 1.0));
  return std::clamp(static_cast<size_t>(std::exp(l)), lo, hi);
}
Vec normals(Entropy& e, size_t n, double scale = 1, double mean = 0) {
  Vec v(n);
  for (auto& x : v) x = mean + scale * e.normal();
  return v;
}
// Random signs, magnitudes log-uniform in [lo, hi].
Vec log_mags(Entropy& e, size_t n, double lo, double hi) {
  Vec v(n);
  for (auto& x : v) x = sign(e) * e.log_uniform(lo, hi);
  return v;
}
// Each of the rows of v (row-major, `cols` wide) times its own factor log-uniform in [lo, hi].
Vec scale_rows(Entropy& e, Vec v, size_t cols, double lo, double hi) {
  for (size_t i = 0; i < v.size(); i += cols) {
    const double r = e.log_uniform(lo, hi);
    for (size_t c = 0; c < cols; ++c) v[i + c] *= r;
  }
  return v;
}
Tensor vec(Vec v) { return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)}; }
Tensor mat(size_t r, size_t c, Vec v) {
  return Tensor{{static_cast<int64_t>(r), static_cast<int64_t>(c)}, std::move(v)};
}
Input rows(DType d, Vec a, Vec b, Params p = {}) {
  return gen::make_input(d, {vec(std::move(a)), vec(std::move(b))}, std::move(p));
}

// Two-row regimes shared by dot, cosine_similarity and pairwise_distance.
Input random_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  return rows(d, normals(e, n, e.log_uniform(1e-3, 1e3)), normals(e, n, e.log_uniform(1e-3, 1e3)));
}
Input shifted_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  return rows(d, normals(e, n, 1, 1e4), normals(e, n, 1, e.chance(0.5) ? 1e4 : 0));
}
Input tiny_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  const double lo = 8 * min_subnormal(d), hi = 1e3 * dtype_min_normal(d);
  return rows(d, log_mags(e, n, lo, hi), log_mags(e, n, lo, hi));
}
// a orthogonal to b (long double projection), then tilted by the multiple of b that sets a.b to
// +-sum |a_i b_i| / c: cond ~ 2c, far above the rounding residual of order u sum |a b|.
Input orthogonal_rows(Entropy& e, DType d, double tol) {
  const size_t n = std::max<size_t>(2, row_length(e));
  const double c = cond_target(e, d, tol);
  Vec b = log_mags(e, n, 1e-2, 1e2), a = normals(e, n, e.log_uniform(1e-3, 1e3));
  long double ab = 0, bb = 0, abs = 0;
  for (size_t i = 0; i < n; ++i) ab += a[i] * static_cast<long double>(b[i]), bb += b[i] * b[i];
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<double>(a[i] - ab / bb * b[i]);
    abs += std::fabs(a[i] * static_cast<long double>(b[i]));
  }
  const long double gamma = sign(e) * abs / (c * bb);
  for (size_t i = 0; i < n; ++i) a[i] = static_cast<double>(a[i] + gamma * b[i]);
  return rows(d, std::move(a), std::move(b));
}
// Products a b in [2^26, 2^34] times the smallest normal: one factor tiny (often subnormal), the
// other large. Products below the normal range would lose bits to underflow, an error that no
// componentwise condition number accounts for.
std::pair<double, double> tiny_times_large(Entropy& e, DType d) {
  const double alpha = e.log_uniform(8 * min_subnormal(d), 1e5 * dtype_min_normal(d));
  const double a = sign(e) * alpha * e.uniform(1, 16);
  const double b = sign(e) * 0x1p26 * dtype_min_normal(d) / alpha * e.uniform(1, 16);
  return e.chance(0.5) ? std::pair{a, b} : std::pair{b, a};
}
// Magnitudes so that sum |a_i b_i| stays below 16 big, big up to 1e37 (f32) / 1e306 (f64).
std::pair<double, double> overflow_scales(Entropy& e, DType d, size_t k) {
  const double big = d == DType::f64 ? e.log_uniform(1e290, 1e306) : e.log_uniform(1e30, 1e37);
  const double each = big / double(k), x = std::sqrt(each) * e.log_uniform(1e-3, 1e3);
  return {x, each / x};
}

// ---- dot and gemm -------------------------------------------------------------------------------
std::vector<Regime> dot_regimes() {
  return {
      {"random_scales", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]",
       random_rows},
      {"cancellation", "products a_i b_i, a_i (1 + delta) (-b_i) in pairs; a residual: cond ~ 2C",
       [](Entropy& e, DType d) {
         const size_t h = std::max<size_t>(1, row_length(e) / 2), n = 2 * h + 1;
         const double c = cond_target(e, d, dot_tolerance(d, 2 * n)), delta = below(e, d, c);
         Vec a = log_mags(e, n, 1e-3, 1e3), b = normals(e, n);
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
      {"near_overflow", "sum |a_i b_i| up to 1.6e38 (f32) / 1.6e307 (f64), factors skewed 1e+-3",
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
      {"mean_shifted", "a = 1e4 + N(0, 1), b = N(0, 1) or 1e4 + N(0, 1)", shifted_rows},
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
  return gen::make_input(d, {mat(s.m, s.k, std::move(a)), mat(s.k, s.n, std::move(b))});
}
// A's columns in pairs x, x (1 + delta), B's rows y, -y, and a rank-1 residual: column r of A and
// row r of B with a_ir b_rj = sqrt(max_j A_ij max_i A_ij) / c >= A_ij / c, A_ij the pairs' sum
// |a_il b_lj|, so that every cond_ij <= ~2c.
Input gemm_cancellation(Entropy& e, DType d) {
  auto s = gemm_shape(e, 3);
  s.k -= 1 - s.k % 2;
  const size_t h = s.k / 2, r = 2 * h;
  const double c = cond_target(e, d, dot_tolerance(d, 16384)), delta = below(e, d, c);
  Vec a = log_mags(e, s.m * s.k, 1e-3, 1e3), b = normals(e, s.k * s.n);
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
      {"random_scales", "A_il = r_i N, B_lj = c_j N, row and column scales in [1e-3, 1e3]",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         Vec b = normals(e, s.k * s.n), c = log_mags(e, s.n, 1e-3, 1e3);
         for (size_t i = 0; i < b.size(); ++i) b[i] *= c[i % s.n];
         return gemm_input(d, s, scale_rows(e, normals(e, s.m * s.k), s.k, 1e-3, 1e3), b);
       }},
      {"outer_product", "k = 1: every output one product, factors log-uniform over 1e-8..1e8",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e, 1, 1);
         return gemm_input(d, s, log_mags(e, s.m, 1e-8, 1e8), log_mags(e, s.n, 1e-8, 1e8));
       }},
      {"long_k", "k in [256, 512], m, n <= 8; entries 1 + 0.1 N (sums of positives) or N(0, 1)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e, 256, 512, 8);
         const double mean = e.chance(0.5) ? 1 : 0, sd = mean ? 0.1 : 1;
         return gemm_input(d, s, normals(e, s.m * s.k, sd, mean), normals(e, s.k * s.n, sd, mean));
       }},
      {"cancellation",
       "A's columns x, x (1 + delta), B's rows y, -y, a rank-1 residual: cond <~ 2C",
       gemm_cancellation},
      {"near_overflow", "sum_l |a_il b_lj| up to 1.6e38 (f32) / 1.6e307 (f64)",
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
      {"mean_shifted", "A = 1e4 + N(0, 1), B = N(0, 1)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         return gemm_input(d, s, normals(e, s.m * s.k, 1, 1e4), normals(e, s.k * s.n));
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
  return gen::make_input(
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
         return attn_input(d, a, normals(e, a.s * a.d), normals(e, a.t * a.d),
                           normals(e, a.t * a.d));
       }},
      {"large_scores", "scores ~ 1e2..1e4 (f32) / 1e3..1e5 (f64): exp overflows without the shift",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double sd =
             std::sqrt(d == DType::f64 ? e.log_uniform(1e3, 1e5) : e.log_uniform(1e2, 1e4));
         return attn_input(d, a, normals(e, a.s * a.d, sd), normals(e, a.t * a.d, sd),
                           normals(e, a.t * a.d));
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
         return attn_input(d, a, normals(e, a.s * a.d), std::move(k),
                           normals(e, a.t * a.d, 1, 1e3));
       }},
      {"tiny", "Q, K subnormal or tiny (scores ~ 0), V ~ 1e-30..1e-20 (f32), 1e-300..1e-290 (f64)",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double lo = 8 * min_subnormal(d);
         const double vs =
             std::pow(10.0, d == DType::f64 ? e.uniform(-300, -290) : e.uniform(-30, -20));
         return attn_input(d, a, log_mags(e, a.s * a.d, lo, 1e-20),
                           log_mags(e, a.t * a.d, lo, 1e-20), normals(e, a.t * a.d, vs));
       }},
      {"scale_param", "scale log-uniform in [1e-3, 10], rows of Q and K scaled over 0.1..10",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         return attn_input(d, a, scale_rows(e, normals(e, a.s * a.d), a.d, 0.1, 10),
                           scale_rows(e, normals(e, a.t * a.d), a.d, 0.1, 10),
                           normals(e, a.t * a.d, e.log_uniform(1e-3, 1e3)),
                           {{"scale", e.log_uniform(1e-3, 10)}});
       }},
  };
}

// ---- cosine_similarity and pairwise_distance ----------------------------------------------------
std::vector<Regime> cosine_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]", random_rows},
      {"near_orthogonal", "a made orthogonal to b, then tilted: y ~ 1/C, cond ~ 2C",
       [](Entropy& e, DType d) { return orthogonal_rows(e, d, cosine_tolerance(d, 8192)); }},
      {"near_parallel", "b = c (a + 10^-k N): y ~ +-1",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double c = sign(e) * e.log_uniform(1e-3, 1e3), dep = depth(e, d);
         Vec a = normals(e, n), b(n);
         for (size_t i = 0; i < n; ++i) b[i] = c * (a[i] + dep * e.normal());
         return rows(d, std::move(a), std::move(b));
       }},
      {"huge_norms", "norms in [1e19, 1e37] (f32) / [1e150, 1e307] (f64): |a| |b| overflows",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec r[2] = {normals(e, n), normals(e, n)};
         for (auto& v : r) {
           const double norm =
               d == DType::f64 ? e.log_uniform(1e150, 1e307) : e.log_uniform(1e19, 1e37);
           for (auto& x : v) x = clip4(x) * norm / std::sqrt(double(n));
         }
         return rows(d, std::move(r[0]), std::move(r[1]));
       }},
      {"tiny_subnormal",
       "a subnormal or tiny, b large: |a| |b| within 1e+-6 of eps (both branches)",
       [](Entropy& e, DType d) {
         Input in = tiny_rows(e, d);
         double na = 0;
         for (double x : in.args[0].values) na = std::hypot(na, x);
         const double scale = std::min(d == DType::f64 ? 1e300 : 1e37,
                                       e.log_uniform(1e-6, 1e6) * oracle::kCosineEpsDefault / na);
         for (auto& x : in.args[1].values) x = clip4(e.normal()) * scale;
         return gen::make_input(d, std::move(in.args));
       }},
      {"near_eps", "eps in [1e-12, 1e-2], |a| |b| = eps e^(N/2): both sides of the max",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double eps = e.log_uniform(1e-12, 1e-2), target = eps * std::exp(0.5 * e.normal());
         const double split = e.log_uniform(1e-2, 1e2);
         Vec r[2] = {normals(e, n), normals(e, n)};
         for (int k = 0; k < 2; ++k) {
           double sq = 0;
           for (double x : r[k]) sq += x * x;
           const double f = std::sqrt(target / sq) * (k ? 1 / split : split);
           for (auto& x : r[k]) x *= f;
         }
         return rows(d, std::move(r[0]), std::move(r[1]), {{"eps", eps}});
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1), b = 1e4 + N(0, 1) or N(0, 1)", shifted_rows},
  };
}

std::vector<Regime> pairwise_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]", random_rows},
      {"near_equal", "b = a (1 + 10^-c N): a - b cancels, eps competes with it",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double c = depth(e, d);
         Vec a = normals(e, n, e.log_uniform(1e-3, 1e3)), b(n);
         for (size_t i = 0; i < n; ++i) b[i] = a[i] * (1 + c * e.normal());
         return rows(d, std::move(a), std::move(b));
       }},
      {"near_minus_eps", "b = a + eps (1 + 10^-c N): a - b + eps cancels to ~0",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double c = depth(e, d), eps = round_to(d, oracle::kPairwiseEpsDefault);
         Vec a = normals(e, n, e.log_uniform(1e-3, 1e2)), b(n);
         for (size_t i = 0; i < n; ++i) b[i] = a[i] + eps * (1 + c * e.normal());
         return rows(d, std::move(a), std::move(b));
       }},
      {"huge", "magnitudes up to 1e36 (f32) / 1e305 (f64) over sqrt(n): squares overflow",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double hi = (d == DType::f64 ? 1e305 : 1e36) / std::sqrt(double(n));
         return rows(d, log_mags(e, n, hi * 1e-6, hi), log_mags(e, n, hi * 1e-6, hi));
       }},
      {"tiny_subnormal", "magnitudes over 8 denorm_min .. 1e3 min normal; eps = 0 half the time",
       [](Entropy& e, DType d) {
         Input in = tiny_rows(e, d);
         if (e.chance(0.5)) in.set_param("eps", 0.0);
         return in;
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1), b = 1e4 + N(0, 1) or N(0, 1)", shifted_rows},
      {"equal_rows", "b = a: every d_i = eps; eps default or log-uniform in [1e-9, 1e-3]",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec a = normals(e, n, e.log_uniform(1e-3, 1e3));
         Input in = rows(d, a, a);
         if (e.chance(0.5)) in.set_param("eps", e.log_uniform(1e-9, 1e-3));
         return in;
       }},
  };
}

// ---- adam ---------------------------------------------------------------------------------------
// p ~ N(0, 1) x p_scale, g ~ N(0, s^2), m ~ N(0, s^2/4), v = g^2 x [0.1, 10], step 1..max_step.
Input adam_input(Entropy& e, DType d, size_t n, double s, size_t max_step, double p_scale = 1) {
  Vec g = normals(e, n, s), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = g[i] * g[i] * e.log_uniform(0.1, 10);
  return gen::make_input(d,
                         {vec(normals(e, n, p_scale)), vec(g), vec(normals(e, n, s / 2)), vec(v)},
                         {{"step", double(log_int(e, 1, max_step))}});
}
Vec& adam_arg(Input& in, size_t k) { return in.args[k].values; }

// The update U = lr m^ / (sqrt(v^) + eps) the target forms, in long double.
long double adam_update(const oracle::AdamParams& q, long double g, long double m, long double v) {
  const long double mp = q.beta1 * m + (1 - q.beta1) * g, vp = q.beta2 * v + (1 - q.beta2) * g * g;
  const long double bc1 = 1 - std::pow(static_cast<long double>(q.beta1), q.step);
  const long double bc2 = 1 - std::pow(static_cast<long double>(q.beta2), q.step);
  return q.lr * (mp / bc1) / (std::sqrt(vp / bc2) + q.eps);
}

std::vector<Regime> adam_regimes() {
  return {
      {"typical", "p ~ N(0, 1), g, m ~ s N, v ~ g^2, s log-uniform in [1e-4, 10], step 1..1e4",
       [](Entropy& e, DType d) {
         return adam_input(e, d, row_length(e), e.log_uniform(1e-4, 10), 10000);
       }},
      {"zero_grad_tiny_v", "g = 0, v in [1e-30, 1e-12], m ~ 1e-12..1e-6: eps sets the step",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Input in = adam_input(e, d, n, 1, 10);
         adam_arg(in, 1).assign(n, 0.0);
         adam_arg(in, 2) = log_mags(e, n, 1e-12, 1e-6);
         for (auto& x : adam_arg(in, 3)) x = e.log_uniform(1e-30, 1e-12);
         return gen::make_input(d, std::move(in.args), std::move(in.params));
       }},
      {"cancel_update", "p = U (1 + 1/C), m of g's sign (no cancellation in m'): cond ~ 2C",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(1e-4, 10), c = 1 / cond_target(e, d, adam_tolerance(d, n));
         Input in = adam_input(e, d, n, s, 100);
         const auto q = oracle::adam_params(in);
         for (size_t i = 0; i < n; ++i) {
           const double g = adam_arg(in, 1)[i];
           const double m = round_to(d, std::copysign(adam_arg(in, 2)[i], g));
           adam_arg(in, 2)[i] = m;
           const auto u = static_cast<double>(adam_update(q, g, m, adam_arg(in, 3)[i]));
           adam_arg(in, 0)[i] = round_to(d, u * (1 + c * sign(e) * e.uniform(0.5, 1)));
         }
         return in;
       }},
      {"cancel_moment", "m = -(1 - b1) g / b1 (1 + 10^-c N): the new first moment cancels",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Input in = adam_input(e, d, n, e.log_uniform(1e-4, 10), 100);
         const double c = depth(e, d), b1 = round_to(d, oracle::kAdamBeta1Default);
         for (size_t i = 0; i < n; ++i)
           adam_arg(in, 2)[i] =
               round_to(d, -(1 - b1) * adam_arg(in, 1)[i] / b1 * (1 + c * e.normal()));
         return in;
       }},
      {"large", "g, m ~ 1e15 (f32) / 1e150 (f64), v ~ g^2, p ~ 1e3 N",
       [](Entropy& e, DType d) {
         const double s = (d == DType::f64 ? 1e150 : 1e15) * e.log_uniform(1e-2, 1);
         return adam_input(e, d, row_length(e), s, 1000, 1e3);
       }},
      {"random_hyper",
       "lr in [1e-6, 1], beta1 in [.5, .99], beta2 in [.9, .99999], eps in "
       "[1e-12, 1e-4], step 1..1e6",
       [](Entropy& e, DType d) {
         Input in = adam_input(e, d, row_length(e), e.log_uniform(1e-4, 10), 1000000);
         in.set_param("lr", e.log_uniform(1e-6, 1));
         in.set_param("beta1", e.uniform(0.5, 0.99));
         in.set_param("beta2", e.uniform(0.9, 0.99999));
         in.set_param("eps", e.log_uniform(1e-12, 1e-4));
         return in;
       }},
      {"tiny", "g ~ 1e-17..1e-10 (f32) / 1e-150..1e-100 (f64) with g^2 normal, p tiny",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s =
             d == DType::f64 ? e.log_uniform(1e-150, 1e-100) : e.log_uniform(1e-17, 1e-10);
         Input in = adam_input(e, d, n, s, 100);
         adam_arg(in, 0) = log_mags(e, n, 8 * min_subnormal(d), 1e-20);
         return gen::make_input(d, std::move(in.args), std::move(in.params));
       }},
  };
}

}  // namespace

std::vector<Family> linalg_families() {
  std::vector<Family> out;
  auto add = [&](std::string name, std::string summary, std::vector<Regime> regimes,
                 decltype(Family::validate) validate, decltype(Family::oracle) oracle,
                 decltype(Family::tolerance_ulps) tol, std::string desc,
                 decltype(Target::native) native, decltype(Target::cestac) cestac) {
    Target t{.id = name + "/cpu/stable",
             .kind = TargetKind::reference,
             .description = desc,
             .dtypes = {DType::f64, DType::f32},
             .native = native,
             .cestac = cestac};
    out.push_back(Family{.name = name,
                         .summary = summary,
                         .regimes = std::move(regimes),
                         .validate = validate,
                         .oracle = oracle,
                         .tolerance_ulps = tol,
                         .cestac_margin_digits = 1.0,
                         .finite_outputs = true,
                         .targets = {t}});
  };
  add("dot", "y = sum_i a_i b_i; inputs a [n], b [n]; one output", dot_regimes(),
      oracle::validate_dot, oracle::dot, dot_tolerance, "rounded products, pairwise sum",
      op_native<DotStable>(), op_cestac<DotStable>());
  add("gemm", "C = A B; inputs A [m,k], B [k,n] row-major; output C [m,n]", gemm_regimes(),
      oracle::validate_gemm, oracle::gemm, dot_tolerance,
      "every output a pairwise dot product over k", op_native<GemmStable>(),
      op_cestac<GemmStable>());
  add("attention",
      "O = softmax(scale Q K^T [causal: mask j > i]) V, one head; inputs Q [s,d], K [t,d], V "
      "[t,dv]; params scale (default 1/sqrt(d)), causal (0 or 1, needs s = t); output O [s,dv]",
      attention_regimes(), oracle::validate_attention, oracle::attention, attention_tolerance,
      "pairwise-dot scores, max-shifted exp, pairwise weighted sum, one division",
      op_native<AttentionStable>(), op_cestac<AttentionStable>());
  add("cosine_similarity",
      "y = a.b / max(|a|_2 |b|_2, eps); inputs a [n], b [n]; param eps (default 1e-8; 0 or in "
      "[1e-30, 1]); one output",
      cosine_regimes(), oracle::validate_cosine_similarity, oracle::cosine_similarity,
      cosine_tolerance,
      "rows scaled by their max |.|, pairwise dot and norms, overflow-free eps test",
      op_native<CosineSimilarityStable>(), op_cestac<CosineSimilarityStable>());
  add("pairwise_distance",
      "y = |a - b + eps|_2 (PyTorch's pairwise_distance, p = 2); inputs a [n], b [n]; param eps "
      "(default 1e-6); one output",
      pairwise_regimes(), oracle::validate_pairwise_distance, oracle::pairwise_distance,
      pairwise_tolerance, "(a - b) + eps, norm scaled by max |d_i|, pairwise sum of squares",
      op_native<PairwiseDistanceStable>(), op_cestac<PairwiseDistanceStable>());
  add("adam",
      "one Adam step: p' = p - lr m^ / (sqrt(v^) + eps), m^ = (b1 m + (1 - b1) g) / (1 - b1^t), "
      "v^ = (b2 v + (1 - b2) g^2) / (1 - b2^t); inputs p, g, m, v [n] (v >= 0); params lr (1e-3), "
      "beta1 (0.9), beta2 (0.999), eps (1e-8), step t (1); output p' [n]",
      adam_regimes(), oracle::validate_adam, oracle::adam, adam_tolerance,
      "PyTorch's formula; bias corrections as -expm1(t log1p(-(1 - beta)))",
      op_native<AdamStable>(), op_cestac<AdamStable>());
  return out;
}

}  // namespace stabfuzz::targets
