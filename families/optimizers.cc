// The optimizer family adam (one Adam step): value regimes, tolerance, stable CPU reference.
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
// The bound sets the threshold. f16 and bf16 compute in f32 and round once: 0.5 ULP of the dtype
// plus f32's error, 2^-13 (f16) or 2^-16 (bf16) of the bound in the dtype's ULPs. Measured worst
// error / tolerance over `stabfuzz --target F --impl F/cpu/stable --seed S --runs 300`, S = 1..3
// (summary.json max_error_over_tolerance), f64 / f32 / f16 / bf16: 0.073 / 0.073 / 0.024 / 0.015.
// U errs by (2 kappa + 16.5) u |U|, kappa = (|b1 m| + |(1 - b1) g|) / |m'| (m' may cancel; the bias
// corrections via expm1/log1p 5u each; sqrt halves v^'s 9u); kappa |U| <= cond |p'| + |U| and
// |U| <= |p| + |p'| <= (cond + 1) |p'|, so with p - U's rounding the error is <= 40 u max(1, cond)
// |p'|; + 1 for rounding.
double adam_tolerance(DType, size_t) { return 41; }

// ---- adam ---------------------------------------------------------------------------------------
// p ~ N(0, 1) x p_scale, g ~ N(0, s^2), m ~ N(0, s^2/4), v = g^2 x [0.1, 10], step 1..max_step.
Input adam_input(Entropy& e, DType d, size_t n, double s, size_t max_step, double p_scale = 1) {
  Vec g = normals(e, n, s), v(n);
  for (size_t i = 0; i < n; ++i) v[i] = g[i] * g[i] * e.log_uniform(0.1, 10);
  std::vector<Tensor> args = {vec(normals(e, n, p_scale)), vec(g), vec(normals(e, n, s / 2)),
                              vec(v)};  // drawn before the step: regimes.h, "one draw per call"
  const double step = double(log_int(e, 1, max_step));
  return regime::make_input(d, std::move(args), {{"step", step}});
}
// The gradient scale's lower end: in f16 g^2 stays normal (>= 6e-5) from g = 1e-2 on.
double grad_lo(DType d) { return d == DType::f16 ? 1e-2 : 1e-4; }
Vec& adam_arg(Input& in, size_t k) { return in.args[k].values; }

// The update U = lr m^ / (sqrt(v^) + eps) the target forms, in long double.
long double adam_update(const params::AdamParams& q, long double g, long double m, long double v) {
  const long double mp = q.beta1 * m + (1 - q.beta1) * g;
  const long double vp = q.beta2 * v + (1 - q.beta2) * g * g;
  const long double bc1 = 1 - std::pow(static_cast<long double>(q.beta1), q.step);
  const long double bc2 = 1 - std::pow(static_cast<long double>(q.beta2), q.step);
  return q.lr * (mp / bc1) / (std::sqrt(vp / bc2) + q.eps);
}

std::vector<Regime> adam_regimes() {
  return {
      {"typical",
       "p ~ N(0, 1), g, m ~ s N, v ~ g^2, s log-uniform in [1e-4, 10] ([1e-2, 10] f16), step "
       "1..1e4",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);  // one draw per statement (regimes.h)
         return adam_input(e, d, n, e.log_uniform(grad_lo(d), 10), 10000);
       }},
      {"zero_grad_tiny_v",
       "g = 0, v in [1e-30, 1e-12], m ~ 1e-12..1e-6 (f16: v in [1e-7, 1e-5], m ~ 1e-4..1e-2): eps "
       "sets the step",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const bool f16 = d == DType::f16;
         Input in = adam_input(e, d, n, 1, 10);
         adam_arg(in, 1).assign(n, 0.0);
         adam_arg(in, 2) = log_mags(e, n, f16 ? 1e-4 : 1e-12, f16 ? 1e-2 : 1e-6);
         for (auto& x : adam_arg(in, 3)) x = e.log_uniform(f16 ? 1e-7 : 1e-30, f16 ? 1e-5 : 1e-12);
         return regime::make_input(d, std::move(in.args), std::move(in.params));
       }},
      {"cancel_update", "p = U (1 + 1/C), m of g's sign (no cancellation in m'): cond ~ 2C",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s = e.log_uniform(grad_lo(d), 10),
                      c = 1 / cond_target(e, d, adam_tolerance(d, n));
         Input in = adam_input(e, d, n, s, 100);
         const auto q = params::adam_params(in);
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
         Input in = adam_input(e, d, n, e.log_uniform(grad_lo(d), 10), 100);
         const double c = depth(e, d), b1 = params::adam_params(in).beta1;
         for (size_t i = 0; i < n; ++i)
           adam_arg(in, 2)[i] =
               round_to(d, -(1 - b1) * adam_arg(in, 1)[i] / b1 * (1 + c * e.normal()));
         return in;
       }},
      {"large",
       "g, m ~ 1e15 (f32) / 1e150 (f64) / 10 (f16: v = 10 g^2 < 65504), v ~ g^2, p ~ 1e3 N",
       [](Entropy& e, DType d) {
         const double s = by_range(d, 1e150, 1e15, 10) * e.log_uniform(1e-2, 1);
         return adam_input(e, d, row_length(e), s, 1000, 1e3);
       }},
      {"random_hyper",
       "lr in [1e-6, 1], beta1 in [.5, .99], beta2 in [.9, .99999], eps in "
       "[1e-12, 1e-4], step 1..1e6",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);  // one draw per statement (regimes.h)
         Input in = adam_input(e, d, n, e.log_uniform(grad_lo(d), 10), 1000000);
         in.set_param("lr", e.log_uniform(1e-6, 1));
         in.set_param("beta1", e.uniform(0.5, 0.99));
         in.set_param("beta2", e.uniform(0.9, 0.99999));
         in.set_param("eps", e.log_uniform(1e-12, 1e-4));
         return in;
       }},
      {"tiny",
       "g ~ 1e-17..1e-10 (f32) / 1e-150..1e-100 (f64) / 1e-2..3e-2 (f16) with g^2 normal, p tiny",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         const double s =
             e.log_uniform(by_range(d, 1e-150, 1e-17, 1e-2), by_range(d, 1e-100, 1e-10, 3e-2));
         Input in = adam_input(e, d, n, s, 100);
         adam_arg(in, 0) = log_mags(e, n, 8 * min_subnormal(d), by_range(d, 1e-20, 1e-20, 1e-5));
         return regime::make_input(d, std::move(in.args), std::move(in.params));
       }},
  };
}

}  // namespace

std::vector<Family> optimizer_families() {
  std::vector<Family> out;
  out.push_back(reference_family<AdamStable, OpmathAdapter>(
      "adam",
      "one Adam step: p' = p - lr m^ / (sqrt(v^) + eps), m^ = (b1 m + (1 - b1) g) / (1 - b1^t), "
      "v^ = (b2 v + (1 - b2) g^2) / (1 - b2^t); inputs p, g, m, v [n] (v >= 0); params lr (1e-3), "
      "beta1 (0.9), beta2 (0.999), eps (1e-8), step t (1); output p' [n]",
      adam_regimes(), oracle::validate_adam, oracle::adam, adam_tolerance,
      "PyTorch's formula; bias corrections as -expm1(t log1p(-(1 - beta))); f16/bf16 computed in "
      "f32 (PyTorch's opmath), output rounded once"));
  return out;
}

}  // namespace stabfuzz::families
