// The similarity families cosine_similarity and pairwise_distance: regimes, tolerances, references.
#include <algorithm>
#include <cmath>

#include "families/all_families.h"
#include "families/linalg_gen.h"
#include "oracles/linalg.h"
#include "stabfuzz/op.h"
#include "targets/cpu/linalg.h"

namespace stabfuzz::families {
namespace {

using namespace targets;  // NOLINT: the reference kernels this file registers

using namespace linalg_gen;  // NOLINT: the group's shared vocabulary

// ---- tolerances ---------------------------------------------------------------------------------
// The bounds set the thresholds, in units of each dtype's u (f16 and bf16 round per op; f16's
// cosine forms rho with sqrt(eps), one rounding more, inside the 6u allowed). Measured worst error
// / tolerance over `stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3
// (summary.json max_error_over_tolerance), f64 / f32 / f16 / bf16: cosine_similarity 0.083 / 0.061
// / 0.069 / 0.047, pairwise_distance 0.133 / 0.182 / 0.143 / 0.167.
double cosine_tolerance(DType, size_t n) { return 35 + 2.5 * std::log2(double(n)); }
// d_i errs by u (|a_i| + |b_i|) + u |d_i|: u (cond + 1) |y| through dy = sum d_i dd_i / y; the
// scaled norm adds ((K'(n) + 2)/2 + 2) u, K'(n) <= 7 + log2 n: <= (8.5 + log2(n)/2) u max(1, cond)
// |y|; + 1 for rounding.
double pairwise_tolerance(DType, size_t n) { return 10 + 0.5 * std::log2(double(n)); }

// ---- cosine_similarity and pairwise_distance ----------------------------------------------------
std::vector<Regime> cosine_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3] ([0.05, 1] f16)",
       random_rows},
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
      {"huge_norms",
       "norms in [1e19, 1e37] (f32) / [1e150, 1e307] (f64) / [300, 1.6e4] (f16): |a| |b| overflows",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         Vec r[2] = {normals(e, n), normals(e, n)};
         for (auto& v : r) {
           const double norm =
               e.log_uniform(by_range(d, 1e150, 1e19, 300), by_range(d, 1e307, 1e37, 1.6e4));
           for (auto& x : v) x = clip4(x) * norm / std::sqrt(double(n));
         }
         return rows(d, std::move(r[0]), std::move(r[1]));
       }},
      {"tiny_subnormal",
       "a subnormal or tiny, b large: |a| |b| within 1e+-6 of eps (both branches; f16 passes eps "
       "= 1e-4, as its default 1e-8 is 0 there)",
       [](Entropy& e, DType d) {
         Input in = tiny_rows(e, d);
         double na = 0;
         for (double x : in.args[0].values) na = std::hypot(na, x);
         const bool f16 = d == DType::f16;
         const double eps = f16 ? 1e-4 : params::kCosineEpsDefault;
         const double scale =
             std::min(by_range(d, 1e300, 1e37, 1.6e4), e.log_uniform(1e-6, 1e6) * eps / na);
         for (auto& x : in.args[1].values) x = clip4(e.normal()) * scale;
         return regime::make_input(d, std::move(in.args), f16 ? Params{{"eps", eps}} : Params{});
       }},
      {"near_eps",
       "eps in [1e-12, 1e-2] ([1e-6, 1e-2] f16), |a| |b| = eps e^(N/2): both sides of the max",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double eps = e.log_uniform(by_range(d, 1e-12, 1e-12, 1e-6), 1e-2),
                      target = eps * std::exp(0.5 * e.normal());
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
      {"mean_shifted", "a = 1e4 + N(0, 1) (f16: 2 + 0.01 N), b = N(0, 1) or like a", shifted_rows},
  };
}

std::vector<Regime> pairwise_regimes() {
  return {
      {"random", "a, b ~ N(0, s^2), one scale per row, log-uniform in [1e-3, 1e3] ([0.05, 1] f16)",
       random_rows},
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
         const double c = depth(e, d), eps = round_to(d, params::kPairwiseEpsDefault);
         Vec a = normals(e, n, e.log_uniform(1e-3, 1e2)), b(n);
         for (size_t i = 0; i < n; ++i) b[i] = a[i] + eps * (1 + c * e.normal());
         return rows(d, std::move(a), std::move(b));
       }},
      {"huge",
       "magnitudes up to 1e36 (f32) / 1e305 (f64) / 2e4 (f16) over sqrt(n): squares overflow",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double hi = by_range(d, 1e305, 1e36, 2e4) / std::sqrt(double(n));
         Vec a = log_mags(e, n, hi * 1e-6, hi);  // one draw per statement (regimes.h)
         return rows(d, std::move(a), log_mags(e, n, hi * 1e-6, hi));
       }},
      {"tiny_subnormal", "magnitudes over 8 denorm_min .. 1e3 min normal; eps = 0 half the time",
       [](Entropy& e, DType d) {
         Input in = tiny_rows(e, d);
         if (e.chance(0.5)) in.set_param("eps", 0.0);
         return in;
       }},
      {"mean_shifted", "a = 1e4 + N(0, 1) (f16: 2 + 0.01 N), b = N(0, 1) or like a", shifted_rows},
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

}  // namespace

std::vector<Family> similarity_families() {
  std::vector<Family> out;
  out.push_back(reference_family<CosineSimilarityStable>(
      "cosine_similarity",
      "y = a.b / max(|a|_2 |b|_2, eps); inputs a [n], b [n]; param eps (default 1e-8; 0 or in "
      "[1e-30, 1]); one output",
      cosine_regimes(), oracle::validate_cosine_similarity, oracle::cosine_similarity,
      cosine_tolerance,
      "rows scaled by their max |.|, pairwise dot and norms, overflow-free eps test"));
  out.push_back(reference_family<PairwiseDistanceStable>(
      "pairwise_distance",
      "y = |a - b + eps|_2 (PyTorch's pairwise_distance, p = 2); inputs a [n], b [n]; param eps "
      "(default 1e-6); one output",
      pairwise_regimes(), oracle::validate_pairwise_distance, oracle::pairwise_distance,
      pairwise_tolerance, "(a - b) + eps, norm scaled by max |d_i|, pairwise sum of squares"));
  return out;
}

}  // namespace stabfuzz::families
