// Registry rows of the injected normalization and loss targets.
#include "injectors/normalization.h"

#include "injectors/mutant.h"

namespace stabfuzz::injectors {

std::vector<Target> normalization_mutants() {
  return {
      mutant<LogSoftmaxOfSoftmax>(
          {"log_softmax/injected/log_of_softmax", "log(softmax(x)), softmax max-shifted", kF64F32,
           "log_softmax as the log of a (stable) softmax",
           "a logit more than ~745 (f64) / ~104 (f32) below the maximum: its probability "
           "underflows, log(0) = -inf; gaps past 708 / 87 leave a subnormal with few digits",
           "(x_i - m) - log1p(sum_{j != argmax} exp(x_j - m))", "both"}),
      mutant<CrossEntropyNegLogSoftmax>(
          {"cross_entropy/injected/neg_log_softmax", "-log(softmax(x)[target])", kF64F32,
           "cross entropy as -log of the target's softmax probability",
           "the target's logit more than ~745 (f64) / ~104 (f32) below the maximum: the "
           "probability underflows and the loss is inf",
           "(m - x_t) + log1p(sum_{j != argmax} exp(x_j - m)) (-log_softmax)", "both"}),
      mutant<LayerNormOnePass>(
          {"layer_norm/injected/one_pass_variance", "var = E[x^2] - E[x]^2", kF64F32,
           "layer norm statistics by the one-pass variance",
           "rows shifted by a mean large against their spread (x + 2000, 1e4 + N(0, 1)): var "
           "loses every digit, can go negative (NaN)",
           "two-pass (or Welford) statistics, var clamped >= 0", "both"}),
      mutant<LayerNormNarrowStatistics>(
          {"layer_norm/injected/narrow_statistics",
           "two-pass mean and variance accumulated one precision below the data", kF64F32,
           "layer norm statistics in a narrower format (f16 statistics for f32 activations)",
           "f32 rows: a mean near 1e4 keeps ~3 digits in f16 (rows x + 2000, 1e4 + N(0, 1)) and "
           "sums past 65504 overflow to inf; f64 rows: 24-bit statistics, visible on any row",
           "accumulate the statistics in the data's precision (f32 for f16 data)", "both"}),
      mutant<BatchNormOnePass>(
          {"batch_norm/injected/one_pass_variance", "per channel var = E[x^2] - E[x]^2", kF64F32,
           "batch norm statistics by the one-pass variance",
           "channels with |mean| far above their spread: a constant channel of 1e7..1e9 gives "
           "+-1 or NaN instead of 0; mean-shifted channels lose every digit",
           "two-pass or Welford statistics per channel", "both"}),
      mutant<RmsNormUnscaled>(
          {"rms_norm/injected/unscaled", "x / sqrt(mean(x^2) + eps), no scaling", kF64F32,
           "rms norm with the mean of squares formed unscaled",
           "|x| above 1.3e154 (f64) / 1.8e19 (f32): x^2 overflows and every output is 0 or "
           "NaN where the exact is ~+-1",
           "scale by S = max(max |x|, sqrt(eps)): S sqrt(mean((x/S)^2) + (eps/S)/S)", "oracle"}),
      mutant<BceLogSigmoid>(
          {"bce_with_logits/injected/log_sigmoid_form", "-[z log s + (1 - z) log(1 - s)]", kF64F32,
           "binary cross entropy through an explicit sigmoid",
           "|x| above ~37 (f64) / ~17 (f32): s rounds to 1 (or e^-x overflows), log(0) = -inf, "
           "0 * inf = NaN; 1 - s cancels long before",
           "max(x, 0) - x z + log1p(exp(-|x|))", "both"}),
      mutant<KlDivRatioOfExp>(
          {"kl_div/injected/ratio_of_exp", "sum p log(p / exp(logq))", kF64F32,
           "KL divergence with q recovered from log q",
           "logq below -745 (f64) / -104 (f32): exp(logq) = 0 and the sum is inf; below -708 / "
           "-87 q is subnormal and inaccurate",
           "sum p (log p - logq) over p > 0", "both"}),
      mutant<EntropyLogOfProduct>(
          {"entropy/injected/log_of_product", "-log(prod p^p)", kF64F32,
           "entropy as the log of a product of powers",
           "small entropies (p near 0 or 1): each p^p rounds next to 1 and keeps few digits of "
           "p log p; long rows: the product's n u error",
           "-sum p log p over p > 0, pairwise sum", "both"}),
  };
}

}  // namespace stabfuzz::injectors
