// Regime building blocks: row lengths, exp thresholds per dtype, rows and inputs rounded to the
// dtype.
#include "families/regimes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace stabfuzz {
namespace {

using regime::make_input;
using regime::row_input;
using regime::row_length;

TEST(RegimeRowLength, StaysInOneToMaxAndIsLogUniform) {
  SeededEntropy e(5, 0);
  for (size_t max_n : {size_t{1}, size_t{7}, regime::kMaxRowLength})
    for (int k = 0; k < 500; ++k) {
      const size_t n = row_length(e, max_n);
      ASSERT_GE(n, 1u) << max_n;
      ASSERT_LE(n, max_n);
    }
  // Log-uniform over [1, 4096]: P(n <= 64) = log(65) / log(4097) = 0.502; short and long rows.
  int short_rows = 0, le64 = 0, long_rows = 0;
  constexpr int kDraws = 4000;
  for (int k = 0; k < kDraws; ++k) {
    const size_t n = row_length(e);
    short_rows += n <= 4;
    le64 += n <= 64;
    long_rows += n >= 1024;
  }
  EXPECT_NEAR(static_cast<double>(le64) / kDraws, 0.502, 0.04);
  EXPECT_GT(short_rows, kDraws / 10);  // log(5) / log(4097) = 0.19
  EXPECT_GT(long_rows, kDraws / 10);   // 1 - log(1024) / log(4097) = 0.17
}

TEST(RegimeThresholds, ExpOverflowAndUnderflowPerDtype) {
  // log of the largest finite value: DBL_MAX, FLT_MAX, 65504, bf16's 2^127 (2 - 2^-7).
  EXPECT_NEAR(regime::exp_overflow_threshold(DType::f64), 709.7827, 1e-4);
  EXPECT_NEAR(regime::exp_overflow_threshold(DType::f32), 88.7228, 1e-4);
  EXPECT_NEAR(regime::exp_overflow_threshold(DType::f16), 11.0898, 1e-4);
  EXPECT_NEAR(regime::exp_overflow_threshold(DType::bf16), 88.7189, 1e-4);
  // log of the smallest normal: 2^-1022, 2^-126, 2^-14, 2^-126.
  EXPECT_NEAR(regime::exp_underflow_threshold(DType::f64), -1022 * std::log(2.0), 1e-9);
  EXPECT_NEAR(regime::exp_underflow_threshold(DType::f32), -87.3365, 1e-4);
  EXPECT_NEAR(regime::exp_underflow_threshold(DType::f16), -9.7041, 1e-4);
  EXPECT_NEAR(regime::exp_underflow_threshold(DType::bf16), -87.3365, 1e-4);
  // Just below the threshold e^x is finite in the format, just above it is not.
  const double t = regime::exp_overflow_threshold(DType::f32);
  EXPECT_LT(std::exp(t - 1e-4), 3.4028234663852886e38);
  EXPECT_GT(std::exp(t + 1e-4), 3.4028234663852886e38);
}

TEST(RegimeRows, RowInputIsOneRowRoundedToTheDtype) {
  const Input in = row_input(DType::f32, {0.1, 1.0, -2.5});
  EXPECT_EQ(in.dtype, DType::f32);
  ASSERT_EQ(in.args.size(), 1u);
  EXPECT_EQ(in.args[0].shape, std::vector<int64_t>{3});
  EXPECT_EQ(in.args[0].values, (std::vector<double>{0.1f, 1.0, -2.5}));
  EXPECT_TRUE(in.params.empty());
  // f16: 0.1 rounds to 1638 / 2^14, 1 + 2^-11 (a tie) to 1, 70000 beyond 65520 to inf.
  const Input h = row_input(DType::f16, {0.1, 1 + 0x1p-11, 70000});
  EXPECT_EQ(h.args[0].values, (std::vector<double>{1638 * 0x1p-14, 1.0, INFINITY}));
  EXPECT_EQ(row_input(DType::f64, {}).args[0].shape, std::vector<int64_t>{0});
}

TEST(RegimeRows, MakeInputRoundsEveryTensorButNotTheParameters) {
  const Input in =
      make_input(DType::f32, {Tensor{{2, 2}, {0.1, 0.2, 0.3, 0.4}}, Tensor{{1}, {1e40}}},
                 {{"eps", 0.1}, {"causal", 1}});
  EXPECT_EQ(in.dtype, DType::f32);
  ASSERT_EQ(in.args.size(), 2u);
  EXPECT_EQ(in.args[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(in.args[0].values, (std::vector<double>{0.1f, 0.2f, 0.3f, 0.4f}));
  EXPECT_EQ(in.args[1].values, std::vector<double>{INFINITY});  // beyond FLT_MAX
  ASSERT_EQ(in.params.size(), 2u);
  EXPECT_EQ(in.params[0].second, 0.1);  // the double 0.1, not the float
  EXPECT_EQ(in.param("causal", 0), 1.0);
}

}  // namespace
}  // namespace stabfuzz
