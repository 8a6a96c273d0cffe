// The planted linear-algebra formulations (injectors/linalg.cc): their registry rows, each caught
// on its failing region and fine on a benign input, each one's error where it breaks, and adam's
// early_steps regime.
#include "injectors/linalg.h"

#include <cmath>

#include "stabfuzz/entropy.h"
#include "tests/injectors/mutant_check.h"

namespace stabfuzz::mutant_check {
namespace {

std::vector<Case> cases() {
  const DType f64 = DType::f64, f32 = DType::f32;
  return {
      {"dot/injected/narrow_accumulator", rows2(f64, {1, 1e-10}, {1, 1}),
       rows2(f64, {1, 2}, {3, 4})},
      {"gemm/injected/narrow_split_k", gemm(f64, {1, 1e-10}, {1, 1}), gemm(f64, {1, 2}, {3, 4})},
      {"attention/injected/no_max_shift", attention(f64, 1000, {1, 2}), attention(f64, 1, {1, 2})},
      {"cosine_similarity/injected/unscaled_norms", rows2(f64, {1e200, 1e200}, {1e200, 1e200}),
       rows2(f64, {1, 0}, {1, 0})},
      {"pairwise_distance/injected/expanded_square", rows2(f64, {1e8 + 1}, {1e8}),
       rows2(f64, {3}, {0})},
      {"adam/injected/pow_bias_correction", adam(f64, {0, 1, 0, 0}, 3, 0.99999),
       adam(f64, {0, 1, 0, 0}, 10000, 0.999)},
      {"adam/injected/narrow_denominator", adam(f32, {0, 0, 1e-6, 1e-12}, 1, 0.999),
       adam(f32, {1, 1, 0, 0}, 1, 0.999)},
  };
}

TEST(LinalgMutants, RegisteredUnderTheirIdsWithAHandPickedCaseEach) {
  expect_registered(injectors::linalg_mutants(), cases());
}

TEST(LinalgMutants, EachIsCaughtInItsFailingRegion) { expect_caught(cases()); }

TEST(LinalgMutants, EachIsFineOnABenignInput) { expect_benign(cases()); }

TEST(LinalgMutants, NarrowAccumulatorsDropWhatTheNarrowFormatCannotHold) {
  // f64 data summed in f32: 1 + 1e-10 rounds to 1, a relative error of 1e-10 (~1e6 ulps).
  const Input dot = rows2(DType::f64, {1, 1e-10}, {1, 1});
  EXPECT_EQ(native("dot/injected/narrow_accumulator", dot), std::vector<double>{1});
  EXPECT_EQ(reference("dot/injected/narrow_accumulator", dot), std::vector<double>{1 + 1e-10});
  const Input mm = gemm(DType::f64, {1, 1e-10}, {1, 1});
  EXPECT_EQ(native("gemm/injected/narrow_split_k", mm), std::vector<double>{1});
  EXPECT_EQ(reference("gemm/injected/narrow_split_k", mm), std::vector<double>{1 + 1e-10});
  // f32 data summed in f16: a partial sum past 65504 is inf.
  const Input big = rows2(DType::f32, {300, 300}, {200, 200});
  EXPECT_EQ(native("dot/injected/narrow_accumulator", big), std::vector<double>{INFINITY});
  EXPECT_EQ(reference("dot/injected/narrow_accumulator", big), std::vector<double>{120000});
}

TEST(LinalgMutants, UnshiftedAndUnscaledFormsOverflowToNanOrZero) {
  // Scores 1000: e^1000 / e^1000 = inf / inf where the attention of equal scores is the mean of V.
  const Input att = attention(DType::f64, 1000, {1, 2});
  EXPECT_TRUE(std::isnan(native("attention/injected/no_max_shift", att).at(0)));
  EXPECT_EQ(reference("attention/injected/no_max_shift", att), std::vector<double>{1.5});
  // Squares of 1e200 overflow: a.b / (inf inf) is NaN or 0 where equal rows have cosine 1.
  const Input cs = rows2(DType::f64, {1e200, 1e200}, {1e200, 1e200});
  const double y = native("cosine_similarity/injected/unscaled_norms", cs).at(0);
  EXPECT_TRUE(std::isnan(y) || y == 0) << y;
  EXPECT_DOUBLE_EQ(reference("cosine_similarity/injected/unscaled_norms", cs).at(0), 1.0);
}

TEST(LinalgMutants, ExpandedSquareCancelsTheDistanceOfNearRows) {
  // |a + eps - b| = 1 + 1e-6 for a = 1e8 + 1, b = 1e8; |a'|^2 + |b|^2 - 2 a'.b cancels 1e16-sized
  // terms whose rounding (~2) swamps the result 1: not one digit is right.
  const Input in = rows2(DType::f64, {1e8 + 1}, {1e8});
  EXPECT_NEAR(reference("pairwise_distance/injected/expanded_square", in).at(0), 1 + 1e-6, 1e-12);
  const double y = native("pairwise_distance/injected/expanded_square", in).at(0);
  EXPECT_TRUE(std::isnan(y) || std::fabs(y - (1 + 1e-6)) > 0.1) << y;
  expect_agrees("pairwise_distance/injected/expanded_square", rows2(DType::f64, {3}, {0}), 4);
}

TEST(LinalgMutants, AdamsBiasCorrectionAndNarrowDenominatorBreakEarlySteps) {
  // 1 - 0.99999^3 ~ 3e-5 keeps ~4.5 fewer digits than the data: thousands of ulps in the update.
  const Input early = adam(DType::f64, {0, 1, 0, 0}, 3, 0.99999);
  const std::vector<double> y = native("adam/injected/pow_bias_correction", early),
                            r = reference("adam/injected/pow_bias_correction", early);
  ASSERT_FALSE(y.empty());
  EXPECT_GT(ulp_distance(DType::f64, y[0], r[0]), 100) << y[0] << " " << r[0];
  EXPECT_LT(std::fabs(y[0] - r[0]), 1e-9 * std::fabs(r[0]));
  // f32 data, f16 denominator: v^ = 1e-9 and eps = 1e-8 both flush to 0, m / 0 = inf.
  const Input tiny = adam(DType::f32, {0, 0, 1e-6, 1e-12}, 1, 0.999);
  EXPECT_FALSE(std::isfinite(native("adam/injected/narrow_denominator", tiny).at(0)));
  for (double v : reference("adam/injected/narrow_denominator", tiny))
    EXPECT_TRUE(std::isfinite(v));
}

TEST(LinalgMutants, EachAgreesWithItsStableFormOnItsBenignInput) {
  for (const auto& c : cases())
    if (c.id != "attention/injected/no_max_shift") expect_agrees(c.id, *c.good, 4);
}

TEST(LinalgMutants, EarlyStepsRegimeDrawsFewStepsWithBeta2NearOne) {
  const Regime r = injectors::adam_early_steps_regime();
  EXPECT_EQ(r.name, "early_steps");
  const Family* f = default_registry().find_family("adam");
  ASSERT_NE(f, nullptr);
  for (uint64_t k = 0; k < 32; ++k) {
    SeededEntropy e(3, k);
    const Input in = r.sample(e, k % 2 ? DType::f32 : DType::f64);
    ASSERT_EQ(f->validate(in), std::nullopt);
    ASSERT_EQ(in.args.size(), 4u);
    const double step = in.param("step", 0), beta2 = in.param("beta2", 0);
    EXPECT_GE(step, 2);
    EXPECT_LE(step, 8);
    EXPECT_EQ(step, std::floor(step));
    EXPECT_GE(beta2, 0.999 - 1e-9);
    EXPECT_LE(beta2, 0.99999 + 1e-9);
    for (double p : in.args[0].values) EXPECT_LT(std::fabs(p), 1e-4);  // p ~ 1e-6 N
  }
}

}  // namespace
}  // namespace stabfuzz::mutant_check
