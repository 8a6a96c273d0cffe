// The reduction families as declared: contracts, tolerances, oracle bindings and regimes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz {
namespace {

using regime::row_input;
using Names = std::vector<std::string>;

const Family& family(const char* name) {
  if (const Family* f = default_registry().find_family(name)) return *f;
  throw std::logic_error(std::string("no family ") + name);
}

Input with_unbiased(Input in, double b) {
  in.set_param("unbiased", b);
  return in;
}

// Rows a and b (of any lengths) as one input.
Input pair_input(DType d, std::vector<double> a, std::vector<double> b) {
  Input in = row_input(d, std::move(a));
  in.args.push_back(row_input(d, std::move(b)).args[0]);
  return in;
}

// Each family with the regimes it declares (the registry appends injectors' regimes to some).
TEST(ReductionFamilies, DeclaredInOrderWithTheirRegimes) {
  const Names sums{"mean_shifted",  "near_constant", "cancellation",
                   "near_overflow", "tiny",          "mixed_scales"};
  const Names moments{"mean_shifted",  "near_constant", "huge_shifted",
                      "near_overflow", "tiny",          "mixed_scales"};
  const Names logits{"small",           "near_overflow",      "large",       "all_very_negative",
                     "neg_inf_entries", "dominant_near_zero", "mixed_scales"};
  std::vector<std::pair<std::string, Names>> declared;
  for (const Family& f : families::reductions_families()) {
    declared.emplace_back(f.name, Names{});
    for (const Regime& r : f.regimes) declared.back().second.push_back(r.name);
    // Only mean and std cannot overflow where their inputs are finite.
    EXPECT_EQ(f.finite_outputs, f.name == "mean" || f.name == "std") << f.name;
  }
  const std::vector<std::pair<std::string, Names>> expected = {
      {"sum", sums},
      {"mean", sums},
      {"var", moments},
      {"std", moments},
      {"l2_norm",
       {"normal", "huge_squares", "near_overflow", "tiny_squares", "mixed_scales", "constant"}},
      {"logsumexp", logits},
      {"cumsum", sums},
      {"logcumsumexp", logits},
      {"logaddexp",
       {"small", "near_overflow", "far_apart", "result_near_zero", "neg_inf_entries", "large"}}};
  EXPECT_EQ(declared, expected);
}

TEST(SumFamily, ValidationRejectsBadRows) {
  const Family& f = family("sum");
  EXPECT_FALSE(f.validate(row_input(DType::f64, {1.0, -0.0})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {1.0, NAN})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {1.0, INFINITY})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {-INFINITY})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {})));
  EXPECT_TRUE(f.validate(with_unbiased(row_input(DType::f64, {1.0}), 1)));  // no such parameter
  Input bad = row_input(DType::f32, {1.0});
  bad.args[0].values[0] = 0.1;  // not a float
  EXPECT_TRUE(f.validate(bad));
  EXPECT_TRUE(family("cumsum").validate(pair_input(DType::f64, {1.0}, {1.0})));
}

TEST(VarianceFamily, ValidationOfUnbiased) {
  for (const char* name : {"var", "std"}) {
    const Family& f = family(name);
    EXPECT_FALSE(f.validate(row_input(DType::f64, {1.0, 2.0})));
    EXPECT_TRUE(f.validate(row_input(DType::f64, {1.0})));  // n - unbiased = 0
    EXPECT_FALSE(f.validate(with_unbiased(row_input(DType::f64, {1.0}), 0)));
    EXPECT_TRUE(f.validate(with_unbiased(row_input(DType::f64, {1.0, 2.0}), 0.5)));
    EXPECT_TRUE(f.validate(row_input(DType::f64, {1.0, NAN})));
    EXPECT_TRUE(f.validate(row_input(DType::f64, {1.0, -INFINITY})));
  }
}

TEST(ReductionFamilies, TolerancesGrowLikeLogN) {
  const Family& s = family("sum");
  EXPECT_EQ(s.tolerance_ulps(DType::f64, 1), 1.0);      // one term: only the final rounding
  EXPECT_EQ(s.tolerance_ulps(DType::f64, 8), 8.0);      // 7 sequential additions
  EXPECT_EQ(s.tolerance_ulps(DType::f64, 4096), 17.0);  // 7 + log2(512) levels
  EXPECT_EQ(family("cumsum").tolerance_ulps(DType::f32, 4096), 25.0);
  EXPECT_LT(family("l2_norm").tolerance_ulps(DType::f32, 4096), s.tolerance_ulps(DType::f32, 4096));
}

// n = 8: pairwise depth D = 7, scan depth S = 6.
TEST(ReductionFamilies, ToleranceOfEachFamilyByHand) {
  const auto tol = [](const char* f, DType d, size_t n) { return family(f).tolerance_ulps(d, n); };
  EXPECT_EQ(tol("mean", DType::f64, 8), 9.0);           // D + 2
  EXPECT_EQ(tol("var", DType::f64, 8), 13.0);           // D + 6
  EXPECT_EQ(tol("std", DType::f64, 8), 7.5);            // (D + 5) / 2 + 1.5
  EXPECT_EQ(tol("l2_norm", DType::f64, 8), 5.5);        // (D + 1) / 2 + 1.5
  EXPECT_EQ(tol("logsumexp", DType::f64, 8), 26.0);     // 2 D + 12
  EXPECT_EQ(tol("cumsum", DType::f64, 8), 7.0);         // S + 1
  EXPECT_EQ(tol("logcumsumexp", DType::f64, 8), 24.0);  // 2 S + 12
  EXPECT_EQ(tol("logaddexp", DType::f64, 4096), 12.0);  // no sum
  // A divisor n or n - 1 that the format cannot hold costs one more: 4095 in f16 (11 bits),
  // 257 in bf16 (8 bits); 4096, 256 and 255 are exact.
  EXPECT_EQ(tol("mean", DType::f64, 4096), 18.0);  // D(4096) = 16
  EXPECT_EQ(tol("mean", DType::f16, 4096), 19.0);
  EXPECT_EQ(tol("mean", DType::bf16, 256), 14.0);  // D(256) = 12
  EXPECT_EQ(tol("mean", DType::bf16, 257), 16.0);  // D(257) = 13, + 1
  EXPECT_EQ(tol("var", DType::bf16, 257), 20.0);
  EXPECT_EQ(tol("std", DType::f16, 4096), 12.5);
}

TEST(ReductionFamilies, OraclesAreBoundToTheirOperators) {
  const auto y = [](const char* f, const Input& in) { return family(f).oracle(in).exact; };
  const Input x = row_input(DType::f64, {1, 2, 3});
  const double ln2 = std::log(2.0);
  EXPECT_EQ(y("sum", x), std::vector<double>{6});
  EXPECT_EQ(y("mean", x), std::vector<double>{2});
  EXPECT_EQ(y("var", x), std::vector<double>{1});  // unbiased by default: 2 / (3 - 1)
  EXPECT_EQ(y("var", with_unbiased(x, 0)), std::vector<double>{2.0 / 3});
  EXPECT_EQ(y("std", row_input(DType::f64, {1, 5})), std::vector<double>{std::sqrt(8.0)});
  EXPECT_EQ(y("l2_norm", row_input(DType::f64, {3, -4})), std::vector<double>{5});
  EXPECT_EQ(y("cumsum", x), (std::vector<double>{1, 3, 6}));
  EXPECT_EQ(y("logsumexp", row_input(DType::f64, {0, 0})), std::vector<double>{ln2});
  EXPECT_EQ(y("logcumsumexp", row_input(DType::f64, {0, 0})), (std::vector<double>{0, ln2}));
  EXPECT_EQ(y("logaddexp", pair_input(DType::f64, {0, 1}, {0, -INFINITY})),
            (std::vector<double>{ln2, 1}));
}

// var and std draw unbiased as 0 or 1, and 0 for a single value (where 1 is invalid).
TEST(VarianceFamily, RegimesDrawUnbiasedZeroOrOne) {
  int ones = 0, zeros = 0;
  for (const Regime& r : family("var").regimes)
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      SeededEntropy e(seed, 0);
      const Input in = r.sample(e, DType::f32);
      const double b = in.param("unbiased", -1);
      ASSERT_TRUE(b == 0 || b == 1) << r.name << " " << b;
      if (in.args[0].values.size() == 1) EXPECT_EQ(b, 0) << r.name;
      (b == 1 ? ones : zeros) += 1;
    }
  EXPECT_GT(ones, 30);
  EXPECT_GT(zeros, 30);
}

// huge_squares: every x^2 overflows the dtype, the norm stays below max / 4 (f16 rows stop at
// n = max / 64 = 1023).
TEST(L2NormFamily, HugeSquaresOverflowButTheNormDoesNot) {
  const std::vector<Family> fs = families::reductions_families();
  const Regime& r = fs.at(4).regimes.at(1);
  ASSERT_EQ(r.name, "huge_squares");
  for (DType d : kAllDTypes)
    for (uint64_t seed = 1; seed <= 10; ++seed) {
      SeededEntropy e(seed, 1);
      const Input in = r.sample(e, d);
      long double ss = 0, max = dtype_format(d).max_finite();
      for (double v : in.args[0].values) {
        EXPECT_GT(static_cast<long double>(v) * v, max) << dtype_name(d) << " " << v;
        ss += static_cast<long double>(v) * v;
      }
      EXPECT_LE(std::sqrt(ss), max / 2) << dtype_name(d);  // max / 4, rounded up
      if (d == DType::f16) EXPECT_LE(in.args[0].values.size(), 1023u);
    }
}

}  // namespace
}  // namespace stabfuzz
