// The loss families as declared: bce_with_logits, kl_div and entropy, their tolerances, oracle
// bindings, kl_div's overflow check and what their regimes draw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

using Row = std::vector<double>;

const Family& loss(const std::string& name) {
  if (const Family* f = default_registry().find_family(name)) return *f;
  throw std::logic_error("no family " + name);
}

Input rows(DType d, std::vector<Row> v) {
  std::vector<Tensor> t;
  for (Row& r : v) t.push_back(Tensor{{static_cast<int64_t>(r.size())}, std::move(r)});
  return regime::make_input(d, std::move(t));
}

// The regime `name` of family `f`, drawn with (seed, 0).
Input draw(const std::string& f, const std::string& name, DType d, uint64_t seed) {
  for (const Regime& r : loss(f).regimes) {
    SeededEntropy e(seed, 0);
    if (r.name == name) return r.sample(e, d);
  }
  throw std::logic_error("no regime " + name);
}

TEST(LossFamilies, DeclaredWithTheirTolerances) {
  std::vector<std::string> names;
  for (const Family& f : families::losses_families()) {
    names.push_back(f.name);
    EXPECT_TRUE(f.finite_outputs) << f.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"bce_with_logits", "kl_div", "entropy"}));
  for (DType d : kAllDTypes) {
    EXPECT_EQ(loss("bce_with_logits").tolerance_ulps(d, 2), 6.0);
    EXPECT_EQ(loss("bce_with_logits").tolerance_ulps(d, 8192), 6.0);
    EXPECT_EQ(loss("kl_div").tolerance_ulps(d, 2), 22.0);  // 19 + 3 log2 n
    EXPECT_EQ(loss("kl_div").tolerance_ulps(d, 8), 28.0);
    EXPECT_EQ(loss("entropy").tolerance_ulps(d, 2), 9.0);  // 8 + log2 n
    EXPECT_EQ(loss("entropy").tolerance_ulps(d, 1024), 18.0);
  }
}

TEST(LossFamilies, OraclesAreBoundToTheirLosses) {
  const auto y = [](const char* f, const Input& in) { return loss(f).oracle(in).exact; };
  // log(1 + e^-|x|) + max(x, 0) - x z: log 2 at x = 0, log(1 + e^-1) at x = z = 1.
  const Row bce = y("bce_with_logits", rows(DType::f64, {{0, 1}, {0, 1}}));
  EXPECT_EQ(bce.at(0), std::log(2.0));
  EXPECT_NEAR(bce.at(1), 0.31326168751822286, 1e-16);
  // 1 (log 1 - (-1)) + 0 (log 0 - 5), with 0 log 0 = 0.
  EXPECT_EQ(y("kl_div", rows(DType::f64, {{-1, 5}, {1, 0}})), Row{1});
  EXPECT_EQ(y("entropy", rows(DType::f64, {{0.25, 0.25, 0.25, 0.25}})), Row{std::log(4.0)});
  EXPECT_EQ(y("entropy", rows(DType::f64, {{1, 0}})), Row{0});
}

// sum p (|log p| + |logq|) must stay below max / 4: 16376 in f16.
TEST(LossFamilies, KlDivSumMustStayBelowAQuarterOfMax) {
  const Family& kl = loss("kl_div");
  EXPECT_FALSE(kl.validate(rows(DType::f16, {{-16000}, {1}})));
  const auto msg = kl.validate(rows(DType::f16, {{-20000}, {1}}));
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("max / 4"), std::string::npos) << *msg;
  EXPECT_TRUE(kl.validate(rows(DType::f16, {{-10000, -10000}, {1, 1}})));
  EXPECT_FALSE(kl.validate(rows(DType::f16, {{-20000}, {0}})));  // p = 0 adds nothing
  EXPECT_FALSE(kl.validate(rows(DType::f64, {{-20000}, {1}})));
}

TEST(LossFamilies, RegimesDrawWhatTheyDescribe) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    // Targets t or 1 - t agreeing with the logit's sign.
    const Input bce = draw("bce_with_logits", "targets_near_0_1", DType::f64, seed);
    for (size_t i = 0; i < bce.args[0].values.size(); ++i) {
      const double x = bce.args[0].values[i], z = bce.args[1].values[i];
      EXPECT_TRUE(std::fabs(x) >= 1 && std::fabs(x) <= 100) << x;
      EXPECT_TRUE(x > 0 ? z >= 0.9 && z < 1 : z > 0 && z <= 0.1) << x << " " << z;
    }
    // logq is exactly log p as f64 holds it.
    const Input kl = draw("kl_div", "equal", DType::f64, seed);
    for (size_t i = 0; i < kl.args[0].values.size(); ++i)
      EXPECT_EQ(kl.args[0].values[i],
                std::log(std::max(kl.args[1].values[i], dtype_min_normal(DType::f64))));
    const Input near_one = draw("entropy", "near_one", DType::f64, seed);
    for (double p : near_one.args[0].values) EXPECT_TRUE(p >= 0.9 && p < 1) << p;
    const Input tiny = draw("entropy", "tiny", DType::f16, seed);
    for (double p : tiny.args[0].values) EXPECT_TRUE(p >= 6.1e-5 && p <= 1.001e-3) << p;
  }
}

}  // namespace
}  // namespace stabfuzz
