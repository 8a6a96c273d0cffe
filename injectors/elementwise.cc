// Registry rows of the injected elementwise targets (exp, log, activations).
#include "injectors/elementwise.h"

#include "injectors/mutant.h"

namespace stabfuzz::injectors {

namespace {
template <class Fn>
Target row(MutantRow r) {
  return mutant<targets::ElementwiseOp<Fn>>(std::move(r));
}
}  // namespace

std::vector<Target> elementwise_mutants() {
  return {
      row<ExpRepeatedSquaring>(
          {"exp/injected/repeated_squaring", "(exp(x / 1024))^1024 by ten squarings", kF64F32,
           "exp(x) as exp(x * 2^-10) squared ten times",
           "every x: the ten squarings amplify exp's rounding 1024 times (~1024 u relative), "
           "visible wherever cond = |x| is below ~100 (regimes tiny, moderate, wide)",
           "call exp(x) once", "both"}),
      row<LogNegReciprocal>(
          {"log/injected/neg_log_reciprocal", "-log(1 / x)", kF64F32, "log(x) as -log(1 / x)",
           "x below 1/max (every subnormal, 5.6e-309 f64 / 2.9e-39 f32): 1/x overflows and the "
           "result is -inf for a finite log",
           "call log(x) directly", "both"}),
      row<Log1pNaive>({"log1p/injected/log_one_plus", "log(1 + x)", kF64F32,
                       "log1p(x) as log(1 + x)",
                       "|x| below ~1e-7 (f32) / ~1e-15 (f64): 1 + x rounds to 1 or loses the "
                       "low digits of x, result 0 or a few digits",
                       "log1p(x)", "both"}),
      row<Expm1Naive>({"expm1/injected/exp_minus_one", "exp(x) - 1", kF64F32,
                       "expm1(x) as exp(x) - 1",
                       "small |x| (below ~1e-3): exp(x) - 1 cancels, total cancellation below u",
                       "expm1(x)", "both"}),
      row<TanhExpRatio>({"tanh/injected/exp_ratio", "(e^2x - 1) / (e^2x + 1)", kF64F32,
                         "tanh(x) as (exp(2x) - 1) / (exp(2x) + 1)",
                         "small |x|: the numerator cancels; x > 354.9 (f64) / 44.4 (f32): "
                         "inf / inf = NaN",
                         "tanh(x), or expm1(2x) / (expm1(2x) + 2) for x >= 0 with tanh(-x) = "
                         "-tanh(x)",
                         "both"}),
      row<ErfOneMinusErfc>({"erf/injected/one_minus_erfc", "1 - erfc(x)", kF64F32,
                            "erf(x) as 1 - erfc(x)",
                            "small |x| (erfc(x) ~ 1): the subtraction cancels, no digit left "
                            "below |x| ~ u",
                            "erf(x)", "both"}),
      row<SigmoidExpRatio>({"sigmoid/injected/exp_over_one_plus_exp", "e^x / (1 + e^x)", kF64F32,
                            "sigmoid(x) as exp(x) / (1 + exp(x)) for every x",
                            "x > 709.8 (f64) / 88.7 (f32): exp overflows, inf / inf = NaN",
                            "e = exp(-|x|); x >= 0: 1 / (1 + e), x < 0: e / (1 + e)", "both"}),
      row<LogSigmoidNaive>(
          {"log_sigmoid/injected/neg_log_one_plus_exp", "-log(1 + e^-x)", kF64F32,
           "log_sigmoid(x) as -log(1 + exp(-x))",
           "x < -709.8 (f64) / -88.7 (f32): exp(-x) overflows, -inf for ~x; x > 37 (f64) / 17 "
           "(f32): 1 + exp(-x) rounds to 1, 0 for ~-exp(-x)",
           "min(x, 0) - log1p(exp(-|x|))", "both"}),
      row<SoftplusNaive>({"softplus/injected/log_one_plus_exp", "log(1 + e^x)", kF64F32,
                          "softplus(x) as log(1 + exp(x))",
                          "x > 709.8 (f64) / 88.7 (f32): exp overflows, inf for ~x; x < -37 (f64) "
                          "/ -17 (f32): 1 + exp(x) rounds to 1, 0 for ~exp(x)",
                          "max(x, 0) + log1p(exp(-|x|))", "both"}),
      row<SiluExpRatio>({"silu/injected/x_exp_over_one_plus_exp", "x e^x / (1 + e^x)", kF64F32,
                         "silu(x) as x * exp(x) / (1 + exp(x))",
                         "x > 709.8 (f64) / 88.7 (f32): exp overflows, inf / inf = NaN",
                         "x * sigmoid(x) with sigmoid from exp(-|x|)", "oracle"}),
      row<GeluOnePlusErf>({"gelu/injected/one_plus_erf", "x/2 (1 + erf(x / sqrt 2)) for all x",
                           kF64F32, "gelu(x) as x/2 (1 + erf(x / sqrt 2)) also for x < 0",
                           "x < -3: 1 + erf cancels, every digit gone below x ~ -6 (f32) / -8.3 "
                           "(f64) while gelu is still normal",
                           "x < 0: x/2 erfc(-x / sqrt 2)", "both"}),
      row<GeluTanhOnePlusTanh>(
          {"gelu_tanh/injected/one_plus_tanh",
           "x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as written", kF64F32,
           "gelu_tanh(x) in its textbook form x/2 (1 + tanh(u))",
           "x < -2: 1 + tanh(u) cancels, no digit left below x ~ -5 (f32) / -9 (f64)",
           "x sigmoid(2u) with sigmoid from exp(-|2u|), u = sqrt(2/pi) x (1 + 0.044715 x^2)",
           "both"}),
  };
}

}  // namespace stabfuzz::injectors
