// The linalg families as declared: dot, gemm and attention, their tolerances, parameter defaults
// and the shapes their regimes draw.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

using Vec = std::vector<double>;
using Params = std::vector<std::pair<std::string, double>>;

const Family& linalg(const std::string& name) {
  if (const Family* f = default_registry().find_family(name)) return *f;
  throw std::logic_error("no family " + name);
}

Tensor mat(int64_t r, int64_t c, Vec v) { return Tensor{{r, c}, std::move(v)}; }

TEST(LinalgFamilies, DeclaredWithTheirTolerances) {
  std::vector<std::string> names;
  for (const Family& f : families::linalg_families()) {
    names.push_back(f.name);
    EXPECT_TRUE(f.finite_outputs) << f.name;
    EXPECT_EQ(f.targets.at(0).id, f.name + "/cpu/stable");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"dot", "gemm", "attention"}));
  for (const char* f : {"dot", "gemm"}) {  // 5 + log2(n) / 2 in every dtype
    EXPECT_EQ(linalg(f).tolerance_ulps(DType::f64, 1), 5.0);
    EXPECT_EQ(linalg(f).tolerance_ulps(DType::f16, 16), 7.0);
    EXPECT_EQ(linalg(f).tolerance_ulps(DType::f32, 4096), 11.0);
  }
  // 21 + 2 log2 n + 2 ln(1/u), u = 2^-53, 2^-24, 2^-11, 2^-8.
  const Family& attn = linalg("attention");
  const double ln2 = std::log(2.0);
  EXPECT_NEAR(attn.tolerance_ulps(DType::f64, 1), 21 + 106 * ln2, 1e-12);
  EXPECT_NEAR(attn.tolerance_ulps(DType::f32, 4), 25 + 48 * ln2, 1e-12);
  EXPECT_NEAR(attn.tolerance_ulps(DType::f16, 1), 21 + 22 * ln2, 1e-12);
  EXPECT_NEAR(attn.tolerance_ulps(DType::bf16, 1), 21 + 16 * ln2, 1e-12);
}

TEST(LinalgFamilies, OraclesOnHandInputsAndAttentionDefaults) {
  const auto y = [](const char* f, std::vector<Tensor> t, Params p = {}) {
    return linalg(f).oracle(regime::make_input(DType::f64, std::move(t), std::move(p))).exact;
  };
  EXPECT_EQ(y("dot", {Tensor{{3}, {1, 2, 3}}, Tensor{{3}, {4, 5, 6}}}), Vec{32});
  EXPECT_EQ(y("gemm", {mat(2, 2, {1, 2, 3, 4}), mat(2, 2, {5, 6, 7, 8})}), (Vec{19, 22, 43, 50}));
  // Equal scores: every row the mean of V unless causal (default 0) masks key 1 from row 0.
  const std::vector<Tensor> flat = {mat(2, 1, {0, 0}), mat(2, 1, {0, 0}), mat(2, 1, {2, 4})};
  EXPECT_EQ(y("attention", flat), (Vec{3, 3}));
  EXPECT_EQ(y("attention", flat, {{"causal", 1}}), (Vec{2, 3}));
  // d = 4, scale 1/2 by default: scores 0 and ln 3, weights 1/4 and 3/4 of V = {0, 4}.
  const double a = std::log(3.0);
  const std::vector<Tensor> qkv = {mat(1, 4, {2 * a, 0, 0, 0}), mat(2, 4, {0, 0, 0, 0, 1, 0, 0, 0}),
                                   mat(2, 1, {0, 4})};
  EXPECT_NEAR(y("attention", qkv).at(0), 3.0, 1e-14);
  EXPECT_NEAR(y("attention", qkv, {{"scale", 1}}).at(0), 3.6, 1e-14);  // weights 1/10, 9/10
}

TEST(LinalgFamilies, RegimesDrawTheirShapes) {
  for (uint64_t seed = 1; seed <= 20; ++seed)
    for (DType d : {DType::f64, DType::f16}) {
      for (const Regime& r : linalg("gemm").regimes) {
        SeededEntropy e(seed, 0);
        const Input in = r.sample(e, d);
        const int64_t m = in.args[0].shape.at(0), k = in.args[0].shape.at(1);
        const int64_t n = in.args[1].shape.at(1);
        ASSERT_EQ(in.args[1].shape.at(0), k) << r.name;
        EXPECT_LE((m + n) * k, 16384) << r.name;
        if (r.name == "outer_product") EXPECT_EQ(k, 1);
        if (r.name == "long_k") EXPECT_TRUE(k >= 256 && k <= 512 && m <= 8 && n <= 8) << k;
      }
      for (const Regime& r : linalg("attention").regimes) {
        SeededEntropy e(seed, 1);
        const Input in = r.sample(e, d);
        const int64_t s = in.args[0].shape.at(0), t = in.args[1].shape.at(0);
        const double causal = in.param("causal", -1), scale = in.param("scale", -1);
        EXPECT_TRUE(s <= 32 && t <= 32 && in.args[0].shape.at(1) <= 64) << r.name;
        EXPECT_TRUE(causal == 0 || (causal == 1 && s == t)) << r.name << " " << causal;
        if (r.name == "scale_param")
          EXPECT_TRUE(scale >= 1e-3 && scale <= (d == DType::f16 ? 1 : 10)) << scale;
        else
          EXPECT_EQ(scale, -1) << r.name;  // the default 1/sqrt(d)
      }
    }
}

}  // namespace
}  // namespace stabfuzz
