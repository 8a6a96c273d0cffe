// The normalization group: log_softmax, cross_entropy, layer/rms/batch norm as family contracts.
#include "oracles/normalization.h"

#include <cmath>

#include "families/all_families.h"
#include "families/row_families.h"
#include "stabfuzz/params.h"
#include "targets/cpu/normalization.h"

namespace stabfuzz::families {
namespace {

using namespace targets;  // NOLINT: the reference kernels this file registers

using namespace row_gen;  // NOLINT: the group's shared vocabulary

// The largest magnitude a regime draws by dtype: f16 holds values up to 65504 (32752 for the
// families whose x - mean must stay finite); bf16 has f32's range.
double cap(DType d, double v) { return d == DType::f16 ? std::min(v, 2e4) : v; }

// Magnitudes whose squares overflow or underflow the dtype, below max / 2^26 in f64 and f32 (and
// 4 sigma below 32752 in f16: 300..2000, squares above 65504; 1e-4..3e-3, squares subnormal).
double huge_or_tiny(Entropy& e, DType d) {
  if (d == DType::f16) return e.chance(0.5) ? e.log_uniform(300, 2000) : e.log_uniform(1e-4, 3e-3);
  const bool f64 = d == DType::f64;
  return e.chance(0.5) ? (f64 ? e.log_uniform(1e160, 1e290) : e.log_uniform(1e20, 1e28))
                       : (f64 ? e.log_uniform(1e-290, 1e-160) : e.log_uniform(1e-28, 1e-20));
}

std::vector<double> mixed_row(Entropy& e, DType) { return log_uniforms(e, 1e-6, 1e3, true); }

std::vector<double> standard_row(Entropy& e, DType) {
  const size_t len = row_length(e);  // one draw per statement (regimes.h)
  return normals(e, len, 0, e.log_uniform(1e-2, 1e2));
}

std::vector<double> huge_tiny_row(Entropy& e, DType d) {
  const size_t len = row_length(e);  // one draw per statement (regimes.h)
  return normals(e, len, 0, huge_or_tiny(e, d));
}

std::vector<double> outlier_col(Entropy& e, size_t n, DType d) {
  auto v = normals(e, n, 0, 1);
  const auto k = 1 + e.below(3);
  for (uint64_t i = 0; i < k; ++i) v[e.below(n)] = sign(e) * e.log_uniform(1e2, cap(d, 1e6));
  return v;
}

std::vector<double> outlier_row(Entropy& e, DType d) { return outlier_col(e, row_length(e), d); }

// c + noise far below eps (relative 1e-10..1e-5), a quarter of the time exactly constant.
std::vector<double> near_constant_col(Entropy& e, size_t n, DType) {
  const double c = sign(e) * e.log_uniform(1e-3, 1e4);
  return normals(e, n, c, e.chance(0.25) ? 0.0 : std::fabs(c) * e.log_uniform(1e-10, 1e-5));
}

// eps 1e-12 is 0 in f16: 1e-7 (2 subnormal quanta) is its smallest choice there.
Params eps_choice(Entropy& e, DType d) {
  if (e.chance(0.5)) return {};
  return {{"eps", e.chance(0.5) ? (d == DType::f16 ? 1e-7 : 1e-12) : 1e-3}};
}

// ---- log_softmax and cross_entropy ------------------------------------------------------------

// One logit with a gap of 5..1000 over N(0, 1) others: probabilities near 1 and near 0.
std::vector<double> dominant_row(Entropy& e, DType) {
  auto v = normals(e, std::max<size_t>(2, row_length(e)), 0, 1);
  v[e.below(v.size())] = e.log_uniform(5, 1000);
  return v;
}

std::vector<Regime> log_softmax_regimes() {
  return {
      on_row("small", "logits N(0, s^2), s log-uniform in [1e-3, 10]",
             [](Entropy& e, DType) {
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               return normals(e, len, 0, e.log_uniform(1e-3, 10));
             }),
      on_row("near_overflow", "logits around the exp overflow threshold (709.8 f64, 88.7 f32)",
             [](Entropy& e, DType d) {
               const double t = regime::exp_overflow_threshold(d);
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               return normals(e, len, t, e.log_uniform(0.01, 10));
             }),
      on_row("all_very_negative", "every logit below the exp underflow threshold (-708.4, -87.3)",
             [](Entropy& e, DType d) {
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               auto v = normals(e, len, 0, e.log_uniform(0.01, 20));
               const double c = regime::exp_underflow_threshold(d) * e.uniform(1.0, 1.5);
               for (auto& x : v) x = c - std::fabs(x);
               return v;
             }),
      on_row("mean_shifted", "+-2000 or +-1e4 plus s N(0, 1), s log-uniform in [0.1, 10]",
             [](Entropy& e, DType) {
               const double c = sign(e) * (e.chance(0.5) ? 2000 : 1e4);
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               return normals(e, len, c, e.log_uniform(0.1, 10));
             }),
      on_row("mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs", mixed_row),
      on_row("dominant", "one logit 5..1000 above N(0, 1) others: probabilities near 1 and 0",
             dominant_row),
      on_row("near_constant", "c + c 1e-9..1e-4 N(0, 1), |c| log-uniform in 1e-3..1e4",
             [](Entropy& e, DType) {
               const double c = sign(e) * e.log_uniform(1e-3, 1e4);
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               return normals(e, len, c, std::fabs(c) * e.log_uniform(1e-9, 1e-4));
             }),
  };
}

// log_softmax's first five regimes with a random target, and dominant rows with the target at
// or away from the dominant logit.
std::vector<Regime> cross_entropy_regimes() {
  auto r = log_softmax_regimes();
  r.resize(5);
  for (auto& g : r) {
    g.description += "; random target";
    g.sample = [s = g.sample](Entropy& e, DType d) {
      Input in = s(e, d);
      in.set_param("target", static_cast<double>(e.below(in.args[0].values.size())));
      return in;
    };
  }
  for (bool correct : {true, false})
    r.push_back({correct ? "confident_correct" : "confident_wrong",
                 correct ? "one logit 5..1000 above the rest is the target: loss near 0"
                         : "one logit 5..1000 above the rest, another is the target: large loss",
                 [correct](Entropy& e, DType d) {
                   auto v = dominant_row(e, d);
                   const size_t k = argmax(v);
                   const size_t t = correct ? k : (k + 1 + e.below(v.size() - 1)) % v.size();
                   return one_row(d, std::move(v), {{"target", static_cast<double>(t)}});
                 }});
  return r;
}

// Tolerance at cond <= 1, in ULPs (an error of k u |y| is at most k ULPs). k = argmax, m2 the
// largest other logit, v = sum_{j != k} e^(x_j - m2) in [1, n), t = e^((m2 - m) + log v),
// l = log1p(t). v errs by g + 1 u (g = 7 + log2(n/8) <= 4 + log2 n for the pairwise sum, exp) and
// by u sum_j s_j |x_j - m2| (<= u cond_k |y_k|, or <= u log n for i != k) from the rounded
// x_j - m2; the argument of exp carries 2 u (m - m2 + log v); exp, log1p, x_i - m and the final
// subtraction 1 u each (y_i adds two terms of one sign). For i != k, |y_i| >= max(log 2, m - m2,
// log v) turns the absolute terms into 2 + 2 log2 n; for i = k, m - m2 <= 2 cond_k when t <= 1,
// else m - m2 < log v <= log n. Total <= 9 + 3 log2 n, times max(1, cond); + 1 for the rounding
// of the exact value. The same bound holds in f16 and bf16 (per-op rounding) in units of their u.
// Measured max_error_over_tolerance (summary.json, `stabfuzz --target F --impl F/cpu/stable --seed
// S --runs 300`, S = 1..3): log_softmax 0.084 f64, 0.077 f32, 0.077 f16, 0.079 bf16; cross_entropy
// 0.077 in all four.
double log_softmax_tolerance(DType, size_t n) {
  return 10.0 + 3.0 * std::log2(static_cast<double>(n));
}

// ---- layer_norm, rms_norm, batch_norm ---------------------------------------------------------

std::vector<Regime> layer_norm_regimes() {
  return {
      on_row("standard", "N(0, s^2), s log-uniform in [1e-2, 1e2]", standard_row),
      on_row("mean_shifted",
             "+-2000, +-1e4 or +-1e3..1e6 (2e4 f16) plus s N(0, 1), s log-uniform in 0.1..10",
             [](Entropy& e, DType d) {
               const double c =
                   e.chance(0.6) ? (e.chance(0.5) ? 2000 : 1e4) : e.log_uniform(1e3, cap(d, 1e6));
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               const double mu = sign(e) * c;
               return normals(e, len, mu, e.log_uniform(0.1, 10));
             }),
      {"near_constant",
       "c + noise with variance far below eps, or constant; eps 1e-5, 1e-12 (1e-7 f16), 1e-3",
       [](Entropy& e, DType d) {
         auto col = near_constant_col(e, row_length(e), d);  // one draw per statement (regimes.h)
         return one_row(d, std::move(col), eps_choice(e, d));
       }},
      on_row("outliers", "N(0, 1) with 1..3 values of magnitude 1e2..1e6 (2e4 f16)", outlier_row),
      on_row("mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs", mixed_row),
      on_row("huge_tiny", "s N(0, 1), s so large or small that x^2 over- or underflows",
             huge_tiny_row),
      on_row("two_values", "two values a, b (|b - a| from 1e-6 to 1 relative) in random order",
             [](Entropy& e, DType) {
               const double a = sign(e) * e.log_uniform(1e-3, 1e4);
               const double b = a * (1 + sign(e) * e.log_uniform(1e-6, 1));
               std::vector<double> v(row_length(e));
               for (auto& x : v) x = e.chance(0.5) ? a : b;
               return v;
             }),
  };
}

std::vector<Regime> rms_norm_regimes() {
  return {
      on_row("standard", "N(0, s^2), s log-uniform in [1e-2, 1e2]", standard_row),
      on_row("mean_shifted", "+-1e4 plus N(0, 1): every output near +-1",
             [](Entropy& e, DType) {
               const size_t len = row_length(e);  // one draw per statement (regimes.h)
               return normals(e, len, sign(e) * 1e4, 1);
             }),
      {"near_eps",
       "N(0, s^2), s log-uniform in 1e-6..1e-2: mean square around eps (1e-6, 1e-12 or 1e-7 f16)",
       [](Entropy& e, DType d) {
         Params p = e.chance(0.3) ? Params{{"eps", d == DType::f16 ? 1e-7 : 1e-12}} : Params{};
         const size_t len = row_length(e);  // one draw per statement (regimes.h)
         return one_row(d, normals(e, len, 0, e.log_uniform(1e-6, 1e-2)), p);
       }},
      on_row("huge_tiny", "s N(0, 1), s so large or small that x^2 over- or underflows",
             huge_tiny_row),
      on_row("sparse", "N(0, 1) with 50..99% exact zeros",
             [](Entropy& e, DType) { return with_zeros(e, normals(e, row_length(e), 0, 1)); }),
      on_row("outliers", "N(0, 1) with 1..3 values of magnitude 1e2..1e6 (2e4 f16)", outlier_row),
      on_row("mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs", mixed_row),
  };
}

// [n, c] with n <= 512 and n c <= 16384 (the exact condition costs O(n log n) per channel);
// column k drawn by `col(e, n)`.
template <class Col>
Input batch(Entropy& e, DType d, Col col, Params p = {}) {
  const size_t n = row_length(e, 512), c = row_length(e, std::min<size_t>(64, 16384 / n));
  std::vector<double> v(n * c);
  for (size_t k = 0; k < c; ++k) {
    const auto x = col(e, n, d);
    for (size_t i = 0; i < n; ++i) v[i * c + k] = x[i];
  }
  const auto rows = static_cast<int64_t>(n), cols = static_cast<int64_t>(c);
  return regime::make_input(d, {Tensor{{rows, cols}, std::move(v)}}, std::move(p));
}

std::vector<double> standard_col(Entropy& e, size_t n, DType) {
  const double mu = e.normal();  // one draw per statement (regimes.h)
  return normals(e, n, mu, e.log_uniform(1e-2, 1e2));
}

std::vector<double> shifted_col(Entropy& e, size_t n, DType d) {
  const double mu = sign(e) * e.log_uniform(1e3, cap(d, 1e5));  // one draw per statement
  return normals(e, n, mu, e.log_uniform(0.1, 10));
}

std::vector<double> constant_col(Entropy& e, size_t n, DType d) {
  if (e.chance(0.5)) return normals(e, n, 0, 1);
  const bool f16 = d == DType::f16;
  return std::vector<double>(n, sign(e) * e.log_uniform(f16 ? 1e3 : 1e7, f16 ? 3e4 : 1e9));
}

// f16 channels start at scale 1e-3: below 1.2e-4 (= denorm_min / u) a channel's centred values
// round to the subnormal grid by more than its condition number allows (y = c / sqrt(eps)
// magnifies half a quantum of c 300-fold).
std::vector<double> mixed_col(Entropy& e, size_t n, DType d) {
  const double lo = d == DType::f16 ? 1e-3 : 1e-6;
  return e.chance(0.3) ? outlier_col(e, n, d) : normals(e, n, 0, e.log_uniform(lo, 1e3));
}

std::vector<Regime> batch_norm_regimes() {
  return {
      {"standard", "[n, c], channels N(m, s^2), m N(0, 1), s log-uniform in [1e-2, 1e2]",
       [](Entropy& e, DType d) { return batch(e, d, standard_col); }},
      {"mean_shifted", "channels +-1e3..1e5 (2e4 f16) plus s N(0, 1), s log-uniform in [0.1, 10]",
       [](Entropy& e, DType d) { return batch(e, d, shifted_col); }},
      {"constant_channel",
       "half the channels constant, |x| in 1e7..1e9 (1e3..3e4 f16; exact 0), others N(0, 1)",
       [](Entropy& e, DType d) { return batch(e, d, constant_col); }},
      {"near_constant",
       "channels c + noise far below eps, or constant; eps 1e-5, 1e-12 (1e-7 f16) or 1e-3",
       [](Entropy& e, DType d) {
         auto p = eps_choice(e, d);
         return batch(e, d, near_constant_col, std::move(p));
       }},
      {"mixed_scales",
       "channels of scale log-uniform in 1e-6..1e3 (1e-3..1e3 f16), some with outliers",
       [](Entropy& e, DType d) { return batch(e, d, mixed_col); }},
      {"huge_tiny", "channels s N(0, 1), s so large or small that x^2 over- or underflows",
       [](Entropy& e, DType d) {
         const double s = huge_or_tiny(e, d);
         return batch(e, d, [s](Entropy& e, size_t n, DType) {
           return normals(e, n, 0, s * e.uniform(0.5, 2));
         });
       }},
  };
}

// Tolerance at cond <= 1, in ULPs, with g = 7 + log2(n/8) <= 4 + log2 n the pairwise-sum bound.
// Corrected two-pass: the correction mu2 errs by (g + 2) u mean|d| (the sum, / n, and the scaling
// of every term by 1 / max|x| that keeps f16 sums finite), which moves y_i by that over
// |x_i - mu|; mean|d| <= 2 mean|x| and cond_i |x_i - mu| >= mean|x| for outputs at the mean (and
// mean|d| <= |x_i - mu| for |y_i| >= 1), so 2 (g + 2) u max(1, cond_i). The rounding of d = x - mu1
// is an input perturbation of u |x_j - mu1| (y is shift invariant): 2 u max(1, cond_i). c_i and
// the division 1 u each, sigma (g + 5) u / 2 + 2 u (sum of squares, eps terms, sqrt, scale).
// Total 2.5 g + 12.5 <= 22.5 + 2.5 log2 n; + 0.5 for the rounding of the exact value, in units of
// each dtype's u (f16 and bf16 round per op). Subnormal f16 channels (scale < 1.2e-4 = denorm_min /
// u) escape it: half a quantum of c, over sqrt(eps), exceeds what cond allows; regimes keep f16
// channels above 1e-3. batch_norm receives n = n c, which only loosens its per-channel sums.
// Measured (`stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3): layer_norm
// 0.13 f64, 0.10 f32, 0.095 f16, 0.11 bf16; batch_norm 0.11 f64, 0.096 f32, 0.091 f16, 0.097 bf16.
// The same kernel with mu2 folded into a rounded mean (plain two-pass) measured 85 (f64) and
// 522 (f32), seed 1, on mean_shifted rows: small-n rows 1e4 + N(0, 1) whose condition is O(1).
double layer_norm_tolerance(DType, size_t n) {
  return 23.0 + 2.5 * std::log2(static_cast<double>(n));
}

// rms_norm: q = mean((x/S)^2) + (eps/S)/S errs by (g + 5) u (quotient, square, sum, / n, the eps
// term, the addition; all terms >= 0), sqrt halves that and adds 1, the scale S 1, the division
// 1: (g + 5)/2 + 3 <= 7.5 + log2(n)/2; + 0.5 for the rounding of the exact value.
// Measured (`stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3): 0.33 f64,
// 0.25 f32, 0.24 f16, 0.24 bf16 (2-3 ULPs at small n).
double rms_norm_tolerance(DType, size_t n) { return 8.0 + 0.5 * std::log2(static_cast<double>(n)); }

// ---- assembly ---------------------------------------------------------------------------------

// The target index of cross_entropy, beyond what a Contract checks.
Msg check_target(const Input& in) {
  const double t = in.param("target", 0);
  if (!(t >= 0 && t < static_cast<double>(in.args[0].values.size()) && t == std::trunc(t)))
    return "target must be a class index in [0, n)";
  return std::nullopt;
}

}  // namespace

std::vector<Family> normalization_families() {
  // Bounded logits keep x_i - m finite: every result is finite.
  const TensorSpec logits{"logits", -INFINITY, INFINITY, true}, values{"values"};
  const TensorSpec bounded{"values", -INFINITY, INFINITY, true};
  std::vector<Family> v;
  v.push_back(family<LogSoftmaxStable>(
      {"log_softmax", {logits}}, "y_i = x_i - log sum_j exp(x_j) over one finite row x [n]",
      log_softmax_regimes(), oracle::log_softmax, log_softmax_tolerance,
      "max subtraction, log1p of the pairwise sum of the other exps"));
  v.push_back(family<CrossEntropyStable>(
      {"cross_entropy", {logits}, 1, {"target"}},
      "loss = -log_softmax(x)[target], logits x [n], param target (default 0)",
      cross_entropy_regimes(), oracle::cross_entropy, log_softmax_tolerance,
      "(m - x_t) + log1p of the pairwise sum of the other exps", check_target));
  v.push_back(family<LayerNormStable>(
      {"layer_norm", {bounded}, 1, {"eps"}, params::kLayerNormEps},
      "y = (x - mean) / sqrt(var + eps), row x [n], biased var, param eps (1e-5)",
      layer_norm_regimes(), oracle::layer_norm, layer_norm_tolerance,
      "corrected two-pass mean, scaled pairwise sum of squares"));
  v.push_back(family<RmsNormStable>(
      {"rms_norm", {values}, 1, {"eps"}, params::kRmsNormEps},
      "y = x / sqrt(mean(x^2) + eps), row x [n], param eps (default 1e-6)", rms_norm_regimes(),
      oracle::rms_norm, rms_norm_tolerance, "scaled pairwise sum of squares"));
  v.push_back(family<BatchNormStable>(
      {"batch_norm", {bounded}, 2, {"eps"}, params::kBatchNormEps},
      "training-mode batch norm of x [n, c] row-major: each channel by its batch mean and biased "
      "var, param eps (default 1e-5); output [n, c]",
      batch_norm_regimes(), oracle::batch_norm, layer_norm_tolerance,
      "per channel: corrected two-pass mean, scaled sum of squares"));
  return v;
}

}  // namespace stabfuzz::families
