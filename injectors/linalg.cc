// Registry rows of the injected linear-algebra targets.
#include "injectors/linalg.h"

#include "families/regimes.h"
#include "injectors/mutant.h"

namespace stabfuzz::injectors {

std::vector<Target> linalg_mutants() {
  return {
      mutant<DotNarrowAccumulator>(
          {"dot/injected/narrow_accumulator",
           "products in T, sequential sum in the next lower precision", kF64F32,
           "a dot product accumulated one precision below the data (f16 accumulator for f32)",
           "every row of more than a few products: ~2^-11 (f32) / 2^-24 (f64) relative error per "
           "add; f32 sums past 65504 overflow",
           "accumulate in the data's precision (or wider), pairwise or blocked", "both"}),
      mutant<GemmNarrowSplitK>(
          {"gemm/injected/narrow_split_k",
           "split-K GEMM, partial sums of 4 products stored and reduced in the next lower "
           "precision",
           kF64F32, "split-K partial sums kept in a narrower format (pytorch#67946)",
           "k > 4 with values that do not fit the narrow format exactly: ~2^-11 (f32) / 2^-24 "
           "(f64) relative error per partial; f32 partials past 65504 overflow",
           "keep and reduce the partial sums in the output precision or wider", "both"}),
      mutant<AttentionNoMaxShift>(
          {"attention/injected/no_max_shift", "softmax of the scores without the max shift",
           kF64F32, "attention whose softmax exponentiates the raw scores",
           "scores above 709.8 (f64) / 88.7 (f32): exp overflows, inf / inf = NaN; rows of "
           "scores all below -745 / -104: 0 / 0 = NaN",
           "subtract each row's maximum score before exp (or an online softmax)", "both"}),
      mutant<CosineUnscaledNorms>(
          {"cosine_similarity/injected/unscaled_norms",
           "a.b / max(sqrt(sum a^2) sqrt(sum b^2), eps) without scaling", kF64F32,
           "cosine similarity with unscaled norms",
           "norms past sqrt(max) (|a| |b| > 1.8e308 f64 / 3.4e38 f32): the product overflows, "
           "y = 0 or NaN; subnormal rows: the squares underflow",
           "scale each row by its largest magnitude before the dot product and the norms", "both"}),
      mutant<PairwiseDistanceExpanded>(
          {"pairwise_distance/injected/expanded_square",
           "sqrt(|a + eps|^2 + |b|^2 - 2 (a + eps).b)", kF64F32,
           "the Euclidean distance through the expanded square (the gram-matrix trick)",
           "near-equal rows (b = a (1 + 10^-c N), b = a + eps): the difference of squares cancels "
           "every digit, a negative result gives NaN",
           "form d_i = (a_i - b_i) + eps first, then the scaled norm of d", "both"}),
      mutant<AdamPowBiasCorrection>(
          {"adam/injected/pow_bias_correction", "bias corrections 1 - beta^t", kF64F32,
           "Adam's bias corrections as 1 - pow(beta, t)",
           "small steps t with beta near 1 (beta2 = 0.999, t < ~30): 1 - beta^t loses "
           "log10(1 / (1 - beta^t)) digits",
           "1 - beta^t = -expm1(t log1p(-(1 - beta)))", "both"}),
      mutant<AdamNarrowDenominator>(
          {"adam/injected/narrow_denominator",
           "sqrt(v^) + eps in the next lower precision (f16 for f32 data)", kF64F32,
           "Adam's denominator sqrt(v^) + 1e-8 computed in a narrower format",
           "f32 data: v^ below ~6e-8 flushes to 0 in f16 and eps = 1e-8 rounds to 0, so a zero "
           "or tiny gradient gives m / 0 = inf or 0 / 0 = NaN; f64 data: a 24-bit denominator, "
           "visible where the update dominates p' (tiny p, cancelling updates)",
           "form the denominator in the data's precision (or f32 for f16 data), eps >= 1e-4 in "
           "f16",
           "both"}),
  };
}

Regime adam_early_steps_regime() {
  return {"early_steps",
          "p ~ 1e-6 N (the update dominates p'), g ~ s N, m ~ s N / 2, v ~ g^2 x [0.1, 10], s "
          "log-uniform in [1e-4, 10], step 2..8, beta2 in [0.999, 0.99999]: 1 - beta2^t is small",
          [](Entropy& e, DType d) {
            const size_t n = regime::row_length(e, 256);
            const double s = e.log_uniform(1e-4, 10);
            std::vector<double> p(n), g(n), m(n), v(n);
            for (size_t i = 0; i < n; ++i) {
              p[i] = 1e-6 * e.normal();
              g[i] = s * e.normal();
              m[i] = s / 2 * e.normal();
              v[i] = g[i] * g[i] * e.log_uniform(0.1, 10);
            }
            const auto len = static_cast<int64_t>(n);
            return regime::make_input(d,
                                      {Tensor{{len}, std::move(p)}, Tensor{{len}, std::move(g)},
                                       Tensor{{len}, std::move(m)}, Tensor{{len}, std::move(v)}},
                                      {{"step", static_cast<double>(e.range(2, 8))},
                                       {"beta2", 1 - e.log_uniform(1e-5, 1e-3)}});
          }};
}

}  // namespace stabfuzz::injectors
