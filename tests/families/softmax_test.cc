// The softmax family as declared: its contract, regimes, tolerance, oracle and stable target.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

using regime::row_input;

const Family& softmax() {
  const Family* f = default_registry().find_family("softmax");
  if (!f) throw std::logic_error("softmax is not registered");
  return *f;
}

TEST(SoftmaxFamily, RegisteredWithItsRegimesAndStableTarget) {
  const Family& f = softmax();
  std::vector<std::string> names;  // as declared: the registry may append injectors' regimes
  for (const Regime& r : families::softmax_family().regimes) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"small", "near_overflow", "large", "all_very_negative",
                                             "mixed_scales", "repeated", "neg_inf_entries"}));
  EXPECT_TRUE(f.finite_outputs);
  EXPECT_EQ(f.cestac_margin_digits, 1.0);
  const Target* t = default_registry().find_target("softmax/cpu/stable").second;
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, TargetKind::reference);
  EXPECT_EQ(t->dtypes, (std::vector<DType>{DType::f64, DType::f32, DType::f16, DType::bf16}));
  EXPECT_TRUE(t->native && t->cestac && t->faultable);
  EXPECT_EQ(families::softmax_family().targets.size(),
            1u);  // injected targets come from injectors/
}

TEST(SoftmaxFamily, ToleranceIsEightPlusLog2NInEveryDtype) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(softmax().tolerance_ulps(d, 1), 8.0);
    EXPECT_EQ(softmax().tolerance_ulps(d, 1024), 18.0);
    EXPECT_EQ(softmax().tolerance_ulps(d, 4096), 20.0);
  }
}

TEST(SoftmaxFamily, ValidationAcceptsMaskedRowsAndRejectsTheRest) {
  const Family& f = softmax();
  EXPECT_FALSE(f.validate(row_input(DType::f64, {-INFINITY, 0.0, 3.5})));
  EXPECT_FALSE(f.validate(row_input(DType::f16, {1e4})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {-INFINITY, -INFINITY})));  // no finite logit
  EXPECT_TRUE(f.validate(row_input(DType::f64, {INFINITY, 0.0})));
  EXPECT_TRUE(f.validate(row_input(DType::f64, {NAN, 0.0})));
  Input two = row_input(DType::f64, {1.0});
  two.args.push_back(two.args[0]);
  EXPECT_TRUE(f.validate(two));
  Input matrix = row_input(DType::f64, {1, 2, 3, 4});
  matrix.args[0].shape = {2, 2};
  EXPECT_TRUE(f.validate(matrix));
  Input unrounded = row_input(DType::f32, {1.0});
  unrounded.args[0].values[0] = 0.1;  // not a float
  EXPECT_TRUE(f.validate(unrounded));
}

TEST(SoftmaxFamily, OracleOfEqualLogitsIsOneOverN) {
  for (DType d : kAllDTypes) {
    const OracleResult r = softmax().oracle(row_input(d, {-7.0, -7.0, -7.0, -7.0}));
    ASSERT_TRUE(r.decidable);
    EXPECT_EQ(r.exact, std::vector<double>(4, 0.25)) << dtype_name(d);
  }
  EXPECT_EQ(softmax().oracle(row_input(DType::f64, {2.0, 2.0, 2.0})).exact[1], 1.0 / 3);
  EXPECT_EQ(softmax().oracle(row_input(DType::f32, {2.0, 2.0, 2.0})).exact[1], 1.0f / 3);
}

// Each regime's rows keep the promise of its description, in every dtype.
TEST(SoftmaxFamily, RegimesDrawWhatTheyDescribe) {
  const Family& f = softmax();
  for (DType d : kAllDTypes)
    for (uint64_t seed = 1; seed <= 20; ++seed)
      for (size_t k = 0; k < f.regimes.size(); ++k) {
        SeededEntropy e(seed, k);
        const Input in = f.regimes[k].sample(e, d);
        const std::string& name = f.regimes[k].name;
        ASSERT_FALSE(f.validate(in)) << name << " " << dtype_name(d) << ": " << *f.validate(in);
        const std::vector<double>& x = in.args[0].values;
        const double lo = d == DType::f64 ? 1e3 : (d == DType::f16 ? 20 : 1e2);
        for (double v : x) {
          if (name == "all_very_negative") EXPECT_LT(v, regime::exp_underflow_threshold(d));
          if (name == "large") EXPECT_TRUE(std::fabs(v) >= lo * 0.99 && std::fabs(v) <= lo * 101);
          if (name == "mixed_scales") EXPECT_TRUE(std::fabs(v) >= 0.99e-6 && std::fabs(v) <= 1001);
        }
        if (name == "repeated") EXPECT_LE(std::set<double>(x.begin(), x.end()).size(), 3u);
      }
}

}  // namespace
}  // namespace stabfuzz
