// The families' scalar parameters and their defaults: the one place a default lives.
//
// Implementations (targets/, injectors/, libs/) and oracles/ read a parameter through these
// names, so a kernel and the oracle that judges it can never disagree on a default. A target
// reads a parameter as T(value): the value rounded to the input's dtype; the oracle evaluates the
// exact formula with exactly those rounded values, so that a parameter that is not representable
// (eps = 1e-8 in f32) is not counted as the target's error.
#pragma once

#include <cmath>

#include "stabfuzz/dtype.h"
#include "stabfuzz/family.h"

namespace stabfuzz::params {

inline constexpr double kLayerNormEps = 1e-5;    // layer_norm eps (torch.nn.LayerNorm)
inline constexpr double kRmsNormEps = 1e-6;      // rms_norm eps
inline constexpr double kBatchNormEps = 1e-5;    // batch_norm eps (torch.nn.BatchNorm1d)
inline constexpr double kUnbiasedDefault = 1.0;  // var/std: divide by n - 1 (torch.var)
inline constexpr double kCosineEpsDefault = 1e-8;
inline constexpr double kPairwiseEpsDefault = 1e-6;  // torch.nn.functional.pairwise_distance
inline constexpr double kAdamLrDefault = 1e-3;
inline constexpr double kAdamBeta1Default = 0.9;
inline constexpr double kAdamBeta2Default = 0.999;
inline constexpr double kAdamEpsDefault = 1e-8;
inline constexpr double kAdamStepDefault = 1;

// attention and adam compute f16 and bf16 inputs in f32 (PyTorch's opmath type; flash attention
// accumulates in f32) and round the output once: their parameters are held in that type.
inline DType opmath_dtype(DType d) { return d == DType::f16 || d == DType::bf16 ? DType::f32 : d; }

// scale (default 1/sqrt(d), d = the head dimension) and causal (0 or 1).
struct AttentionParams {
  double scale;
  bool causal;
};
inline AttentionParams attention_params(const Input& in, double head_dim) {
  return {round_to(opmath_dtype(in.dtype), in.param("scale", 1.0 / std::sqrt(head_dim))),
          in.param("causal", 0) != 0};
}
inline double cosine_eps(const Input& in) {
  return round_to(in.dtype, in.param("eps", kCosineEpsDefault));
}
inline double pairwise_eps(const Input& in) {
  return round_to(in.dtype, in.param("eps", kPairwiseEpsDefault));
}

// The compute type holds 1 - beta, the weight of the new gradient (PyTorch's lerp weight), not
// beta: the kernel forms m + (1 - beta) (g - m), and beta = 1 - that is exact in double. step is an
// integer >= 1 that validation requires the compute type to hold exactly.
struct AdamParams {
  double lr, beta1, beta2, eps, step;
};
inline AdamParams adam_params(const Input& in) {
  const DType d = opmath_dtype(in.dtype);
  return {round_to(d, in.param("lr", kAdamLrDefault)),
          1 - round_to(d, 1 - in.param("beta1", kAdamBeta1Default)),
          1 - round_to(d, 1 - in.param("beta2", kAdamBeta2Default)),
          round_to(d, in.param("eps", kAdamEpsDefault)), in.param("step", kAdamStepDefault)};
}

}  // namespace stabfuzz::params
