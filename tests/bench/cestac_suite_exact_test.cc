// Exact answers of the broad CESTAC calibration suite (harness/bench/cestac_suite_exact.cc):
// values known by hand, the issue's input, answers beyond the double range, the exact dot product.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/bench/cestac_suite.h"

namespace stabfuzz::calibrate::suite {
namespace {

double exact_value(KernelKind kind, const Problem& p) { return exact_answer(kind, p).value(); }

// (x - 1)^k expanded, coefficients from x^k down.
Problem binomial_horner(int k, double x) {
  Problem p;
  double c = 1;
  for (int j = 0; j <= k; ++j) {
    p.x.push_back(j % 2 ? -c : c);
    c = c * (k - j) / (j + 1);
  }
  p.a = x;
  return p;
}

TEST(CestacSuiteExact, HornerNearItsRootIsAPowerOfTwo) {
  for (int k : {3, 7, 12}) {
    const Exact e = exact_answer(KernelKind::horner_root, binomial_horner(k, 1 + 0x1p-10));
    EXPECT_FALSE(e.zero);
    EXPECT_EQ(e.value(), std::ldexp(1.0, -10 * k)) << k;
    EXPECT_EQ(e.lo, 0.0);
  }
  EXPECT_TRUE(exact_answer(KernelKind::horner_root, binomial_horner(5, 1.0)).zero);
}

TEST(CestacSuiteExact, HandKnownValues) {
  using K = KernelKind;
  const Problem data{{1, 2, 3, 4}, {}, 0, 0, 0, 0};
  EXPECT_EQ(exact_value(K::mixed_sum, data), 10);
  EXPECT_EQ(exact_value(K::kahan_sum, data), 10);
  EXPECT_EQ(exact_value(K::shifted_mean, data), 2.5);
  EXPECT_EQ(exact_value(K::var_one_pass, data), 1.25);
  EXPECT_EQ(exact_value(K::var_two_pass, data), 1.25);
  EXPECT_TRUE(exact_answer(K::var_one_pass, Problem{{3.1, 3.1, 3.1}, {}, 0, 0, 0, 0}).zero);
  EXPECT_EQ(exact_value(K::quadratic_root, Problem{{}, {}, 1, 3, 2, 0}), -1);  // roots -1, -2
  EXPECT_EQ(exact_value(K::dot_cancel, Problem{{1, 2}, {3, 4}, 0, 0, 0, 0}), 11);
  // y_1 = 1 - 5/4, y_2 = 1/2 - 5 y_1.
  EXPECT_EQ(exact_value(K::integral_recurrence, Problem{{}, {}, 0.25, 0, 0, 2}), 1.75);
  // x_2 = 2.5 x_1 - x_0 = 0.25, x_3 = 2.5 x_2 - x_1 = 0.125.
  EXPECT_EQ(exact_value(K::three_term_unstable, Problem{{}, {}, 1, 0.5, 2.5, 3}), 0.125);
  EXPECT_DOUBLE_EQ(exact_value(K::exp_minus_1, Problem{{}, {}, 1, 0, 0, 0}), std::exp(1.0) - 1);
  EXPECT_DOUBLE_EQ(exact_value(K::log1p, Problem{{}, {}, 1, 0, 0, 0}), std::log(2.0));
  EXPECT_EQ(exact_value(K::softmax_naive, Problem{{0.5, 0.5}, {}, 0, 0, 0, 1}), 0.5);
  EXPECT_EQ(exact_value(K::sqrt_div_chain, Problem{{}, {}, 3.7, 0, 0, 40}), 3.7);
  EXPECT_EQ(exact_value(K::product_ratio, Problem{{2, 3}, {3, 1}, 0, 0, 0, 0}), 1);
  EXPECT_TRUE(exact_answer(K::product_ratio, Problem{{0.7, 1.3}, {1.3, 0.7}, 0, 0, 0, 0}).zero);
}

// The issue's input: 3.24 true digits in f64 (mean = the f64 result, whose error is known).
TEST(CestacSuiteExact, IssueQuadraticInput) {
  const Problem p{{}, {}, kQuadA, kQuadB, kQuadC, 0};
  const Exact e = exact_answer(KernelKind::quadratic_root, p);
  const double native = kernels::quadratic_small_root(kQuadA, kQuadB, kQuadC);
  EXPECT_NEAR(true_digits(native, e, dtype_max_digits(DType::f64)), 3.24, 0.01);
}

TEST(CestacSuiteExact, AnswersBeyondTheDoubleRangeKeepTheirExponent) {
  // softmax([0, -2000])_1 = e^-2000 / (1 + e^-2000) ~ 2^-2885.4: 0 as a double, not as an Exact.
  const Exact e = exact_answer(KernelKind::softmax_naive, Problem{{0, -2000}, {}, 0, 0, 0, 1});
  EXPECT_FALSE(e.zero);
  EXPECT_EQ(e.value(), 0.0);
  EXPECT_EQ(e.exp, static_cast<long>(std::floor(-2000 / std::log(2.0))) + 1);
  EXPECT_GE(std::fabs(e.hi), 0.5);
  EXPECT_LT(std::fabs(e.hi), 1.0);
  // hi + lo carries more than a double: 1 + 2^-80 keeps its tail in lo.
  const Exact t = exact_answer(KernelKind::mixed_sum, Problem{{1, 0x1p-80}, {}, 0, 0, 0, 0});
  EXPECT_EQ(t.hi, 0.5);
  EXPECT_EQ(t.exp, 1);
  EXPECT_EQ(t.lo, 0x1p-81);
  EXPECT_EQ(t.value(), 1.0);
}

TEST(CestacSuiteExact, ExactDotKeepsWhatDoubleArithmeticCancels) {
  ExactDot d;
  d.add(1e16, 1);
  d.add(1, 1);
  d.add(-1e16, 1);
  EXPECT_EQ(d.value(), 1.0);  // (1e16 + 1) - 1e16 = 0 in doubles
  ExactDot p;
  p.add(1 + 0x1p-30, 1 - 0x1p-30);  // 1 - 2^-60: rounds to 1 as a double product
  p.add(-1, 1);
  EXPECT_EQ(p.value(), -0x1p-60);
}

}  // namespace
}  // namespace stabfuzz::calibrate::suite
