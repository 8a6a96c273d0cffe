// The similarity families as declared: cosine_similarity and pairwise_distance, their tolerances,
// eps defaults and the eps their regimes pass.
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

const Family& similarity(const std::string& name) {
  const Family* f = default_registry().find_family(name);
  return f ? *f : throw std::logic_error("no family " + name);
}

Input pair(DType d, Vec a, Vec b, std::vector<std::pair<std::string, double>> p = {}) {
  const auto n = static_cast<int64_t>(a.size());
  return regime::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{n}, std::move(b)}},
                            std::move(p));
}

double y(const char* f, const Input& in) { return similarity(f).oracle(in).exact.at(0); }

TEST(SimilarityFamilies, DeclaredWithTheirTolerances) {
  std::vector<std::string> names;
  for (const Family& f : families::similarity_families()) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cosine_similarity", "pairwise_distance"}));
  for (DType d : kAllDTypes) {
    EXPECT_EQ(similarity("cosine_similarity").tolerance_ulps(d, 1), 35.0);  // 35 + 2.5 log2 n
    EXPECT_EQ(similarity("cosine_similarity").tolerance_ulps(d, 16), 45.0);
    EXPECT_EQ(similarity("pairwise_distance").tolerance_ulps(d, 1), 10.0);  // 10 + log2(n) / 2
    EXPECT_EQ(similarity("pairwise_distance").tolerance_ulps(d, 16), 12.0);
  }
}

TEST(SimilarityFamilies, OraclesOnHandInputsAtTheDefaultEps) {
  EXPECT_EQ(y("cosine_similarity", pair(DType::f64, {3, 4}, {6, 8})), 1.0);
  EXPECT_EQ(y("cosine_similarity", pair(DType::f64, {1, 0}, {0, -5})), 0.0);
  // |a| |b| = 1e-10 below the default eps 1e-8: y = a.b / eps.
  EXPECT_NEAR(y("cosine_similarity", pair(DType::f64, {1e-5}, {1e-5})), 1e-2, 1e-15);
  EXPECT_EQ(y("cosine_similarity", pair(DType::f64, {1e-5}, {1e-5}, {{"eps", 0}})), 1.0);
  // |a - b + eps|: a = b gives sqrt(n) eps, eps = 1e-6 by default.
  EXPECT_EQ(y("pairwise_distance", pair(DType::f64, {1, 2, 3, 4}, {1, 2, 3, 4})), 2e-6);
  EXPECT_EQ(y("pairwise_distance", pair(DType::f64, {4, 1}, {1, 5}, {{"eps", 0}})), 5.0);
}

// eps as the regimes pass it: near_eps in [1e-12, 1e-2] ([1e-6, 1e-2] f16), equal_rows and
// tiny_subnormal (pairwise) sometimes, tiny_subnormal (cosine) 1e-4 in f16 only.
TEST(SimilarityFamilies, RegimesPassTheirEps) {
  for (DType d : {DType::f64, DType::f16})
    for (uint64_t seed = 1; seed <= 20; ++seed)
      for (const char* f : {"cosine_similarity", "pairwise_distance"})
        for (const Regime& r : similarity(f).regimes) {
          SeededEntropy e(seed, 2);
          const Input in = r.sample(e, d);
          ASSERT_EQ(in.args.size(), 2u);
          EXPECT_EQ(in.args[0].shape, in.args[1].shape) << r.name;
          const double eps = in.param("eps", -1);
          if (r.name == "near_eps")
            EXPECT_TRUE(eps >= (d == DType::f16 ? 1e-6 : 1e-12) && eps <= 1e-2) << eps;
          else if (r.name == "tiny_subnormal" && std::string(f) == "cosine_similarity")
            EXPECT_EQ(eps, d == DType::f16 ? 1e-4 : -1);
          else if (r.name == "tiny_subnormal")
            EXPECT_TRUE(eps == -1 || eps == 0) << eps;
          else if (r.name == "equal_rows")
            EXPECT_TRUE(eps == -1 || (eps >= 1e-9 && eps <= 1e-3)) << eps;
          else
            EXPECT_EQ(eps, -1) << f << " " << r.name;
          if (r.name == "equal_rows") EXPECT_EQ(in.args[0].values, in.args[1].values);
        }
}

}  // namespace
}  // namespace stabfuzz
