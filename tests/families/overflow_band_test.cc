// The overflow band [m/4, 4m]: which rows come near it, and f16/bf16 rows scaled out of it.
#include "families/overflow_band.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace stabfuzz {
namespace {

using namespace families::overflow_band;  // NOLINT: the functions under test
using Row = std::vector<double>;

TEST(OverflowBand, SumIsNearWhenItsMagnitudeLiesInTheBand) {
  EXPECT_TRUE(sum_near_overflow({25, 25}, 100));        // 50
  EXPECT_TRUE(sum_near_overflow({-300, -100}, 100));    // |-400| = 4m, the band's end
  EXPECT_TRUE(sum_near_overflow({10, 15}, 100));        // 25 = m/4, the band's start
  EXPECT_FALSE(sum_near_overflow({10, 14}, 100));       // 24
  EXPECT_FALSE(sum_near_overflow({300, 101}, 100));     // 401: clearly overflowing
  EXPECT_FALSE(sum_near_overflow({1000, -1000}, 100));  // terms in it, the sum 0
}

TEST(OverflowBand, PrefixIsNearWhenAnyPrefixReachesAQuarter) {
  EXPECT_TRUE(prefix_near_overflow({30, -30}, 100));  // the first prefix, 30
  EXPECT_FALSE(sum_near_overflow({30, -30}, 100));
  EXPECT_TRUE(prefix_near_overflow({1000}, 100));  // far beyond: no clear side for a scan
  EXPECT_FALSE(prefix_near_overflow({10, 10, -5}, 100));
}

TEST(OverflowBand, VarianceOrItsRootInTheBand) {
  // {0, 8}: mean 4, unbiased var 32: in [25, 400].
  EXPECT_TRUE(var_near_overflow({0, 8}, 100));
  // {0, 4}, m = 1: var 8 > 4 m, its root 2.83 in [0.25, 4].
  EXPECT_TRUE(var_near_overflow({0, 4}, 1));
  EXPECT_FALSE(var_near_overflow({0, 2}, 100));  // var 2, root 1.41
  EXPECT_FALSE(var_near_overflow({50}, 100));    // one value: var 0
  // {3, 4}: norm 5.
  EXPECT_TRUE(norm_near_overflow({3, 4}, 10));
  EXPECT_FALSE(norm_near_overflow({3, 4}, 100));
  EXPECT_FALSE(norm_near_overflow({3, 4}, 1));
}

// A sampler that always gives `row`, as the dtype holds it.
std::function<Input(Entropy&, DType)> fixed(Row row) {
  return [row](Entropy&, DType d) {
    Input in;
    in.dtype = d;
    in.args = {Tensor{{static_cast<int64_t>(row.size())}, row}};
    return in;
  };
}

Row clear(Row row, DType d) {
  SeededEntropy e(1, 0);
  return clear_of_overflow(fixed(std::move(row)), sum_near_overflow)(e, d).args[0].values;
}

TEST(OverflowBand, ClearOfOverflowScalesLowPrecisionRowsByQuarters) {
  // f16 (max 65504): the sum 60000 is in [16376, 262016]; 15000 is not.
  EXPECT_EQ(clear({30000, 30000}, DType::f16), (Row{7500, 7500}));
  EXPECT_EQ(clear({100, 200}, DType::f16), (Row{100, 200}));
  EXPECT_EQ(clear({60000, 60000, 60000, 60000, 60000}, DType::f16), Row(5, 60000));  // inf: kept
  // bf16 (max 2^128 (1 - 2^-8)): 2^128 and 2^126 are in the band, 2^124 is not.
  EXPECT_EQ(clear({0x1p127, 0x1p127}, DType::bf16), (Row{0x1p123, 0x1p123}));
  // f32 and f64 rows are never scaled.
  EXPECT_EQ(clear({1e38, 1e38}, DType::f32), (Row{1e38, 1e38}));
  EXPECT_EQ(clear({1e308, 1e308}, DType::f64), (Row{1e308, 1e308}));
}

}  // namespace
}  // namespace stabfuzz
