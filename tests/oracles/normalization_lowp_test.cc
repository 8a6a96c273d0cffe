// Normalization and loss families in f16 and bf16: oracles against long double, stable targets.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/oracles/lowp_check.h"

namespace stabfuzz {
namespace {

using namespace lowp_check;  // NOLINT: the test's vocabulary

constexpr DType kLowp[] = {DType::f16, DType::bf16};

std::vector<LD> log_softmax_ref(const std::vector<double>& x) {
  LD m = x[0], s = 0;
  for (double v : x) m = std::fmax(m, static_cast<LD>(v));
  for (double v : x) s += std::exp(static_cast<LD>(v) - m);
  std::vector<LD> y;
  for (double v : x) y.push_back(static_cast<LD>(v) - m - std::log(s));
  return y;
}

// (x - mean) / sqrt(var + eps) with eps as the dtype holds it, over values x[k * stride].
std::vector<LD> layer_norm_ref(const std::vector<double>& x, size_t n, size_t stride, size_t k,
                               LD eps) {
  LD mu = 0, var = 0;
  for (size_t i = 0; i < n; ++i) mu += x[i * stride + k];
  mu /= static_cast<LD>(n);
  for (size_t i = 0; i < n; ++i) var += (x[i * stride + k] - mu) * (x[i * stride + k] - mu);
  var /= static_cast<LD>(n);
  std::vector<LD> y;
  for (size_t i = 0; i < n; ++i) y.push_back((x[i * stride + k] - mu) / std::sqrt(var + eps));
  return y;
}

TEST(NormalizationLowp, LogSoftmaxAndCrossEntropyMatchLongDouble) {
  for (DType d : kLowp) {
    const Input in = make(d, {vec({1.5, -2.25, 7.0, 0.3, 3.7})});
    const auto ref = log_softmax_ref(in.args[0].values);
    expect_oracle_matches("log_softmax", in, ref);
    const Input ce = make(d, {vec({1.5, -2.25, 7.0, 0.3, 3.7})}, {{"target", 3}});
    expect_oracle_matches("cross_entropy", ce, {-ref[3]});
  }
}

TEST(NormalizationLowp, LayerRmsAndBatchNormMatchLongDouble) {
  for (DType d : kLowp) {
    const Input ln = make(d, {vec({100.0, 103.0, 97.5, 101.25, 99.0, 104.5})});
    expect_oracle_matches("layer_norm", ln,
                          layer_norm_ref(ln.args[0].values, 6, 1, 0, round_to(d, 1e-5)));
    const Input rms = make(d, {vec({0.5, -1.75, 3.0, 0.125})}, {{"eps", 1e-3}});
    LD ms = 0;
    for (double v : rms.args[0].values) ms += static_cast<LD>(v) * v;
    const LD sigma = std::sqrt(ms / 4 + round_to(d, 1e-3));
    std::vector<LD> ry;
    for (double v : rms.args[0].values) ry.push_back(v / sigma);
    expect_oracle_matches("rms_norm", rms, ry);
    // [3, 2]: two channels, normalized down the columns.
    const Input bn = make(d, {mat(3, 2, {1.0, 50.0, 2.5, 52.0, -0.75, 49.0})});
    std::vector<LD> by(6);
    for (size_t k = 0; k < 2; ++k) {
      const auto c = layer_norm_ref(bn.args[0].values, 3, 2, k, round_to(d, 1e-5));
      for (size_t i = 0; i < 3; ++i) by[i * 2 + k] = c[i];
    }
    expect_oracle_matches("batch_norm", bn, by);
  }
}

TEST(NormalizationLowp, LossesMatchLongDouble) {
  for (DType d : kLowp) {
    const Input bce = make(d, {vec({-3.5, 0.75, 12.0, -0.01}), vec({0.25, 1.0, 0.3, 0.0})});
    std::vector<LD> by;
    for (size_t i = 0; i < 4; ++i) {
      const LD x = bce.args[0].values[i], z = bce.args[1].values[i];
      by.push_back(std::fmax(x, LD(0)) - x * z + std::log1p(std::exp(-std::fabs(x))));
    }
    expect_oracle_matches("bce_with_logits", bce, by);

    const Input kl = make(d, {vec({-1.2, -0.4, -2.9}), vec({0.2, 0.7, 0.1})});
    LD ky = 0;
    for (size_t i = 0; i < 3; ++i) {
      const LD p = kl.args[1].values[i];
      ky += p * (std::log(p) - kl.args[0].values[i]);
    }
    expect_oracle_matches("kl_div", kl, {ky});

    const Input h = make(d, {vec({0.25, 0.5, 0.125, 0.0, 0.1})});
    LD hy = 0;
    for (double p : h.args[0].values)
      if (p > 0) hy -= p * std::log(static_cast<LD>(p));
    expect_oracle_matches("entropy", h, {hy});
  }
}

TEST(NormalizationLowp, StableTargetsWithinToleranceOnRegimes) {
  for (const char* f : {"log_softmax", "cross_entropy", "layer_norm", "rms_norm", "batch_norm",
                        "bce_with_logits", "kl_div", "entropy"})
    expect_stable_within_tolerance(f, 41);
}

// f16 has 65504 as its largest value: the contracts reject what its kernels cannot sum.
TEST(NormalizationLowp, F16ContractsBoundValuesAndLengths) {
  const Family& ln = family("layer_norm");
  EXPECT_FALSE(ln.validate(make(DType::f16, {vec({30000.0, -30000.0})})).has_value());
  EXPECT_TRUE(ln.validate(make(DType::f16, {vec({40000.0, 1.0})})).has_value());  // > max / 2
  EXPECT_TRUE(ln.validate(make(DType::f16, {vec(std::vector<double>(16384, 1.0))})).has_value());
  EXPECT_FALSE(ln.validate(make(DType::bf16, {vec(std::vector<double>(16384, 1.0))})).has_value());
  // eps = 1e-12 is 0 in f16.
  EXPECT_TRUE(ln.validate(make(DType::f16, {vec({1.0, 2.0})}, {{"eps", 1e-12}})).has_value());
}

}  // namespace
}  // namespace stabfuzz
