// Entropy (harness/core/entropy.cc): the draws a value regime makes, from SeededEntropy's streams.
#include "stabfuzz/entropy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

namespace stabfuzz {
namespace {

std::vector<uint64_t> words(uint64_t seed, uint64_t stream, int n) {
  SeededEntropy e(seed, stream);
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(e.next_u64());
  return out;
}

TEST(SeededEntropy, TheSameSeedAndStreamRepeat) { EXPECT_EQ(words(7, 3, 100), words(7, 3, 100)); }

TEST(SeededEntropy, OtherSeedsAndStreamsDiffer) {
  const auto a = words(7, 3, 100);
  EXPECT_NE(a, words(8, 3, 100));
  EXPECT_NE(a, words(7, 4, 100));
  EXPECT_EQ(std::set<uint64_t>(a.begin(), a.end()).size(), a.size());  // no repeated word
}

TEST(Entropy, UniformIsInItsHalfOpenRange) {
  SeededEntropy e(1, 0);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = e.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    const double v = e.uniform(-3, 5);
    ASSERT_GE(v, -3.0);
    ASSERT_LT(v, 5.0);
  }
  EXPECT_LT(lo, 0.01);  // covers the range
  EXPECT_GT(hi, 0.99);
}

TEST(Entropy, BelowAndRangeStayInBoundsAndReachBothEnds) {
  SeededEntropy e(2, 0);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_LT(e.below(10), 10u);
    ASSERT_EQ(e.below(1), 0u);
    const int64_t r = e.range(-2, 2);
    ASSERT_GE(r, -2);
    ASSERT_LE(r, 2);
    seen.insert(r);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(e.range(5, 5), 5);
}

TEST(Entropy, ChanceOfZeroAndOne) {
  SeededEntropy e(3, 0);
  int half = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(e.chance(0));
    EXPECT_TRUE(e.chance(1));
    half += e.chance(0.5);
  }
  EXPECT_GT(half, 400);
  EXPECT_LT(half, 600);
}

TEST(Entropy, NormalHasMeanZeroAndUnitVariance) {
  SeededEntropy e(4, 0);
  const int n = 20000;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const double x = e.normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += x * x;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(sq / n - mean * mean, 1.0, 0.05);
}

TEST(Entropy, LogUniformIsUniformInLogScale) {
  SeededEntropy e(5, 0);
  const int n = 10000;
  int below_geometric_mean = 0;
  for (int i = 0; i < n; ++i) {
    const double x = e.log_uniform(1e-6, 1e6);
    ASSERT_GE(x, 1e-6 * (1 - 1e-12));
    ASSERT_LE(x, 1e6 * (1 + 1e-12));
    below_geometric_mean += x < 1;
  }
  // Half the draws below 1, the geometric mean of the bounds (an arithmetic draw: almost none).
  EXPECT_GT(below_geometric_mean, n * 0.45);
  EXPECT_LT(below_geometric_mean, n * 0.55);
}

}  // namespace
}  // namespace stabfuzz
