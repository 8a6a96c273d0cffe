// The normalization families as declared: parameters and their defaults, tolerances, regimes.
// (Their contracts' value checks: tests/oracles/normalization_test.cc, NormalizationContracts.)
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

using Params = std::vector<std::pair<std::string, double>>;

const Family& norm_family(const std::string& name) {
  if (const Family* f = default_registry().find_family(name)) return *f;
  throw std::logic_error("no family " + name);
}

Input one_row(std::vector<double> x, Params p = {}) {
  const auto n = static_cast<int64_t>(x.size());
  return regime::make_input(DType::f64, {Tensor{{n}, std::move(x)}}, std::move(p));
}

TEST(NormalizationFamilies, DeclaredWithTheirParametersAndTolerances) {
  std::vector<std::string> names;
  for (const Family& f : families::normalization_families()) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"log_softmax", "cross_entropy", "layer_norm",
                                             "rms_norm", "batch_norm"}));
  // The one parameter each takes: eps for the norms, target for cross_entropy, none else.
  for (const char* name : {"log_softmax", "cross_entropy", "layer_norm", "rms_norm"}) {
    const std::string f = name;
    const bool eps = f == "layer_norm" || f == "rms_norm", target = f == "cross_entropy";
    EXPECT_EQ(!norm_family(f).validate(one_row({1, 2}, {{"eps", 1e-3}})), eps) << f;
    EXPECT_EQ(!norm_family(f).validate(one_row({1, 2}, {{"target", 1}})), target) << f;
  }
  const Input channels = regime::make_input(DType::f64, {Tensor{{2, 1}, {1, 2}}}, {{"eps", 1e-3}});
  EXPECT_FALSE(norm_family("batch_norm").validate(channels));
  for (DType d : kAllDTypes) {
    const auto tol = [d](const std::string& f, size_t n) {
      return norm_family(f).tolerance_ulps(d, n);
    };
    EXPECT_EQ(tol("log_softmax", 1), 10.0);  // 10 + 3 log2 n
    EXPECT_EQ(tol("log_softmax", 1024), 40.0);
    EXPECT_EQ(tol("cross_entropy", 1024), 40.0);
    EXPECT_EQ(tol("layer_norm", 16), 33.0);  // 23 + 2.5 log2 n
    EXPECT_EQ(tol("batch_norm", 16), 33.0);
    EXPECT_EQ(tol("rms_norm", 16), 10.0);  // 8 + log2(n) / 2
  }
}

// Hand values at the default parameters: eps 1e-5 (layer_norm, batch_norm), 1e-6 (rms_norm),
// target 0 (cross_entropy).
TEST(NormalizationFamilies, OraclesUseTheDeclaredDefaults) {
  const auto y = [](const std::string& f, const Input& in) { return norm_family(f).oracle(in); };
  // {0, 2}: mean 1, biased var 1.
  const double unit = 1 / std::sqrt(1 + 1e-5);
  const std::vector<double> ln = y("layer_norm", one_row({0, 2})).exact;
  EXPECT_NEAR(ln.at(0), -unit, 1e-15);
  EXPECT_NEAR(ln.at(1), unit, 1e-15);
  const Input col = regime::make_input(DType::f64, {Tensor{{2, 1}, {1, 3}}});
  EXPECT_NEAR(y("batch_norm", col).exact.at(1), unit, 1e-15);
  // {3, 4}: mean square 12.5.
  EXPECT_NEAR(y("rms_norm", one_row({3, 4})).exact.at(0), 3 / std::sqrt(12.5 + 1e-6), 1e-15);
  EXPECT_EQ(y("log_softmax", one_row({5, 5})).exact, std::vector<double>(2, -std::log(2.0)));
  // -log softmax({1, 0})[t]: log(1 + e^-1) at t = 0, log(1 + e) at t = 1.
  EXPECT_NEAR(y("cross_entropy", one_row({1, 0})).exact.at(0), 0.31326168751822286, 1e-15);
  EXPECT_NEAR(y("cross_entropy", one_row({1, 0}, {{"target", 1}})).exact.at(0), 1.3132616875182228,
              1e-15);
}

// cross_entropy: log_softmax's first five regimes with a random target, then confident rows.
TEST(NormalizationFamilies, CrossEntropyRegimesDrawValidTargets) {
  const Family& ls = norm_family("log_softmax");
  const Family& ce = norm_family("cross_entropy");
  ASSERT_EQ(ce.regimes.size(), 7u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(ce.regimes[k].name, ls.regimes[k].name);
    EXPECT_EQ(ce.regimes[k].description, ls.regimes[k].description + "; random target");
  }
  EXPECT_EQ(ce.regimes[5].name, "confident_correct");
  EXPECT_EQ(ce.regimes[6].name, "confident_wrong");
  for (size_t k = 0; k < ce.regimes.size(); ++k)
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SeededEntropy e(seed, k);
      const Input in = ce.regimes[k].sample(e, DType::f32);
      const std::vector<double>& x = in.args[0].values;
      const double t = in.param("target", -1);
      ASSERT_TRUE(t >= 0 && t < static_cast<double>(x.size()) && t == std::trunc(t)) << t;
      const auto top = static_cast<size_t>(std::max_element(x.begin(), x.end()) - x.begin());
      if (k == 5) EXPECT_EQ(static_cast<size_t>(t), top);
      if (k == 6) EXPECT_LT(x[static_cast<size_t>(t)], x[top]);
    }
}

// batch_norm draws [n, c] with n <= 512, c <= 64 and n c <= 16384.
TEST(NormalizationFamilies, BatchNormRegimesDrawBoundedMatrices) {
  for (const Regime& r : norm_family("batch_norm").regimes)
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SeededEntropy e(seed, 3);
      const Input in = r.sample(e, DType::f64);
      ASSERT_EQ(in.args.at(0).shape.size(), 2u) << r.name;
      const int64_t n = in.args[0].shape[0], c = in.args[0].shape[1];
      EXPECT_TRUE(n >= 1 && n <= 512 && c >= 1 && c <= 64 && n * c <= 16384) << n << " x " << c;
    }
}

}  // namespace
}  // namespace stabfuzz
