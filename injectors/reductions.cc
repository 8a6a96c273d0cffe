// Registry rows of the injected reductions (sum, mean, var, std, l2_norm, log-sum-exp scans).
#include "injectors/reductions.h"

#include "families/regimes.h"
#include "injectors/mutant.h"

namespace stabfuzz::injectors {

std::vector<Target> reduction_mutants() {
  return {
      mutant<SumNarrowAccumulator>(
          {"sum/injected/narrow_accumulator",
           "sequential sum in the next lower precision (f32 data in f16, f64 data in f32)", kF64F32,
           "an accumulator one precision below the data (the f16-accumulator bug)",
           "every row longer than a few values: ~2^-11 (f32) / 2^-24 (f64) relative error per "
           "add; f32 sums past 65504 overflow the f16 accumulator",
           "accumulate in the data's precision (or wider) with a pairwise order", "both"}),
      mutant<MeanUnscaledSum>(
          {"mean/injected/unscaled_sum", "pairwise sum / n without prescaling", kF64F32,
           "mean as sum / n with an unguarded sum",
           "values near the largest finite (|x| in [max/1e3, max]): partial sums overflow to inf "
           "or inf - inf = NaN though |mean| <= max |x|",
           "prescale by 2^-32 when max |x| nears overflow, unscale the mean", "both"}),
      mutant<VarianceNaive>(
          {"var/injected/naive_one_pass", "(sum x^2 - (sum x)^2 / n) / (n - unbiased)", kF64F32,
           "the one-pass textbook variance E[x^2] - E[x]^2",
           "rows whose |mean| / std is large (1e4 + N(0, 1) in f32, 1e8 + N(0, 1) in f64): every "
           "digit cancels, the result can be 0 or negative",
           "corrected two-pass (x - mean, then sum of squares minus (sum of residuals)^2 / n) or "
           "Welford",
           "both"}),
      mutant<StdNaive>({"std/injected/sqrt_naive_var", "sqrt of the one-pass variance", kF64F32,
                        "std as sqrt(E[x^2] - E[x]^2)",
                        "mean-shifted rows: every digit cancels, sqrt of a negative difference "
                        "gives NaN",
                        "sqrt of the corrected two-pass variance", "both"}),
      mutant<L2NormUnscaled>(
          {"l2_norm/injected/unscaled", "sqrt(sum x^2), no scaling", kF64F32,
           "the l2 norm without LAPACK nrm2's scaling",
           "|x| above 1.3e154 (f64) / 1.8e19 (f32): x^2 overflows, inf for a finite norm; "
           "subnormal x: x^2 underflows to 0",
           "scale by max |x| (a power of two) before squaring, unscale the norm", "oracle"}),
      mutant<LogSumExpNoShift>(
          {"logsumexp/injected/no_max_shift", "log(sum exp(x))", kF64F32,
           "logsumexp without subtracting the maximum",
           "any logit above 709.8 (f64) / 88.7 (f32): inf; every logit below -745 (f64) / -104 "
           "(f32): log(0) = -inf",
           "m + log1p(sum_{i != argmax} exp(x_i - m)), m = max x", "both"}),
      mutant<LogSumExpUnguardedShift>(
          {"logsumexp/injected/unguarded_shift", "m + log(sum exp(x - m)), m = max x, no inf guard",
           kF64F32, "the max shift without a guard for an infinite maximum (pytorch#49724)",
           "rows whose every entry is -inf (all positions masked): -inf - -inf = NaN where the "
           "result is -inf",
           "shift by 0 when m is +-inf (return m), then m + log1p(sum_{i != argmax} exp(x_i - m))",
           "both"}),
      mutant<CumSumNarrowCarry>(
          {"cumsum/injected/narrow_running_sum", "running sum carried in the next lower precision",
           kF64F32, "a cumulative sum whose carry is one precision below the data",
           "every row longer than a few values: each prefix errs by ~k 2^-11 (f32) / k 2^-24 "
           "(f64) relative; f32 prefixes past 65504 overflow",
           "carry the running sum in the data's precision with a tree scan", "both"}),
      mutant<LogCumSumExpNoShift>(
          {"logcumsumexp/injected/no_max_shift", "y_k = log(sum_{i<=k} exp(x_i)), sequential",
           kF64F32, "logcumsumexp without a running maximum",
           "logits above 709.8 (f64) / 88.7 (f32): inf; prefixes of logits below -745 (f64) / "
           "-104 (f32): -inf",
           "scan of max(a, b) + log1p(exp(-|a - b|))", "both"}),
      mutant<LogAddExpNaive>({"logaddexp/injected/naive", "log(exp(a) + exp(b))", kF64F32,
                              "logaddexp without the max shift",
                              "a or b above 709.8 (f64) / 88.7 (f32): inf; both below -745 "
                              "(f64) / -104 (f32): -inf",
                              "max(a, b) + log1p(exp(-|a - b|))", "both"}),
  };
}

Regime logsumexp_masked_rows_regime() {
  return {"masked_rows",
          "attention-style masks: each entry -inf with probability 1/2..1, the rest N(0, 25); "
          "half the rows entirely -inf (exact result -inf)",
          [](Entropy& e, DType d) {
            const size_t n = regime::row_length(e, 256);
            const bool all = e.chance(0.5);
            const double p = e.uniform(0.5, 1.0);
            std::vector<double> v(n);
            for (auto& x : v) x = all || e.chance(p) ? -INFINITY : 5 * e.normal();
            return regime::row_input(d, std::move(v));
          }};
}

}  // namespace stabfuzz::injectors
