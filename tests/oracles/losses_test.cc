// Oracles of the log-softmax and loss families (oracles/losses.cc): log_softmax, cross_entropy,
// bce_with_logits, kl_div and entropy against long double, identities, conditions by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "oracles/normalization.h"
#include "stabfuzz/entropy.h"
#include "tests/oracles/normalization_check.h"

namespace stabfuzz::normalization_check {
namespace {

// ---- log_softmax and cross_entropy ------------------------------------------------------------

std::vector<LD> log_softmax_ld(const std::vector<double>& x) {
  LD m = -INFINITY, s = 0;
  for (double v : x) m = std::max<LD>(m, v);
  for (double v : x) s += std::exp(static_cast<LD>(v) - m);
  std::vector<LD> y;
  for (double v : x) y.push_back(static_cast<LD>(v) - m - std::log(s));
  return y;
}

TEST(LogSoftmaxOracle, SpecialValues) {
  for (DType d : {DType::f64, DType::f32}) {
    const auto one = oracle::log_softmax(row(d, {-3.5}));
    EXPECT_EQ(one.exact, std::vector<double>{0.0});
    EXPECT_EQ(one.cond, std::vector<double>{0.0});  // y = 0 and dy/dx = 0
    const auto zeros = oracle::log_softmax(row(d, {0.0, -0.0}));
    EXPECT_EQ(zeros.exact[0], to_dtype(d, -std::log(2.0L)));
    EXPECT_EQ(zeros.exact[1], zeros.exact[0]);
    EXPECT_EQ(zeros.cond, (std::vector<double>{0.0, 0.0}));  // every |x_j| is 0
  }
}

TEST(LogSoftmaxOracle, MatchesLongDouble) {
  for (DType d : {DType::f64, DType::f32}) {
    const Input in = row(d, {0.1, -0.7, 1.3, 2.0, -5.25});
    expect_matches(oracle::log_softmax(in), log_softmax_ld(in.args[0].values), d);
    const Input big = row(d, {700.5, 699.0, 650.0});  // exp would overflow without the shift
    expect_matches(oracle::log_softmax(big), log_softmax_ld(big.args[0].values), d);
  }
}

TEST(LogSoftmaxOracle, PermutationAndExactShiftIdentities) {
  const std::vector<double> x{0.75, -2.5, 3.125, 1.0};
  const auto a = oracle::log_softmax(row(DType::f64, x));
  const auto b = oracle::log_softmax(row(DType::f64, {x[2], x[0], x[3], x[1]}));
  EXPECT_EQ(b.exact, (std::vector<double>{a.exact[2], a.exact[0], a.exact[3], a.exact[1]}));
  std::vector<double> shifted = x;
  for (auto& v : shifted) v += 1024;  // exact: dyadic values
  EXPECT_EQ(oracle::log_softmax(row(DType::f64, shifted)).exact, a.exact);
}

TEST(LogSoftmaxOracle, DominantLogitUsesLog1p) {
  // y_0 = -log1p(e^-40) ~ -4.2e-18: log(1 + t) in double would give 0.
  const auto r = oracle::log_softmax(row(DType::f64, {0.0, -40.0}));
  EXPECT_EQ(r.exact[0], static_cast<double>(-std::log1p(std::exp(-40.0L))));
  EXPECT_LT(r.exact[0], 0.0);
  // cond_0 = s_1 |x_1| / |y_0| ~ 40 (s_1 ~ |y_0| ~ e^-40); cond_1 = (40 (1 - s_1)) / 40.
  EXPECT_NEAR(r.cond[0], 40.0, 1e-12);
  EXPECT_NEAR(r.cond[1], 1.0, 1e-12);
}

TEST(LogSoftmaxOracle, ConditionNumberByHand) {
  // x = [1, 0]: s_0 = e/(1+e); cond_0 = 1 (1 - s_0) / |y_0|, cond_1 = s_0 * 1 / |y_1|.
  const auto r = oracle::log_softmax(row(DType::f64, {1.0, 0.0}));
  const LD s0 = std::exp(1.0L) / (1 + std::exp(1.0L));
  EXPECT_NEAR(r.cond[0], static_cast<double>((1 - s0) / std::log1p(std::exp(-1.0L))), 1e-12);
  EXPECT_NEAR(r.cond[1], static_cast<double>(s0 / std::log1p(std::exp(1.0L))), 1e-12);
}

TEST(CrossEntropyOracle, IsMinusLogSoftmaxAtTheTarget) {
  const std::vector<double> x{0.3, -1.7, 2.25, 900.0, 899.5};
  for (DType d : {DType::f64, DType::f32}) {
    const auto ls = oracle::log_softmax(row(d, x));
    for (size_t t = 0; t < x.size(); ++t) {
      const auto ce = oracle::cross_entropy(row(d, x, {{"target", static_cast<double>(t)}}));
      ASSERT_TRUE(ce.decidable);
      EXPECT_EQ(ce.exact, std::vector<double>{-ls.exact[t]}) << t;
      EXPECT_EQ(ce.cond, std::vector<double>{ls.cond[t]}) << t;
    }
  }
  const auto two = oracle::cross_entropy(row(DType::f64, {0.0, 0.0}));
  EXPECT_EQ(two.exact, std::vector<double>{static_cast<double>(std::log(2.0L))});
  const auto one = oracle::cross_entropy(row(DType::f64, {5.0}));
  EXPECT_EQ(one.exact, std::vector<double>{0.0});
  EXPECT_EQ(one.cond, std::vector<double>{0.0});
  // x = [2, 0], t = 1: loss = 2 + log1p(e^-2), cond = s_0 |x_0| / loss.
  const auto h = oracle::cross_entropy(row(DType::f64, {2.0, 0.0}, {{"target", 1}}));
  const LD loss = 2 + std::log1p(std::exp(-2.0L)), s0 = 1 / (1 + std::exp(-2.0L));
  EXPECT_EQ(h.exact[0], static_cast<double>(loss));
  EXPECT_NEAR(h.cond[0], static_cast<double>(2 * s0 / loss), 1e-12);
}

// ---- bce_with_logits, kl_div, entropy ---------------------------------------------------------

TEST(BceOracle, MatchesLongDoubleAndSymmetry) {
  const std::vector<double> x{-3.5, -0.25, 0.0, 0.75, 2.0, 30.0}, z{0.0, 1.0, 0.5, 0.25, 0.75, 1.0};
  for (DType d : {DType::f64, DType::f32}) {
    const auto r = oracle::bce_with_logits(rows2(d, x, z));
    std::vector<LD> ref;
    for (size_t i = 0; i < x.size(); ++i)
      ref.push_back(std::max<LD>(x[i], 0) - static_cast<LD>(x[i]) * z[i] +
                    std::log1p(std::exp(-std::fabs(static_cast<LD>(x[i])))));
    expect_matches(r, ref, d);
    // l(x, z) = l(-x, 1 - z); 1 - z is exact for these z.
    std::vector<double> nx, nz;
    for (size_t i = 0; i < x.size(); ++i) nx.push_back(-x[i]), nz.push_back(1 - z[i]);
    EXPECT_EQ(oracle::bce_with_logits(rows2(d, nx, nz)).exact, r.exact);
  }
}

TEST(BceOracle, SpecialValuesAndCondition) {
  const auto r =
      oracle::bce_with_logits(rows2(DType::f64, {0.0, -0.0, 1000.0, 2.0}, {0.3, 1.0, 1.0, 0.25}));
  EXPECT_EQ(r.exact[0], static_cast<double>(std::log(2.0L)));
  EXPECT_EQ(r.exact[1], r.exact[0]);
  EXPECT_EQ(r.cond[0], 0.0);
  EXPECT_EQ(r.exact[2], 0.0);  // e^-1000 is below every double: the exact value rounds to 0
  EXPECT_GT(r.cond[2], 1e300);
  // x = 2, z = 1/4: cond = (|sigmoid(2) - 1/4| 2 + 1/2) / l.
  const LD l = std::log1p(std::exp(-2.0L)) + 1.5L, sg = 1 / (1 + std::exp(-2.0L));
  EXPECT_NEAR(r.cond[3], static_cast<double>((std::fabs(sg - 0.25L) * 2 + 0.5L) / l), 1e-12);
}

TEST(KlDivOracle, MatchesLongDoubleAndConventions) {
  const std::vector<double> lq{-0.5, -1.75, -3.0, -0.125}, p{0.25, 0.0, 0.5, 0.25};
  for (DType d : {DType::f64, DType::f32}) {
    const auto r = oracle::kl_div(rows2(d, lq, p));
    LD y = 0;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0) y += p[i] * (std::log(static_cast<LD>(p[i])) - lq[i]);
    expect_matches(r, {y}, d);
  }
  const auto zero = oracle::kl_div(rows2(DType::f64, {-7.0}, {0.0}));
  EXPECT_EQ(zero.exact, std::vector<double>{0.0});
  EXPECT_EQ(zero.cond, std::vector<double>{0.0});
  const auto same = oracle::kl_div(rows2(DType::f64, {0.0, -2.0}, {1.0, 0.0}));
  EXPECT_EQ(same.exact, std::vector<double>{0.0});
  EXPECT_EQ(same.cond, std::vector<double>{INFINITY});  // dy/dp = 1 at a zero output
  // p = [1/2, 1/2], logq = [-1, -2]: y = log(1/2) + 1.5, cond by the formula of normalization.h.
  const auto h = oracle::kl_div(rows2(DType::f64, {-1.0, -2.0}, {0.5, 0.5}));
  const LD lg = std::log(0.5L), y = lg + 1.5L;
  const LD num = 0.5L * (std::fabs(lg + 2) + 1) + 0.5L * (std::fabs(lg + 3) + 2);
  EXPECT_EQ(h.exact[0], static_cast<double>(y));
  EXPECT_NEAR(h.cond[0], static_cast<double>(num / y), 1e-12);
  // Joint permutation leaves the sum unchanged.
  EXPECT_EQ(
      oracle::kl_div(rows2(DType::f64, {-3.0, -0.5, -0.125, -1.75}, {0.5, 0.25, 0.25, 0.0})).exact,
      oracle::kl_div(rows2(DType::f64, lq, p)).exact);
}

TEST(KlDivOracle, CancellingTermsAreDecidedOrCounted) {
  // logq = log p rounded: y is the rounding residual, ~1e-17; the oracle still rounds it correctly.
  const std::vector<double> p{0.125, 0.375, 0.5};
  std::vector<double> lq;
  for (double v : p) lq.push_back(std::log(v));
  const auto r = oracle::kl_div(rows2(DType::f64, lq, p));
  ASSERT_TRUE(r.decidable);
  LD y = 0;
  for (size_t i = 0; i < p.size(); ++i) y += p[i] * (std::log(static_cast<LD>(p[i])) - lq[i]);
  EXPECT_NEAR(r.exact[0], static_cast<double>(y), 1e-3 * std::fabs(static_cast<double>(y)));
  EXPECT_GT(r.cond[0], 1e14);
}

TEST(EntropyOracle, ValuesConditionAndConventions) {
  const auto u = oracle::entropy(row(DType::f64, {0.25, 0.25, 0.25, 0.25}));
  const LD h = std::log(4.0L);
  EXPECT_EQ(u.exact, std::vector<double>{static_cast<double>(h)});
  EXPECT_NEAR(u.cond[0], static_cast<double>(std::fabs(1 - h) / h), 1e-12);
  const auto ones = oracle::entropy(row(DType::f32, {0.0, 1.0, 0.0}));
  EXPECT_EQ(ones.exact, std::vector<double>{0.0});
  EXPECT_EQ(ones.cond, std::vector<double>{INFINITY});
  const auto zeros = oracle::entropy(row(DType::f32, {0.0, -0.0}));
  EXPECT_EQ(zeros.cond, std::vector<double>{0.0});
  SeededEntropy e(9, 9);
  for (DType d : {DType::f64, DType::f32}) {
    std::vector<double> p(50);
    for (auto& v : p) v = round_to(d, e.uniform());
    LD s = 0;
    for (double v : p) s -= v > 0 ? v * std::log(static_cast<LD>(v)) : 0;
    const auto r = oracle::entropy(row(d, p));
    expect_matches(r, {s}, d);
    std::reverse(p.begin(), p.end());
    EXPECT_EQ(oracle::entropy(row(d, p)).exact, r.exact);
  }
  // p near 1: -p log p ~ 1e-7 from log of an exact input, no cancellation.
  const auto n1 = oracle::entropy(row(DType::f64, {1 - 0x1p-24}));
  EXPECT_EQ(n1.exact[0], static_cast<double>(-(1 - 0x1p-24L) * std::log1p(-0x1p-24L)));
}

}  // namespace
}  // namespace stabfuzz::normalization_check
