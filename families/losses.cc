// The loss group: bce_with_logits, kl_div and entropy, as family contracts.
#include <cmath>

#include "families/all_families.h"
#include "families/row_families.h"
#include "oracles/normalization.h"
#include "targets/cpu/normalization.h"

namespace stabfuzz::families {
namespace {

using namespace targets;  // NOLINT: the reference kernels this file registers

using namespace row_gen;  // NOLINT: the group's shared vocabulary

struct BceRegime {
  const char* name;
  const char* description;
  double (*x)(Entropy&, DType);
  double (*z)(Entropy&, double x);
};

double any_target(Entropy& e, double) {
  const double r = e.uniform();
  return r < 0.35 ? 0.0 : (r < 0.7 ? 1.0 : e.uniform());
}

const BceRegime kBceRegimes[] = {
    {"saturated", "|x| log-uniform in 10..1e4 (sigmoid saturated), targets 0, 1 or uniform",
     [](Entropy& e, DType) { return sign(e) * e.log_uniform(10, 1e4); }, any_target},
    {"soft_targets", "x N(0, 16), targets uniform in [0, 1]",
     [](Entropy& e, DType) { return 4 * e.normal(); },
     [](Entropy& e, double) { return e.uniform(); }},
    {"near_zero_logits", "|x| log-uniform in 1e-8..0.1, targets 0, 1 or uniform",
     [](Entropy& e, DType) { return sign(e) * e.log_uniform(1e-8, 0.1); }, any_target},
    {"targets_near_0_1",
     "targets t or 1 - t (t 1e-7..0.1) agreeing with x, |x| 1..100: x - x z cancels",
     [](Entropy& e, DType) { return sign(e) * e.log_uniform(1, 100); },
     [](Entropy& e, double x) {
       const double t = e.log_uniform(1e-7, 0.1);
       return x > 0 ? 1 - t : t;
     }},
    {"huge_logits",
     "|x| log-uniform from 1e4 to 1e30 (f32) / 1e300 (f64) / 6e4 (f16), targets 0, 1 or uniform",
     [](Entropy& e, DType d) {
       return sign(e) *
              e.log_uniform(1e4, d == DType::f64 ? 1e300 : (d == DType::f16 ? 6e4 : 1e30));
     },
     any_target},
    {"mixed_scales", "|x| log-uniform over 1e-6..1e3, random signs, targets 0, 1 or uniform",
     [](Entropy& e, DType) { return sign(e) * e.log_uniform(1e-6, 1e3); }, any_target},
};

std::vector<Regime> bce_regimes() {
  std::vector<Regime> r;
  for (const auto& k : kBceRegimes)
    r.push_back({k.name, k.description, [k](Entropy& e, DType d) {
                   const size_t n = row_length(e);
                   std::vector<double> x(n), z(n);
                   for (size_t i = 0; i < n; ++i) z[i] = k.z(e, x[i] = k.x(e, d));
                   return two_rows(d, std::move(x), std::move(z));
                 }});
  return r;
}

// |x z| rounds by u |x z| <= u cond |l|; max(x, 0) - x z >= 0 and log1p(exp(-|x|)) >= 0 (exp
// 1 u, log1p 1 u and propagates at most 1 u), the two roundings of the sums 1 u each:
// 4 u max(1, cond); + 1 for libm's functions rounding within 1 ulp, + 0.5 for the exact value's.
// The same in f16 and bf16 units; the oracle decides A + B where A is a midpoint of the format.
// Measured (`stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3): 0.29 f64,
// 0.33 f32, 0.24 f16, 0.33 bf16 (2 ULPs).
double bce_tolerance(DType, size_t) { return 6.0; }

// Probabilities: softmax of N(0, s^2) logits, rounded (they need not sum to 1 exactly).
std::vector<double> probs(Entropy& e, size_t n) {
  return softmax_of(normals(e, n, 0, e.log_uniform(0.1, 10)));
}

// log of p as the dtype holds it; a p that rounds to 0 gets the log of the smallest normal.
double dtype_log(DType d, double p) {
  return std::log(std::max(round_to(d, p), dtype_min_normal(d)));
}

std::vector<double> log_probs(Entropy& e, size_t n) {
  auto q = probs(e, n);
  for (auto& x : q) x = std::log(std::max(x, 1e-300));
  return q;
}

// p with one entry near 1 and the rest tiny (1e-30..1e-5 of it) or zero.
std::vector<double> peaked(Entropy& e, size_t n) {
  std::vector<double> p(n);
  for (auto& x : p) x = e.chance(0.2) ? 0.0 : e.log_uniform(1e-30, 1e-5);
  p[e.below(n)] = 1;
  double s = 0;
  for (double x : p) s += x;
  for (auto& x : p) x /= s;
  return p;
}

// logq = log p + shift(e, d), p softmax of N(0, s^2).
template <class Shift>
Input logq_near_p(Entropy& e, DType d, Shift shift) {
  auto p = probs(e, row_length(e));
  std::vector<double> lq(p.size());
  for (size_t i = 0; i < p.size(); ++i) lq[i] = dtype_log(d, p[i]) + shift(e);
  return two_rows(d, std::move(lq), std::move(p));
}

// logq softmax of N(0, s^2) logits and p from `pf`.
Input kl_input(Entropy& e, DType d, std::vector<double> (*pf)(Entropy&, size_t)) {
  const size_t n = row_length(e);
  auto lq = log_probs(e, n);
  return two_rows(d, std::move(lq), pf(e, n));
}

std::vector<Regime> kl_div_regimes() {
  return {
      {"random", "p and q softmax of N(0, s^2) logits",
       [](Entropy& e, DType d) { return kl_input(e, d, probs); }},
      {"close", "logq = log p + delta N(0, 1), delta log-uniform in 1e-8..1e-2: KL near 0",
       [](Entropy& e, DType d) {
         const double s = e.log_uniform(1e-8, 1e-2);
         return logq_near_p(e, d, [s](Entropy& e) { return s * e.normal(); });
       }},
      {"equal", "logq = log p rounded to the dtype: KL at the rounding level, cond ~ 1/u",
       [](Entropy& e, DType d) { return logq_near_p(e, d, [](Entropy&) { return 0.0; }); }},
      {"shifted_logq",
       "logq = log p - c, c log-uniform in 1e-6..1e3: KL = c sum p, log p - logq cancels",
       [](Entropy& e, DType d) {
         const double c = e.log_uniform(1e-6, 1e3);
         return logq_near_p(e, d, [c](Entropy&) { return -c; });
       }},
      {"peaked", "p near one-hot (others 1e-30..1e-5 or 0), q softmax of N(0, s^2)",
       [](Entropy& e, DType d) { return kl_input(e, d, peaked); }},
      {"sparse", "p with 50..99% exact zeros (0 log 0 = 0), q softmax of N(0, s^2)",
       [](Entropy& e, DType d) {
         return kl_input(e, d, [](Entropy& e, size_t n) { return with_zeros(e, probs(e, n)); });
       }},
      {"very_negative_logq", "logq log-uniform in -1e4..-10, p softmax of N(0, s^2)",
       [](Entropy& e, DType d) {
         auto lq = log_uniforms(e, 10, 1e4, false);
         for (auto& x : lq) x = -x;
         auto p = probs(e, lq.size());
         return two_rows(d, std::move(lq), std::move(p));
       }},
  };
}

// With N = sum p_i (|D_i + 1| + |logq_i|) (= cond |y|), D_i = log p_i - logq_i, g = 7 + log2(n/8):
// the error is <= u [sum p_i |log p_i| + (2 + g) sum |t_i|] (log, subtraction and product 1 u
// each, the sum g u). Since |D + 1| + |D| >= 1, sum |t_i| <= 2 N + |y| and sum p_i |log p_i| <=
// 3 N + |y|, so the error is <= (10 + 3 g) u max(1, cond) |y| <= (22 + 3 log2 n_row) u max(1, cond)
// |y|; the verdict's n is 2 n_row: 19 + 3 log2 n, in units of each dtype's u. Measured
// (`stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3): 0.035 f64, 0.034 f32,
// 0.037 f16, 0.080 bf16.
double kl_div_tolerance(DType, size_t n) { return 19.0 + 3.0 * std::log2(static_cast<double>(n)); }

std::vector<Regime> entropy_regimes() {
  return {
      on_row("uniform", "p ~ 1/n: softmax of N(0, 1e-6) logits",
             [](Entropy& e, DType) { return softmax_of(normals(e, row_length(e), 0, 1e-3)); }),
      on_row("random", "softmax of N(0, s^2) logits, s log-uniform in [0.1, 10]",
             [](Entropy& e, DType) { return probs(e, row_length(e)); }),
      on_row("peaked", "one p near 1, the rest 1e-30..1e-5 of it or 0",
             [](Entropy& e, DType) { return peaked(e, row_length(e)); }),
      on_row("near_one", "independent p_i = 1 - t, t log-uniform in 1e-7..0.1 (not normalized)",
             [](Entropy& e, DType) {
               auto v = log_uniforms(e, 1e-7, 0.1, false);
               for (auto& x : v) x = 1 - x;
               return v;
             }),
      on_row("zeros_and_ones", "p_i 0, 1 or softmax-like, at least half of them 0 or 1",
             [](Entropy& e, DType) {
               auto v = probs(e, row_length(e));
               for (auto& x : v)
                 if (e.chance(0.6)) x = e.chance(0.5) ? 0.0 : 1.0;
               return v;
             }),
      on_row("tiny",
             "p_i log-uniform in [1e-30, 1e-5] ([6.2e-5, 1e-3] f16): H tiny, every term normal",
             [](Entropy& e, DType d) {
               const bool f16 = d == DType::f16;
               return log_uniforms(e, f16 ? 6.2e-5 : 1e-30, f16 ? 1e-3 : 1e-5, false);
             }),
  };
}

// Every term -p log p >= 0 (log 1 u, product 1 u), pairwise sum g u with g <= 4 + log2 n, no
// cancellation: (6 + log2 n) u relative; + 0.5 for the exact value's rounding, + 1.5 for libm.
// Measured (`stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3): 0.11 f64,
// 0.13 f32, 0.13 f16, 0.19 bf16.
double entropy_tolerance(DType, size_t n) { return 8.0 + std::log2(static_cast<double>(n)); }

// kl_div's terms p_i (log p_i - logq_i) summed must not overflow: sum_i p_i (|log p_i| +
// |logq_i|) <= max / 4 (f16's 65504 is reached by 4096 probabilities 0.5 against logq = -40).
Msg check_kl_sum(const Input& in) {
  const auto& lq = in.args[0].values;
  const auto& p = in.args[1].values;
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0) s += p[i] * (std::fabs(std::log(p[i])) + std::fabs(lq[i]));
  if (s > dtype_format(in.dtype).max_finite() / 4)
    return "kl_div: sum p (|log p| + |logq|) must stay below max / 4 of the dtype";
  return std::nullopt;
}

}  // namespace

std::vector<Family> losses_families() {
  // Bounded logq and check_kl_sum keep the kl_div sum finite: every result is finite.
  const TensorSpec logq{"logq", -INFINITY, INFINITY, true}, values{"values"};
  const TensorSpec probabilities{"probabilities p", 0, 1};
  std::vector<Family> v;
  v.push_back(family<BceWithLogitsStable>(
      {"bce_with_logits", {values, {"targets", 0, 1}}},
      "l_i = max(x_i, 0) - x_i z_i + log1p(exp(-|x_i|)), logits x [n], targets z [n] in [0, 1]",
      bce_regimes(), oracle::bce_with_logits, bce_tolerance, "max(x, 0) - x z + log1p(exp(-|x|))"));
  v.push_back(family<KlDivStable>(
      {"kl_div", {logq, probabilities}},
      "y = sum_i p_i (log p_i - logq_i), 0 log 0 = 0, rows logq [n] and p [n] in [0, 1]",
      kl_div_regimes(), oracle::kl_div, kl_div_tolerance,
      "p (log p - logq) over p > 0, pairwise sum", check_kl_sum));
  v.push_back(family<EntropyStable>(
      {"entropy", {probabilities}},
      "H = -sum_i p_i log p_i, 0 log 0 = 0, probabilities p [n] in [0, 1]", entropy_regimes(),
      oracle::entropy, entropy_tolerance, "-p log p over p > 0, pairwise sum"));
  return v;
}

}  // namespace stabfuzz::families
