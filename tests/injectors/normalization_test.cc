// The planted normalization and loss formulations (injectors/normalization.cc): their registry
// rows, each caught on its failing region and fine on a benign input, and each one's error where it
// breaks: an underflowed probability's log, a variance that cancels, a square that overflows.
#include "injectors/normalization.h"

#include <algorithm>
#include <cmath>

#include "tests/injectors/mutant_check.h"

namespace stabfuzz::mutant_check {
namespace {

std::vector<Case> cases() {
  const DType f64 = DType::f64, f32 = DType::f32;
  return {
      {"log_softmax/injected/log_of_softmax", row(f64, {0, -1000}), row(f64, {0, 0})},
      {"cross_entropy/injected/neg_log_softmax", row(f64, {0, -1000}, {{"target", 1}}),
       row(f64, {0, 0}, {{"target", 0}})},
      {"layer_norm/injected/one_pass_variance", row(f32, {10000, 10001, 10000, 10001}),
       row(f32, {-1, 1})},
      {"layer_norm/injected/narrow_statistics", row(f32, {10000, 10001, 10000, 10001}),
       row(f32, {-1, 1})},
      {"batch_norm/injected/one_pass_variance", matrix(f64, 4, 1, {1e8, 1e8 + 1, 1e8, 1e8 + 1}),
       matrix(f64, 2, 1, {-1, 1})},
      {"rms_norm/injected/unscaled", row(f64, {1e200, -1e200}), row(f64, {3, 4})},
      {"bce_with_logits/injected/log_sigmoid_form", rows2(f64, {50}, {0}), rows2(f64, {0}, {0.5})},
      {"kl_div/injected/ratio_of_exp", rows2(f64, {-800}, {1}), rows2(f64, {-1}, {0.5})},
      {"entropy/injected/log_of_product", row(f64, {1e-5}), row(f64, {0.5, 0.5})},
  };
}

// The largest |mutant - reference| over the outputs (inf where the mutant's is NaN).
double max_difference(const std::string& id, const Input& in) {
  const std::vector<double> y = native(id, in), r = reference(id, in);
  double d = 0;
  for (size_t i = 0; i < y.size(); ++i)
    d = std::max(d, std::isnan(y[i]) ? INFINITY : std::fabs(y[i] - r[i]));
  return d;
}

TEST(NormalizationMutants, RegisteredUnderTheirIdsWithAHandPickedCaseEach) {
  expect_registered(injectors::normalization_mutants(), cases());
}

TEST(NormalizationMutants, EachIsCaughtInItsFailingRegion) { expect_caught(cases()); }

TEST(NormalizationMutants, EachIsFineOnABenignInput) { expect_benign(cases()); }

TEST(NormalizationMutants, AnUnderflowedProbabilityGivesAnInfiniteLog) {
  // softmax([0, -1000])_1 = e^-1000 = 0: log 0 = -inf where log_softmax is -1000.
  const Input x = row(DType::f64, {0, -1000});
  EXPECT_EQ(native("log_softmax/injected/log_of_softmax", x), (std::vector<double>{0, -INFINITY}));
  EXPECT_EQ(reference("log_softmax/injected/log_of_softmax", x), (std::vector<double>{0, -1000}));
  const Input t = row(DType::f64, {0, -1000}, {{"target", 1}});
  EXPECT_EQ(native("cross_entropy/injected/neg_log_softmax", t), std::vector<double>{INFINITY});
  EXPECT_EQ(reference("cross_entropy/injected/neg_log_softmax", t), std::vector<double>{1000});
  // kl_div: exp(-800) = 0, p / 0 = inf where the divergence is 1 (0 - -800) = 800.
  const Input kl = rows2(DType::f64, {-800}, {1});
  EXPECT_EQ(native("kl_div/injected/ratio_of_exp", kl), std::vector<double>{INFINITY});
  EXPECT_EQ(reference("kl_div/injected/ratio_of_exp", kl), std::vector<double>{800});
  // bce: the sigmoid of 50 rounds to 1, log(1 - 1) = -inf, where the loss is 50 + log1p(e^-50).
  const Input bce = rows2(DType::f64, {50}, {0});
  EXPECT_EQ(native("bce_with_logits/injected/log_sigmoid_form", bce),
            std::vector<double>{INFINITY});
  EXPECT_EQ(reference("bce_with_logits/injected/log_sigmoid_form", bce), std::vector<double>{50});
}

TEST(NormalizationMutants, OnePassAndNarrowStatisticsLoseTheVariance) {
  // Rows of spread 1/2 around 1e4 (f32) / 1e8 (f64): the reference normalizes them to about +-1;
  // E[x^2] - E[x]^2 (or statistics in f16) leave no digit of the variance, the outputs miss by
  // more than 1/2 or are NaN.
  const Input ln = row(DType::f32, {10000, 10001, 10000, 10001});
  for (double y : reference("layer_norm/injected/one_pass_variance", ln))
    EXPECT_NEAR(std::fabs(y), 1.0, 1e-4);
  EXPECT_GT(max_difference("layer_norm/injected/one_pass_variance", ln), 0.5);
  EXPECT_GT(max_difference("layer_norm/injected/narrow_statistics", ln), 0.5);
  const Input bn = matrix(DType::f64, 4, 1, {1e8, 1e8 + 1, 1e8, 1e8 + 1});
  for (double y : reference("batch_norm/injected/one_pass_variance", bn))
    EXPECT_NEAR(std::fabs(y), 1.0, 1e-4);
  EXPECT_GT(max_difference("batch_norm/injected/one_pass_variance", bn), 0.5);
}

TEST(NormalizationMutants, UnscaledRmsNormOverflowsToZeroOutputs) {
  // x^2 = inf for |x| = 1e200: x / inf = 0 where rms_norm gives +-1.
  const Input in = row(DType::f64, {1e200, -1e200});
  for (double y : native("rms_norm/injected/unscaled", in)) EXPECT_EQ(y, 0.0);
  for (double y : reference("rms_norm/injected/unscaled", in)) EXPECT_NEAR(std::fabs(y), 1, 1e-12);
}

TEST(NormalizationMutants, EntropyAsALogOfAProductKeepsFewDigitsOfASmallEntropy) {
  // H(1e-5) = 1.15e-4: p^p ~ 1 - 1.15e-4 keeps the digits of H that fit next to 1, an error of
  // ~u / H ~ 1e-12 relative (thousands of ulps), though far below 1e-8.
  const Input in = row(DType::f64, {1e-5});
  const double y = native("entropy/injected/log_of_product", in).at(0);
  const double r = reference("entropy/injected/log_of_product", in).at(0);
  EXPECT_NEAR(r, -1e-5 * std::log(1e-5), 1e-18);
  EXPECT_GT(ulp_distance(DType::f64, y, r), 64);
  EXPECT_LT(std::fabs(y - r) / r, 1e-8);
}

TEST(NormalizationMutants, EachAgreesWithItsStableFormOnItsBenignInput) {
  for (const auto& c : cases()) expect_agrees(c.id, *c.good, 4);
}

}  // namespace
}  // namespace stabfuzz::mutant_check
