// softmax/injected/no_max_subtract (injectors/softmax.cc): its registry row, and e^x / sum e^x
// without the max shift: NaN where e^x overflows or every e^x underflows, exact elsewhere.
#include "injectors/softmax.h"

#include <cmath>

#include "tests/injectors/mutant_check.h"

namespace stabfuzz::mutant_check {
namespace {

constexpr const char* kNoMax = "softmax/injected/no_max_subtract";

std::vector<Case> cases() {
  return {{kNoMax, row(DType::f64, {1000, 0}), row(DType::f64, {0, 0})}};
}

TEST(SoftmaxMutants, RegisteredUnderTheirIdsWithAHandPickedCaseEach) {
  expect_registered(injectors::softmax_injected_targets(), cases());
}

TEST(SoftmaxMutants, EachIsCaughtInItsFailingRegion) { expect_caught(cases()); }

TEST(SoftmaxMutants, EachIsFineOnABenignInput) { expect_benign(cases()); }

TEST(SoftmaxMutants, NoMaxSubtractIsNanPastTheExpOverflowThreshold) {
  // e^1000 = inf: inf / inf = NaN for the largest logit, 1 / inf = 0 for the other, where the
  // softmax is [1, e^-1000 = 0].
  const auto y = native(kNoMax, row(DType::f64, {1000, 0}));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(reference(kNoMax, row(DType::f64, {1000, 0})), (std::vector<double>{1, 0}));
  // The threshold is the dtype's: 89 overflows e^x in f32 (and bf16), 12 in f16 (max 65504),
  // while 88 (f32) and 11 (f16) still give the stable result.
  EXPECT_TRUE(std::isnan(native(kNoMax, row(DType::f32, {89, 0}))[0]));
  EXPECT_TRUE(std::isnan(native(kNoMax, row(DType::bf16, {89, 0}))[0]));
  EXPECT_TRUE(std::isnan(native(kNoMax, row(DType::f16, {12, 0}))[0]));
  expect_agrees(kNoMax, row(DType::f32, {88, 0}), 1);
  expect_agrees(kNoMax, row(DType::f16, {11, 0}), 1);
}

TEST(SoftmaxMutants, NoMaxSubtractIsNanWhereEveryExpUnderflows) {
  // Every e^x is 0 below -745: 0 / 0 = NaN where the softmax of equal logits is 1/2 each.
  const Input in = row(DType::f64, {-800, -800});
  for (double y : native(kNoMax, in)) EXPECT_TRUE(std::isnan(y)) << y;
  EXPECT_EQ(reference(kNoMax, in), (std::vector<double>{0.5, 0.5}));
}

TEST(SoftmaxMutants, NoMaxSubtractAgreesOnModerateLogits) {
  EXPECT_EQ(native(kNoMax, row(DType::f64, {0, 0})), (std::vector<double>{0.5, 0.5}));
  expect_agrees(kNoMax, row(DType::f64, {1, 2, 3, -4}), 2);
  expect_agrees(kNoMax, row(DType::f32, {0.5, -1.25, 3}), 2);
}

}  // namespace
}  // namespace stabfuzz::mutant_check
