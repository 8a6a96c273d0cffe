// The fuzzer's feedback cells (harness/fuzz/feedback.cc): error and digits buckets, the cells an
// execution sets per feedback mode, cumulative cells that only larger errors extend.
#include "harness/fuzz/feedback.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stabfuzz::fuzz {
namespace {

TEST(Feedback, BucketsOrderErrorsAndDigits) {
  Verdict a, b, c;
  a.max_ratio = 0.5;
  b.max_ratio = 4;
  c.max_ratio = 1e6;
  EXPECT_LT(ratio_bucket(a), ratio_bucket(b));
  EXPECT_LT(ratio_bucket(b), ratio_bucket(c));
  Verdict nf;
  nf.nonfinite = true;
  nf.max_ratio = INFINITY;
  EXPECT_EQ(ratio_bucket(nf), kRatioBuckets - 2);
  Verdict u;
  u.undecidable = true;
  EXPECT_EQ(ratio_bucket(u), kRatioBuckets - 1);
  a.digits_deficit = -3;
  b.digits_deficit = 2;
  EXPECT_LT(digits_bucket(a), digits_bucket(b));
}

TEST(Feedback, CoverageModeTouchesOnlyTheConstantCell) {
  Verdict v;
  v.max_ratio = 100;
  v.has_cestac = true;
  v.digits_deficit = 1;
  v.log.sites.push_back({cestac::Kind::cancellation, 0x401000, 3});
  begin_execution();
  record(Feedback::coverage, v, DType::f32, 2);
  EXPECT_EQ(cells_set(), 1u);
  begin_execution();
  record(Feedback::error, v, DType::f32, 2);
  // The constant, every error bucket up to v's, every digits bucket up to v's, and the site at
  // count magnitudes 1 and 2 (count 3).
  EXPECT_EQ(cells_set(), 1 + (ratio_bucket(v) + 1) + (digits_bucket(v) + 1) + 2u);
  begin_execution();
  EXPECT_EQ(cells_set(), 1u);  // cleared per execution
}

// Cumulative cells: an input with a smaller error than one seen before sets no cell that the
// larger one did not, so libFuzzer finds no new feature in it; a larger error does.
TEST(Feedback, OnlyLargerErrorsSetNewCells) {
  Verdict big, small, bigger;
  big.max_ratio = 1e-3;
  small.max_ratio = 1e-9;
  bigger.max_ratio = 0.5;
  begin_execution();
  record(Feedback::error, big, DType::f64, 1);
  const size_t after_big = cells_set();
  record(Feedback::error, small, DType::f64, 1);
  EXPECT_EQ(cells_set(), after_big);
  record(Feedback::error, bigger, DType::f64, 1);
  EXPECT_EQ(cells_set(), after_big + (ratio_bucket(bigger) - ratio_bucket(big)));
  Verdict nf;  // a non-finite output lies above every finite error
  nf.nonfinite = true;
  nf.max_ratio = INFINITY;
  record(Feedback::error, nf, DType::f64, 1);
  EXPECT_EQ(cells_set(), 1 + kRatioBuckets - 1);
}

}  // namespace
}  // namespace stabfuzz::fuzz
