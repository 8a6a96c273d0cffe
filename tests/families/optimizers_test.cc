// The optimizer family as declared: one Adam step, its tolerance, hyperparameter defaults and what
// its regimes draw.
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

const Family& adam() {
  if (const Family* f = default_registry().find_family("adam")) return *f;
  throw std::logic_error("adam is not registered");
}

// p, g, m, v as one-value rows, with `params`.
Input step(double p, double g, double m, double v,
           std::vector<std::pair<std::string, double>> params = {}) {
  std::vector<Tensor> t;
  for (double x : {p, g, m, v}) t.push_back(Tensor{{1}, {x}});
  return regime::make_input(DType::f64, std::move(t), std::move(params));
}

TEST(OptimizerFamilies, AdamIsTheOneFamilyWithAFlatTolerance) {
  const std::vector<Family> fs = families::optimizer_families();
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "adam");
  EXPECT_EQ(fs[0].targets.at(0).id, "adam/cpu/stable");
  EXPECT_TRUE(adam().finite_outputs);
  for (DType d : kAllDTypes)
    for (size_t n : {1, 4096}) EXPECT_EQ(adam().tolerance_ulps(d, n), 41.0);
}

// At the defaults (lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, step 1), from m = v = 0 with g = 1:
// m^ = 0.1 / 0.1 = 1, v^ = 0.001 / 0.001 = 1, so p' = p - 1e-3 / (1 + 1e-8).
TEST(OptimizerFamilies, AdamOracleAtTheDefaultHyperparameters) {
  const auto y = [](const Input& in) { return adam().oracle(in).exact.at(0); };
  EXPECT_NEAR(y(step(1, 1, 0, 0)), 1 - 1e-3 / (1 + 1e-8), 1e-15);
  EXPECT_NEAR(y(step(1, -1, 0, 0)), 1 + 1e-3 / (1 + 1e-8), 1e-15);
  EXPECT_EQ(y(step(0.5, 0, 0, 0)), 0.5);  // no gradient, no moment: no step
  EXPECT_NEAR(y(step(1, 1, 0, 0, {{"lr", 0.5}})), 1 - 0.5 / (1 + 1e-8), 1e-15);
  // Step 2: m^ = 0.1 / 0.19, v^ = 0.001 / 0.001999.
  const double u2 = 1e-3 * (0.1 / 0.19) / (std::sqrt(0.001 / 0.001999) + 1e-8);
  EXPECT_NEAR(y(step(1, 1, 0, 0, {{"step", 2}})), 1 - u2, 1e-15);
}

// The regimes this file declares (the registry appends injectors' regimes to adam's).
TEST(OptimizerFamilies, AdamRegimesDrawValidStepsAndMoments) {
  const std::vector<Family> fs = families::optimizer_families();
  const Family& f = fs.at(0);
  for (DType d : {DType::f64, DType::f32, DType::f16})
    for (uint64_t seed = 1; seed <= 20; ++seed)
      for (const Regime& r : f.regimes) {
        SeededEntropy e(seed, 4);
        const Input in = r.sample(e, d);
        ASSERT_EQ(in.args.size(), 4u) << r.name;
        const double t = in.param("step", -1);
        EXPECT_TRUE(t >= 1 && t == std::trunc(t)) << r.name << " step " << t;
        for (double v : in.args[3].values) EXPECT_GE(v, 0.0) << r.name;
        if (r.name == "zero_grad_tiny_v") {
          EXPECT_EQ(in.args[1].values, Vec(in.args[1].values.size(), 0.0));
          for (double v : in.args[3].values)
            EXPECT_TRUE(v >= (d == DType::f16 ? 0.99e-7 : 0.99e-30) &&
                        v <= (d == DType::f16 ? 1.01e-5 : 1.01e-12))
                << v;
        }
        if (r.name == "random_hyper") {
          EXPECT_TRUE(in.param("lr", -1) >= 1e-6 && in.param("lr", -1) <= 1);
          EXPECT_TRUE(in.param("beta1", -1) >= 0.5 && in.param("beta1", -1) <= 0.99);
          EXPECT_TRUE(in.param("beta2", -1) >= 0.9 && in.param("beta2", -1) <= 0.99999);
          EXPECT_TRUE(in.param("eps", -1) >= 1e-12 && in.param("eps", -1) <= 1e-4);
        } else {
          EXPECT_EQ(in.param("lr", -1), -1) << r.name;  // the defaults
        }
      }
}

}  // namespace
}  // namespace stabfuzz
