// The planted elementwise formulations (injectors/elementwise.cc): their registry rows, each caught
// on its failing region and fine on a benign input, and each one's error where it breaks: a NaN or
// an infinity past an overflow threshold, or the digits that a cancellation leaves.
#include "injectors/elementwise.h"

#include <cmath>

#include "tests/injectors/mutant_check.h"

namespace stabfuzz::mutant_check {
namespace {

std::vector<Case> cases() {
  const DType f64 = DType::f64;
  return {
      {"exp/injected/repeated_squaring", row(f64, {0.5}), row(f64, {0})},
      {"log/injected/neg_log_reciprocal", row(f64, {0x1p-1060}), row(f64, {2})},
      {"log1p/injected/log_one_plus", row(f64, {1e-20}), row(f64, {1})},
      {"expm1/injected/exp_minus_one", row(f64, {1e-10}), row(f64, {5})},
      {"tanh/injected/exp_ratio", row(f64, {1e-10}), row(f64, {-30})},
      {"erf/injected/one_minus_erfc", row(f64, {1e-10}), row(f64, {10})},
      {"sigmoid/injected/exp_over_one_plus_exp", row(f64, {800}), row(f64, {0})},
      {"log_sigmoid/injected/neg_log_one_plus_exp", row(f64, {-800}), row(f64, {0})},
      {"softplus/injected/log_one_plus_exp", row(f64, {800}), row(f64, {0})},
      {"silu/injected/x_exp_over_one_plus_exp", row(f64, {800}), row(f64, {0})},
      {"gelu/injected/one_plus_erf", row(f64, {-10}), row(f64, {1})},
      {"gelu_tanh/injected/one_plus_tanh", row(f64, {-10}), row(f64, {0})},
  };
}

// The one output of target `id` on x, and of its family's reference target.
double mutant_at(const char* id, double x, DType d = DType::f64) {
  return native(id, row(d, {x})).at(0);
}
double reference_at(const char* id, double x, DType d = DType::f64) {
  return reference(id, row(d, {x})).at(0);
}

double relative_error(const char* id, double x) {
  const double r = reference_at(id, x);
  return std::fabs(mutant_at(id, x) - r) / std::fabs(r);
}

TEST(ElementwiseMutants, RegisteredUnderTheirIdsWithAHandPickedCaseEach) {
  expect_registered(injectors::elementwise_mutants(), cases());
}

TEST(ElementwiseMutants, EachIsCaughtInItsFailingRegion) { expect_caught(cases()); }

TEST(ElementwiseMutants, EachIsFineOnABenignInput) { expect_benign(cases()); }

TEST(ElementwiseMutants, OverflowGivesNanOrInfinityWhereTheResultIsFinite) {
  // e^800 = inf (f64): inf / inf, log(inf), 1 / (subnormal) = inf.
  EXPECT_TRUE(std::isnan(mutant_at("sigmoid/injected/exp_over_one_plus_exp", 800)));
  EXPECT_EQ(reference_at("sigmoid/injected/exp_over_one_plus_exp", 800), 1.0);
  EXPECT_TRUE(std::isnan(mutant_at("silu/injected/x_exp_over_one_plus_exp", 800)));
  EXPECT_EQ(reference_at("silu/injected/x_exp_over_one_plus_exp", 800), 800.0);
  EXPECT_EQ(mutant_at("softplus/injected/log_one_plus_exp", 800), INFINITY);
  EXPECT_EQ(reference_at("softplus/injected/log_one_plus_exp", 800), 800.0);
  EXPECT_EQ(mutant_at("log_sigmoid/injected/neg_log_one_plus_exp", -800), -INFINITY);
  EXPECT_EQ(reference_at("log_sigmoid/injected/neg_log_one_plus_exp", -800), -800.0);
  EXPECT_EQ(mutant_at("log/injected/neg_log_reciprocal", 0x1p-1060), -INFINITY);
  EXPECT_DOUBLE_EQ(reference_at("log/injected/neg_log_reciprocal", 0x1p-1060),
                   -1060 * std::log(2.0));
  // tanh's e^2x overflows at x > 354.9 (f64), 44.4 (f32).
  EXPECT_TRUE(std::isnan(mutant_at("tanh/injected/exp_ratio", 400)));
  EXPECT_TRUE(std::isnan(mutant_at("tanh/injected/exp_ratio", 45, DType::f32)));
  EXPECT_EQ(mutant_at("tanh/injected/exp_ratio", 44, DType::f32), 1.0);
  EXPECT_EQ(reference_at("tanh/injected/exp_ratio", 45, DType::f32), 1.0);
}

TEST(ElementwiseMutants, CancellationLeavesOnlyTheDigitsNextToOne) {
  // 1 + 1e-20 rounds to 1: log1p's every digit is gone.
  EXPECT_EQ(mutant_at("log1p/injected/log_one_plus", 1e-20), 0.0);
  EXPECT_EQ(reference_at("log1p/injected/log_one_plus", 1e-20), 1e-20);
  // e^x - 1, (e^2x - 1) / (e^2x + 1) and 1 - erfc(x) at x = 1e-10 keep what of x survives next to
  // 1: a relative error up to u / 1e-10 ~ 1.1e-6, far above the stable forms' u.
  for (const char* id :
       {"expm1/injected/exp_minus_one", "tanh/injected/exp_ratio", "erf/injected/one_minus_erfc"}) {
    const double e = relative_error(id, 1e-10);
    EXPECT_GT(e, 1e-9) << id;
    EXPECT_LT(e, 2.3e-6) << id;
  }
  // gelu's 1 + erf(x / sqrt 2) and gelu_tanh's 1 + tanh(u) are exactly 0 at x = -10: the result is
  // 0 where gelu(-10) ~ -7.6e-23 and gelu_tanh(-10) is a tiny negative number.
  for (const char* id : {"gelu/injected/one_plus_erf", "gelu_tanh/injected/one_plus_tanh"}) {
    EXPECT_EQ(mutant_at(id, -10), 0.0) << id;
    EXPECT_LT(reference_at(id, -10), 0.0) << id;
  }
  EXPECT_NEAR(reference_at("gelu/injected/one_plus_erf", -10), -7.6e-23, 0.1e-23);
  // 1 + e^-x rounds to 1 for x > 37 (f64): log_sigmoid(40) = -e^-40 and softplus(-40) = e^-40
  // both become 0.
  EXPECT_EQ(mutant_at("log_sigmoid/injected/neg_log_one_plus_exp", 40), 0.0);
  EXPECT_DOUBLE_EQ(reference_at("log_sigmoid/injected/neg_log_one_plus_exp", 40), -std::exp(-40.0));
  EXPECT_EQ(mutant_at("softplus/injected/log_one_plus_exp", -40), 0.0);
  EXPECT_DOUBLE_EQ(reference_at("softplus/injected/log_one_plus_exp", -40), std::exp(-40.0));
}

TEST(ElementwiseMutants, RepeatedSquaringAmplifiesExpsRoundingAThousandfold) {
  // Ten squarings double the relative error of e^(x/1024) ten times: hundreds of ulps where one
  // call of exp is within one, but never past ~1024 u.
  double worst = 0;
  for (double x : {0.5, 0.75, -0.3, 1.5, 3.0}) {
    const double d = ulp_distance(DType::f64, mutant_at("exp/injected/repeated_squaring", x),
                                  reference_at("exp/injected/repeated_squaring", x));
    EXPECT_LE(d, 1100) << x;
    worst = std::max(worst, d);
  }
  EXPECT_GT(worst, 32);
  EXPECT_EQ(mutant_at("exp/injected/repeated_squaring", 0), 1.0);  // e^0 = 1, squared exactly
}

TEST(ElementwiseMutants, EachAgreesWithItsStableFormOnItsBenignInput) {
  for (const auto& c : cases()) expect_agrees(c.id, *c.good, 4);
}

}  // namespace
}  // namespace stabfuzz::mutant_check
