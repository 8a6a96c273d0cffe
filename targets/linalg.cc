// The linalg families (dot, gemm, attention, cosine_similarity, pairwise_distance, adam): contracts,
// value regimes, validation, tolerances and their stable CPU references.
#include <cmath>
#include <initializer_list>
#include <string_view>

#include "harness/gen/regimes.h"
#include "oracles/linalg.h"
#include "stabfuzz/op.h"
#include "targets/cpu/linalg.h"
#include "targets/families.h"

namespace stabfuzz::targets {
namespace {

using gen::row_length;
using Params = std::vector<std::pair<std::string, double>>;
using Vec = std::vector<double>;
using Error = std::optional<std::string>;

// ---- sampling helpers ----------------------------------------------------------------------------
double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }
double clip4(double x) { return std::fmax(-4.0, std::fmin(4.0, x)); }
double min_subnormal(DType d) { return d == DType::f64 ? 0x1p-1074 : 0x1p-149; }
// 10^-c for a cancellation depth c uniform over what the dtype can resolve.
double depth(Entropy& e, DType d) { return std::pow(10.0, -e.uniform(1.0, d == DType::f64 ? 16.0 : 7.5)); }

// Log-uniform integer in [lo, hi].
size_t log_int(Entropy& e, size_t lo, size_t hi) {
  const auto v = static_cast<size_t>(std::exp(e.uniform(std::log(double(lo)), std::log(hi + 1.0))));
  return v < lo ? lo : (v > hi ? hi : v);
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
Tensor vec(Vec v) { return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)}; }
Tensor mat(size_t r, size_t c, Vec v) {
  return Tensor{{static_cast<int64_t>(r), static_cast<int64_t>(c)}, std::move(v)};
}
Input rows(DType d, Vec a, Vec b, Params p = {}) { return gen::make_input(d, {vec(std::move(a)), vec(std::move(b))}, std::move(p)); }

// a with its component along b removed (long double), so that a.b ~ 0 after rounding.
Vec orthogonalize(Vec a, const Vec& b) {
  long double ab = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<long double>(a[i]) * b[i];
    bb += static_cast<long double>(b[i]) * b[i];
  }
  if (bb > 0)
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(a[i] - ab / bb * b[i]);
  return a;
}

// Rows whose products all lie in [2^26, 2^26 * 2^8] times the smallest normal: one factor tiny
// (often subnormal), the other large. Products below the normal range would lose bits to
// underflow, an error no componentwise condition number accounts for.
void tiny_times_large(Entropy& e, DType d, double& a, double& b) {
  const double alpha = e.log_uniform(8 * min_subnormal(d), 1e5 * dtype_min_normal(d));
  a = sign(e) * alpha * e.uniform(1, 16);
  b = sign(e) * 0x1p26 * dtype_min_normal(d) / alpha * e.uniform(1, 16);
  if (e.chance(0.5)) std::swap(a, b);
}

// ---- validation helpers --------------------------------------------------------------------------
Error check_values(const Input& in) {
  for (const auto& t : in.args) {
    size_t n = 1;
    for (auto s : t.shape) {
      if (s < 1) return "every dimension must be at least 1";
      n *= static_cast<size_t>(s);
      if (n > (size_t{1} << 24)) return "a tensor holds more than 16777216 values";
    }
    if (n != t.values.size()) return "a tensor's values do not match its shape";
    for (double x : t.values) {
      if (!std::isfinite(x)) return "inputs must be finite";
      if (!representable(in.dtype, x)) return "a value is not representable in the dtype";
    }
  }
  return std::nullopt;
}
Error check_params(const Input& in, std::initializer_list<std::string_view> allowed) {
  for (const auto& [k, v] : in.params) {
    bool known = false;
    for (auto a : allowed) known |= k == a;
    if (!known) return "unknown parameter '" + k + "'";
    if (!std::isfinite(v)) return "parameter '" + k + "' must be finite";
  }
  return std::nullopt;
}
// `ranks` tensors of these ranks, then valid values and parameters.
Error check_signature(const Input& in, std::initializer_list<size_t> ranks, const char* what,
                      std::initializer_list<std::string_view> params) {
  if (in.args.size() != ranks.size()) return std::string(what);
  size_t k = 0;
  for (size_t r : ranks)
    if (in.args[k++].shape.size() != r) return std::string(what);
  if (auto err = check_values(in)) return err;
  return check_params(in, params);
}
Error two_rows(const Input& in, const char* what, std::initializer_list<std::string_view> params) {
  if (auto err = check_signature(in, {1, 1}, what, params)) return err;
  if (in.args[0].values.size() != in.args[1].values.size()) return "the two rows differ in length";
  return std::nullopt;
}

// ---- dot -------------------------------------------------------------------------------------------
std::vector<Regime> dot_regimes() {
  return {
      {"random_scales", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, e.log_uniform(1e-3, 1e3)), normals(e, n, e.log_uniform(1e-3, 1e3)));
       }},
      {"cancellation", "second half of a = first half times (1 + 10^-c N), of b = minus the first half",
       [](Entropy& e, DType d) {
         const size_t n = std::max<size_t>(2, row_length(e)), h = n / 2;
         const double c = depth(e, d);
         Vec a = log_mags(e, n, 1e-3, 1e3), b = normals(e, n);
         for (size_t i = 0; i < h; ++i) {
           a[h + i] = a[i] * (1 + c * e.normal());
           b[h + i] = -b[i];
         }
         return rows(d, std::move(a), std::move(b));
       }},
      {"near_orthogonal", "a projected orthogonal to b (a.b at the rounding level), entries of b over 1e-2..1e2",
       [](Entropy& e, DType d) {
         const size_t n = std::max<size_t>(2, row_length(e));
         Vec b = log_mags(e, n, 1e-2, 1e2);
         return rows(d, orthogonalize(normals(e, n), b), b);
       }},
      {"near_overflow", "sum |a_i b_i| up to 1.6e38 (f32) / 1.6e307 (f64), factors skewed by 1e+-3",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double big = d == DType::f64 ? e.log_uniform(1e290, 1e306) : e.log_uniform(1e30, 1e37);
         const double each = big / double(n), x = std::sqrt(each) * e.log_uniform(1e-3, 1e3);
         Vec a(n), b(n);
         for (size_t i = 0; i < n; ++i) {
           a[i] = clip4(e.normal()) * x;
           b[i] = clip4(e.normal()) * (each / x);
         }
         return rows(d, std::move(a), std::move(b));
       }},
      {"tiny_subnormal", "one factor of each product subnormal or tiny, the other large; products normal",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec a(n), b(n);
         for (size_t i = 0; i < n; ++i) tiny_times_large(e, d, a[i], b[i]);
         return rows(d, std::move(a), std::move(b));
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1), b = N(0, 1) or 1e4 + N(0, 1)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, 1, 1e4), normals(e, n, 1, e.chance(0.5) ? 1e4 : 0));
       }},
  };
}

Error validate_dot(const Input& in) { return two_rows(in, "dot takes two rows a [n], b [n]", {}); }

// ---- gemm ------------------------------------------------------------------------------------------
struct GemmShape {
  size_t m, k, n;
};
// m, n log-uniform in [1, 48], k in [kmin, kmax], (m + n) k <= 16384 values.
GemmShape gemm_shape(Entropy& e, size_t kmin = 1, size_t kmax = 512, size_t mn_max = 48) {
  GemmShape s{log_int(e, 1, mn_max), log_int(e, kmin, kmax), log_int(e, 1, mn_max)};
  s.k = std::max(kmin, std::min(s.k, size_t{16384} / (s.m + s.n)));
  return s;
}
Input gemm_input(DType d, const GemmShape& s, Vec a, Vec b) {
  return gen::make_input(d, {mat(s.m, s.k, std::move(a)), mat(s.k, s.n, std::move(b))});
}

std::vector<Regime> gemm_regimes() {
  return {
      {"random_scales", "A_il = r_i N, B_lj = c_j N, row and column scales log-uniform in [1e-3, 1e3]",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         Vec a(s.m * s.k), b(s.k * s.n), r = log_mags(e, s.m, 1e-3, 1e3), c = log_mags(e, s.n, 1e-3, 1e3);
         for (size_t i = 0; i < a.size(); ++i) a[i] = r[i / s.k] * e.normal();
         for (size_t i = 0; i < b.size(); ++i) b[i] = c[i % s.n] * e.normal();
         return gemm_input(d, s, std::move(a), std::move(b));
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
      {"cancellation", "A's second k/2 columns = first ones times (1 + 10^-c N), B's second rows = minus the first",
       [](Entropy& e, DType d) {
         auto s = gemm_shape(e, 2);
         s.k -= s.k % 2;
         const size_t h = s.k / 2;
         const double c = depth(e, d);
         Vec a = log_mags(e, s.m * s.k, 1e-3, 1e3), b = normals(e, s.k * s.n);
         for (size_t i = 0; i < s.m; ++i)
           for (size_t l = 0; l < h; ++l) a[i * s.k + h + l] = a[i * s.k + l] * (1 + c * e.normal());
         for (size_t l = 0; l < h; ++l)
           for (size_t j = 0; j < s.n; ++j) b[(h + l) * s.n + j] = -b[l * s.n + j];
         return gemm_input(d, s, std::move(a), std::move(b));
       }},
      {"near_overflow", "sum_l |a_il b_lj| up to 1.6e38 (f32) / 1.6e307 (f64)",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         const double big = d == DType::f64 ? e.log_uniform(1e290, 1e306) : e.log_uniform(1e30, 1e37);
         const double each = big / double(s.k), x = std::sqrt(each) * e.log_uniform(1e-3, 1e3);
         Vec a = normals(e, s.m * s.k), b = normals(e, s.k * s.n);
         for (auto& v : a) v = clip4(v) * x;
         for (auto& v : b) v = clip4(v) * (each / x);
         return gemm_input(d, s, std::move(a), std::move(b));
       }},
      {"tiny_subnormal", "column l of A tiny or subnormal, row l of B large: every product normal",
       [](Entropy& e, DType d) {
         const auto s = gemm_shape(e);
         Vec a(s.m * s.k), b(s.k * s.n);
         for (size_t l = 0; l < s.k; ++l) {
           const double alpha = e.log_uniform(8 * min_subnormal(d), 1e5 * dtype_min_normal(d));
           const double beta = 0x1p26 * dtype_min_normal(d) / alpha;
           for (size_t i = 0; i < s.m; ++i) a[i * s.k + l] = sign(e) * alpha * e.uniform(1, 16);
           for (size_t j = 0; j < s.n; ++j) b[l * s.n + j] = sign(e) * beta * e.uniform(1, 16);
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

Error validate_gemm(const Input& in) {
  if (auto err = check_signature(in, {2, 2}, "gemm takes A [m,k] and B [k,n]", {})) return err;
  const auto& a = in.args[0].shape;
  const auto& b = in.args[1].shape;
  if (a[1] != b[0]) return "gemm: A's columns and B's rows differ";
  if (double(a[0]) * double(a[1]) * double(b[1]) > 0x1p26) return "gemm: m n k above 2^26 (oracle cost)";
  return std::nullopt;
}

// ---- attention -------------------------------------------------------------------------------------
struct AttnShape {
  size_t s, t, d;
  bool causal;
};
AttnShape attn_shape(Entropy& e) {
  AttnShape a{log_int(e, 1, 32), 0, log_int(e, 1, 64), e.chance(0.3)};
  a.t = a.causal ? a.s : log_int(e, 1, 32);
  return a;
}
Input attn_input(DType d, const AttnShape& a, Vec q, Vec k, Vec v, Params p = {}) {
  p.emplace_back("causal", a.causal ? 1 : 0);
  return gen::make_input(d, {mat(a.s, a.d, std::move(q)), mat(a.t, a.d, std::move(k)), mat(a.t, a.d, std::move(v))},
                         std::move(p));
}

std::vector<Regime> attention_regimes() {
  return {
      {"typical", "Q, K, V ~ N(0, 1), scale 1/sqrt(d), causal or not",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         return attn_input(d, a, normals(e, a.s * a.d), normals(e, a.t * a.d), normals(e, a.t * a.d));
       }},
      {"large_scores", "scores ~ 1e2..1e4 (f32) / 1e3..1e5 (f64), beyond exp overflow without the max shift",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double sd = std::sqrt(d == DType::f64 ? e.log_uniform(1e3, 1e5) : e.log_uniform(1e2, 1e4));
         return attn_input(d, a, normals(e, a.s * a.d, sd), normals(e, a.t * a.d, sd), normals(e, a.t * a.d));
       }},
      {"peaked", "Q_i = lambda K_l + noise for one visible key l, lambda in [3, 30]: near one-hot weights",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec k = normals(e, a.t * a.d), q(a.s * a.d);
         for (size_t i = 0; i < a.s; ++i) {
           const size_t l = e.below(a.causal ? i + 1 : a.t);
           const double lambda = e.log_uniform(3, 30);
           for (size_t c = 0; c < a.d; ++c) q[i * a.d + c] = lambda * k[l * a.d + c] + 0.1 * e.normal();
         }
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d));
       }},
      {"cancelling_values", "keys in near-equal pairs, their values opposite (1 + 10^-c N): outputs cancel",
       [](Entropy& e, DType d) {
         auto a = attn_shape(e);
         a.t = std::max<size_t>(2, a.t - a.t % 2);
         if (a.causal) a.s = a.t;
         const double c = depth(e, d);
         Vec k = normals(e, a.t * a.d), v = normals(e, a.t * a.d);
         for (size_t l = 0; l + 1 < a.t; l += 2)
           for (size_t j = 0; j < a.d; ++j) {
             k[(l + 1) * a.d + j] = k[l * a.d + j] + c * e.normal();
             v[(l + 1) * a.d + j] = -v[l * a.d + j] * (1 + c * e.normal());
           }
         return attn_input(d, a, normals(e, a.s * a.d), std::move(k), std::move(v));
       }},
      {"mean_shifted", "K = c + N(0, 1) with c ~ 10..50 per column (scores share a large offset), V = 1e3 + N",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec off = log_mags(e, a.d, 10, 50), k(a.t * a.d);
         for (size_t i = 0; i < k.size(); ++i) k[i] = off[i % a.d] + e.normal();
         return attn_input(d, a, normals(e, a.s * a.d), std::move(k), normals(e, a.t * a.d, 1, 1e3));
       }},
      {"tiny", "Q, K subnormal or tiny (scores ~ 0), V ~ 1e-30..1e-20 (f32) / 1e-300..1e-290 (f64)",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         const double lo = 8 * min_subnormal(d);
         const double vs = std::pow(10.0, d == DType::f64 ? e.uniform(-300, -290) : e.uniform(-30, -20));
         return attn_input(d, a, log_mags(e, a.s * a.d, lo, 1e-20), log_mags(e, a.t * a.d, lo, 1e-20),
                           normals(e, a.t * a.d, vs));
       }},
      {"scale_param", "explicit scale log-uniform in [1e-3, 10], rows of Q and K scaled over 0.1..10",
       [](Entropy& e, DType d) {
         const auto a = attn_shape(e);
         Vec q = normals(e, a.s * a.d), k = normals(e, a.t * a.d);
         for (size_t i = 0; i < a.s; ++i) {
           const double r = e.log_uniform(0.1, 10);
           for (size_t c = 0; c < a.d; ++c) q[i * a.d + c] *= r;
         }
         for (size_t l = 0; l < a.t; ++l) {
           const double r = e.log_uniform(0.1, 10);
           for (size_t c = 0; c < a.d; ++c) k[l * a.d + c] *= r;
         }
         return attn_input(d, a, std::move(q), std::move(k), normals(e, a.t * a.d, e.log_uniform(1e-3, 1e3)),
                           {{"scale", e.log_uniform(1e-3, 10)}});
       }},
  };
}

Error validate_attention(const Input& in) {
  if (auto err = check_signature(in, {2, 2, 2}, "attention takes Q [s,d], K [t,d], V [t,dv]", {"scale", "causal"}))
    return err;
  const auto& q = in.args[0].shape;
  const auto& k = in.args[1].shape;
  const auto& v = in.args[2].shape;
  if (q[1] != k[1]) return "attention: Q and K differ in head dimension";
  if (k[0] != v[0]) return "attention: K and V differ in length";
  if (double(q[0]) * double(k[0]) * double(q[1] + v[1]) > 0x1p24) return "attention: s t (d + dv) above 2^24";
  const double causal = in.param("causal", 0);
  if (causal != 0 && causal != 1) return "attention: causal must be 0 or 1";
  if (causal == 1 && q[0] != k[0]) return "attention: causal needs as many queries as keys";
  return std::nullopt;
}

// ---- cosine_similarity -----------------------------------------------------------------------------
std::vector<Regime> cosine_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, e.log_uniform(1e-3, 1e3)), normals(e, n, e.log_uniform(1e-3, 1e3)));
       }},
      {"near_orthogonal", "a projected orthogonal to b: y at the rounding level, cond ~ 1/u",
       [](Entropy& e, DType d) {
         const size_t n = std::max<size_t>(2, row_length(e));
         Vec b = log_mags(e, n, 1e-2, 1e2);
         return rows(d, orthogonalize(normals(e, n, e.log_uniform(1e-3, 1e3)), b), b);
       }},
      {"near_parallel", "b = c a + 10^-k noise: y ~ +-1",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double c = sign(e) * e.log_uniform(1e-3, 1e3), dep = depth(e, d);
         Vec a = normals(e, n), b(n);
         for (size_t i = 0; i < n; ++i) b[i] = c * (a[i] + dep * e.normal());
         return rows(d, std::move(a), std::move(b));
       }},
      {"huge_norms", "norms log-uniform in [1e19, 1e37] (f32) / [1e150, 1e307] (f64): |a| |b| overflows",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         auto norm = [&] { return d == DType::f64 ? e.log_uniform(1e150, 1e307) : e.log_uniform(1e19, 1e37); };
         const double sa = norm() / std::sqrt(double(n)), sb = norm() / std::sqrt(double(n));
         Vec a = normals(e, n), b = normals(e, n);
         for (auto& x : a) x = clip4(x) * sa;
         for (auto& x : b) x = clip4(x) * sb;
         return rows(d, std::move(a), std::move(b));
       }},
      {"tiny_subnormal", "magnitudes log-uniform over 8 * denorm_min .. 1e3 * min normal: below eps",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double lo = 8 * min_subnormal(d), hi = 1e3 * dtype_min_normal(d);
         return rows(d, log_mags(e, n, lo, hi), log_mags(e, n, lo, hi));
       }},
      {"near_eps", "eps log-uniform in [1e-12, 1e-2] and |a| |b| = eps e^(N/2): both sides of the max",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double eps = e.log_uniform(1e-12, 1e-2), target = eps * std::exp(0.5 * e.normal());
         const double split = e.log_uniform(1e-2, 1e2);
         Vec a = normals(e, n), b = normals(e, n);
         long double na = 0, nb = 0;
         for (size_t i = 0; i < n; ++i) na += a[i] * a[i], nb += b[i] * b[i];
         const double fa = std::sqrt(target) * split / std::sqrt(double(na));
         const double fb = std::sqrt(target) / split / std::sqrt(double(nb));
         for (auto& x : a) x *= fa;
         for (auto& x : b) x *= fb;
         return rows(d, std::move(a), std::move(b), {{"eps", eps}});
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1), b = 1e4 + N(0, 1) or N(0, 1)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, 1, 1e4), normals(e, n, 1, e.chance(0.5) ? 1e4 : 0));
       }},
  };
}

Error validate_cosine(const Input& in) {
  if (auto err = two_rows(in, "cosine_similarity takes two rows a [n], b [n]", {"eps"})) return err;
  const double eps = in.param("eps", oracle::kCosineEpsDefault);
  if (eps < 0 || eps > 1) return "cosine_similarity: eps must lie in [0, 1]";
  return std::nullopt;
}

// ---- pairwise_distance -----------------------------------------------------------------------------
std::vector<Regime> pairwise_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3]",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, e.log_uniform(1e-3, 1e3)), normals(e, n, e.log_uniform(1e-3, 1e3)));
       }},
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
      {"huge", "magnitudes up to 1e36 (f32) / 1e305 (f64) over sqrt(n): squares overflow unscaled",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double hi = (d == DType::f64 ? 1e305 : 1e36) / std::sqrt(double(n));
         return rows(d, log_mags(e, n, hi * 1e-6, hi), log_mags(e, n, hi * 1e-6, hi));
       }},
      {"tiny_subnormal", "magnitudes over 8 * denorm_min .. 1e3 * min normal; eps = 0 half of the time",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double lo = 8 * min_subnormal(d), hi = 1e3 * dtype_min_normal(d);
         Params p;
         if (e.chance(0.5)) p.emplace_back("eps", 0.0);
         return rows(d, log_mags(e, n, lo, hi), log_mags(e, n, lo, hi), std::move(p));
       }},
      {"mean_shifted", "a, b = 1e4 + N(0, 1)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return rows(d, normals(e, n, 1, 1e4), normals(e, n, 1, 1e4));
       }},
      {"equal_rows", "b = a: every d_i = eps; eps default or log-uniform in [1e-9, 1e-3]",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec a = normals(e, n, e.log_uniform(1e-3, 1e3));
         Params p;
         if (e.chance(0.5)) p.emplace_back("eps", e.log_uniform(1e-9, 1e-3));
         return rows(d, a, a, std::move(p));
       }},
  };
}

Error validate_pairwise(const Input& in) {
  return two_rows(in, "pairwise_distance takes two rows a [n], b [n]", {"eps"});
}

// ---- adam ------------------------------------------------------------------------------------------
Input adam_input(DType d, Vec p, Vec g, Vec m, Vec v, Params prm) {
  return gen::make_input(d, {vec(std::move(p)), vec(std::move(g)), vec(std::move(m)), vec(std::move(v))},
                         std::move(prm));
}
Params step_param(Entropy& e, size_t hi) { return {{"step", double(log_int(e, 1, hi))}}; }
Vec squares(Entropy& e, const Vec& g, double lo, double hi) {
  Vec v(g.size());
  for (size_t i = 0; i < g.size(); ++i) v[i] = g[i] * g[i] * e.log_uniform(lo, hi);
  return v;
}

// The update U = lr m^ / (sqrt(v^) + eps) as the target would form it, in long double.
long double adam_update(const oracle::AdamParams& q, double g, double m, double v) {
  const long double mp = q.beta1 * static_cast<long double>(m) + (1 - q.beta1) * static_cast<long double>(g);
  const long double vp = q.beta2 * static_cast<long double>(v) + (1 - q.beta2) * static_cast<long double>(g) * g;
  const long double bc1 = 1 - std::pow(static_cast<long double>(q.beta1), q.step);
  const long double bc2 = 1 - std::pow(static_cast<long double>(q.beta2), q.step);
  return q.lr * (mp / bc1) / (std::sqrt(vp / bc2) + q.eps);
}

std::vector<Regime> adam_regimes() {
  return {
      {"typical", "p ~ N(0, 1), g, m ~ s N, v = g^2 x [0.1, 10], s log-uniform in [1e-4, 10], step 1..1e4",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(1e-4, 10);
         Vec g = normals(e, n, s);
         return adam_input(d, normals(e, n), g, normals(e, n, s / 2), squares(e, g, 0.1, 10), step_param(e, 10000));
       }},
      {"zero_grad_tiny_v", "g = 0, v log-uniform in [1e-30, 1e-12], m ~ 1e-12..1e-6: eps sets the step",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec v = log_mags(e, n, 1e-30, 1e-12);
         for (auto& x : v) x = std::fabs(x);
         return adam_input(d, normals(e, n), Vec(n, 0.0), log_mags(e, n, 1e-12, 1e-6), std::move(v),
                           step_param(e, 10));
       }},
      {"cancel_update", "p = U (1 + 10^-c N): the step cancels the parameter",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(1e-4, 10), c = depth(e, d);
         Vec g = normals(e, n, s), m = normals(e, n, s / 2), v = squares(e, g, 0.1, 10), p(n);
         Input in = adam_input(d, p, g, m, v, step_param(e, 100));
         const auto q = oracle::adam_params(in);
         for (size_t i = 0; i < n; ++i) {
           const auto& x = in.args;
           in.args[0].values[i] = round_to(d, static_cast<double>(adam_update(q, x[1].values[i], x[2].values[i], x[3].values[i])) *
                                                  (1 + c * e.normal()));
         }
         return in;
       }},
      {"cancel_moment", "m = -(1 - b1) g / b1 (1 + 10^-c N): the new first moment cancels",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(1e-4, 10), c = depth(e, d);
         const double b1 = round_to(d, oracle::kAdamBeta1Default);
         Vec g = normals(e, n, s), m(n);
         for (size_t i = 0; i < n; ++i) m[i] = -(1 - b1) * g[i] / b1 * (1 + c * e.normal());
         return adam_input(d, normals(e, n), g, std::move(m), squares(e, g, 0.1, 10), step_param(e, 100));
       }},
      {"large", "g, m ~ 1e15 (f32) / 1e150 (f64), v ~ g^2, p ~ 1e3 N",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = (d == DType::f64 ? 1e150 : 1e15) * e.log_uniform(1e-2, 1);
         Vec g = normals(e, n, s);
         for (auto& x : g) x = clip4(x);
         return adam_input(d, normals(e, n, 1e3), g, normals(e, n, s / 4), squares(e, g, 0.1, 10), step_param(e, 1000));
       }},
      {"random_hyper", "lr in [1e-6, 1], beta1 in [0.5, 0.99], beta2 in [0.9, 0.99999], eps in [1e-12, 1e-4], step 1..1e6",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(1e-4, 10);
         Vec g = normals(e, n, s);
         Params p = step_param(e, 1000000);
         p.emplace_back("lr", e.log_uniform(1e-6, 1));
         p.emplace_back("beta1", e.uniform(0.5, 0.99));
         p.emplace_back("beta2", e.uniform(0.9, 0.99999));
         p.emplace_back("eps", e.log_uniform(1e-12, 1e-4));
         return adam_input(d, normals(e, n), g, normals(e, n, s / 2), squares(e, g, 0.1, 10), std::move(p));
       }},
      {"tiny", "g ~ 1e-17..1e-10 (f32) / 1e-150..1e-100 (f64) with g^2 normal, p tiny",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec g = d == DType::f64 ? log_mags(e, n, 1e-150, 1e-100) : log_mags(e, n, 1e-17, 1e-10);
         Vec m(n);
         for (size_t i = 0; i < n; ++i) m[i] = g[i] * e.normal();
         return adam_input(d, log_mags(e, n, 8 * min_subnormal(d), 1e-20), g, std::move(m), squares(e, g, 0.1, 10),
                           step_param(e, 100));
       }},
  };
}

Error validate_adam(const Input& in) {
  if (auto err = check_signature(in, {1, 1, 1, 1}, "adam takes rows p, g, m, v of one length",
                                 {"lr", "beta1", "beta2", "eps", "step"}))
    return err;
  const size_t n = in.args[0].values.size();
  for (const auto& t : in.args)
    if (t.values.size() != n) return "adam: p, g, m and v differ in length";
  for (double v : in.args[3].values)
    if (v < 0) return "adam: the second moment v must be >= 0";
  const auto q = oracle::adam_params(in);
  if (q.lr < 0) return "adam: lr must be >= 0";
  if (!(q.beta1 >= 0 && q.beta1 < 1) || !(q.beta2 >= 0 && q.beta2 < 1))
    return "adam: betas must lie in [0, 1) in the dtype";
  if (!(q.eps > 0)) return "adam: eps must be > 0 in the dtype";
  if (q.step < 1 || q.step > 0x1p24 || q.step != std::floor(q.step)) return "adam: step must be an integer in [1, 2^24]";
  return std::nullopt;
}

// ---- tolerances ------------------------------------------------------------------------------------
// All in ULPs at cond <= 1, for n = all input values (n >= the reduction length: log2 n bounds
// log2 of it). A pairwise sum of k terms errs by (7 + log2(k/8)) u sum |terms|, each product adds
// u: a dot product errs by <= (8 + log2 k) u sum |a b| = (4 + log2(k)/2) u cond |y| with cond's
// factor 2; an error of e u |y| is < e ulps, plus 1 for the rounding of the exact value.
double dot_tolerance(DType, size_t n) { return 5 + 0.5 * std::log2(double(n)); }

}  // namespace

std::vector<Family> linalg_families() {
  std::vector<Family> out;
  auto add = [&](std::string name, std::string summary, std::vector<Regime> regimes,
                 std::function<Error(const Input&)> validate, std::function<OracleResult(const Input&)> oracle,
                 std::function<double(DType, size_t)> tol, std::string desc,
                 std::function<std::vector<double>(const Input&)> native,
                 std::function<CestacOutput(const Input&, const CestacRequest&)> cestac) {
    Family f;
    f.name = name;
    f.summary = std::move(summary);
    f.regimes = std::move(regimes);
    f.validate = std::move(validate);
    f.oracle = std::move(oracle);
    f.tolerance_ulps = std::move(tol);
    f.cestac_margin_digits = 1.0;
    f.finite_outputs = true;
    Target t;
    t.id = name + "/cpu/stable";
    t.kind = TargetKind::reference;
    t.description = std::move(desc);
    t.dtypes = {DType::f64, DType::f32};
    t.native = std::move(native);
    t.cestac = std::move(cestac);
    f.targets.push_back(std::move(t));
    out.push_back(std::move(f));
  };
  add("dot", "y = sum_i a_i b_i; inputs a [n], b [n]; one output", dot_regimes(), validate_dot, oracle::dot,
      dot_tolerance, "rounded products, pairwise sum", op_native<DotStable>(), op_cestac<DotStable>());
  // Each c_ij is a dot product of length k <= n / 2: dot_tolerance holds.
  add("gemm", "C = A B; inputs A [m,k], B [k,n] row-major; output C [m,n]", gemm_regimes(), validate_gemm,
      oracle::gemm, dot_tolerance, "every output a pairwise dot product over k", op_native<GemmStable>(),
      op_cestac<GemmStable>());
  // Scores err by (K(d) + 1) u A_il (dot, then the scale), the shift x = S - max S by u |x|, exp
  // by 2u, Z by (K'(t) + 2) u, N by (K'(t) + 3) u sum P |V|, the division by u; K'(t) <= 7 +
  // log2 t is the pairwise sum's. Through the softmax Jacobian, P_il |x_il| <= ln(1/u) (P_il + u)
  // bounds the shift's share by ln(1/u) (cV + 1) u |O| (to first order), cV = sum P |V| / |O| >= 1.
  // With cond = cV + cS: error <= (2 (K'(t) + 3) + 2 ln(1/u)) cond u |O| + the score term
  // (K(d) + 1)/2 cS u |O|, which the first coefficient exceeds; + 1 for rounding:
  // tol = 21 + 2 log2 n + 2 ln(1/u).
  add("attention",
      "O = softmax(scale Q K^T [causal mask j > i]) V, one head; inputs Q [s,d], K [t,d], V [t,dv]; params scale "
      "(default 1/sqrt(d)), causal (0 or 1, needs s = t); output O [s,dv]",
      attention_regimes(), validate_attention, oracle::attention,
      [](DType d, size_t n) { return 21 + 2 * std::log2(double(n)) + 2 * std::log(1 / dtype_unit_roundoff(d)); },
      "pairwise-dot scores, max-shifted exp, pairwise weighted sum, one division", op_native<AttentionStable>(),
      op_cestac<AttentionStable>());
  // With K = 8 + log2(n/2) the dot bound: the scaled dot errs by (K + 2) u sum |a^ b^| <= (K + 2)
  // (cond/2 + 1) u |y| (triangle inequality on cond's terms), the norms by ((K + 2)/2 + 1) u
  // each, their product, the division and (below eps) rho's 4 roundings by 6u more:
  // <= (2.5 K + 16) u max(1, cond) |y|; + 1 for rounding: tol = 35 + 2.5 log2 n.
  add("cosine_similarity",
      "y = a.b / max(|a|_2 |b|_2, eps); inputs a [n], b [n]; param eps (default 1e-8, in [0, 1]); one output",
      cosine_regimes(), validate_cosine, oracle::cosine_similarity,
      [](DType, size_t n) { return 35 + 2.5 * std::log2(double(n)); },
      "rows scaled by their max |.|, pairwise dot and norms, eps compared without overflow",
      op_native<CosineSimilarityStable>(), op_cestac<CosineSimilarityStable>());
  // d_i errs by u (|a_i| + |b_i|) + u |d_i|: u (cond + 1) |y| through dy = sum d_i dd_i / y; the
  // scaled norm adds (K'(n) + 2)/2 + 2 u, K'(n) <= 7 + log2 n: <= (8.5 + log2(n)/2) u max(1, cond)
  // |y|; + 1 for rounding: tol = 10 + log2(n)/2.
  add("pairwise_distance",
      "y = |a - b + eps|_2 (PyTorch's pairwise_distance, p = 2); inputs a [n], b [n]; param eps (default 1e-6); "
      "one output",
      pairwise_regimes(), validate_pairwise, oracle::pairwise_distance,
      [](DType, size_t n) { return 10 + 0.5 * std::log2(double(n)); },
      "(a - b) + eps, norm scaled by max |d_i|, pairwise sum of squares", op_native<PairwiseDistanceStable>(),
      op_cestac<PairwiseDistanceStable>());
  // U errs by (2 kappa + 16.5) u |U|, kappa = (|b1 m| + |(1 - b1) g|) / |m'| (m' cancels; the
  // bias corrections via expm1/log1p 5u each, sqrt halves v^'s 9u); kappa |U| <= cond |p'| + |U|
  // and |U| <= |p| + |p'| <= (cond + 1) |p'|, so with p - U's rounding the error is <= 40 u
  // max(1, cond) |p'|; + 1 for rounding: tol = 41.
  add("adam",
      "p' = p - lr m^ / (sqrt(v^) + eps), m^ = (b1 m + (1 - b1) g) / (1 - b1^t), v^ = (b2 v + (1 - b2) g^2) / "
      "(1 - b2^t); inputs p, g, m, v [n] (v >= 0); params lr (1e-3), beta1 (0.9), beta2 (0.999), eps (1e-8), step "
      "(1); output p' [n]",
      adam_regimes(), validate_adam, oracle::adam, [](DType, size_t) { return 41.0; },
      "PyTorch's formula; bias corrections as -expm1(t log1p(-(1 - beta)))", op_native<AdamStable>(),
      op_cestac<AdamStable>());
  return out;
}

}  // namespace stabfuzz::targets
