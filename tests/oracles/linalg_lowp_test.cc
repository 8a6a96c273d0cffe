// Linalg, similarity and optimizer families in f16 and bf16: oracles against long double, targets.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "oracles/linalg.h"
#include "tests/oracles/lowp_check.h"

namespace stabfuzz {
namespace {

using namespace lowp_check;  // NOLINT: the test's vocabulary

constexpr DType kLowp[] = {DType::f16, DType::bf16};

LD dot_ref(const double* a, size_t sa, const double* b, size_t sb, size_t n) {
  LD s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<LD>(a[i * sa]) * b[i * sb];
  return s;
}

TEST(LinalgLowp, DotAndGemmMatchLongDouble) {
  for (DType d : kLowp) {
    const Input dot = make(d, {vec({1.5, -2.25, 3.0, 0.7}), vec({0.3, 1.1, -4.5, 2.0})});
    const auto& a = dot.args[0].values;
    expect_oracle_matches("dot", dot, {dot_ref(a.data(), 1, dot.args[1].values.data(), 1, 4)});
    // A [2, 3] B [3, 2].
    const Input g = make(d, {mat(2, 3, {1.0, 2.5, -0.3, 4.0, -1.1, 0.6}),
                             mat(3, 2, {0.9, -2.0, 1.7, 0.45, 3.3, -0.8})});
    const auto& A = g.args[0].values;
    const auto& B = g.args[1].values;
    std::vector<LD> c;
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 2; ++j) c.push_back(dot_ref(A.data() + i * 3, 1, B.data() + j, 2, 3));
    expect_oracle_matches("gemm", g, c);
  }
}

// attention computes f16/bf16 in f32: the default scale 1/sqrt(d) is the f32 value.
TEST(LinalgLowp, AttentionMatchesLongDouble) {
  for (DType d : kLowp) {
    const Input in =
        make(d, {mat(2, 2, {0.5, -1.0, 1.5, 0.25}), mat(3, 2, {1.0, 0.2, -0.7, 0.9, 0.3, -1.4}),
                 mat(3, 2, {2.0, -1.0, 0.5, 3.0, -1.5, 0.75})});
    const auto& Q = in.args[0].values;
    const auto& K = in.args[1].values;
    const auto& V = in.args[2].values;
    const LD scale = round_to(DType::f32, 1 / std::sqrt(2.0));
    EXPECT_EQ(params::attention_params(in, 2).scale, static_cast<double>(scale));
    std::vector<LD> o;
    for (size_t i = 0; i < 2; ++i) {
      LD s[3], m = -INFINITY, z = 0;
      for (size_t l = 0; l < 3; ++l)
        m = std::fmax(m, s[l] = scale * dot_ref(&Q[i * 2], 1, &K[l * 2], 1, 2));
      for (auto& x : s) z += (x = std::exp(x - m));
      for (size_t j = 0; j < 2; ++j) {
        LD num = 0;
        for (size_t l = 0; l < 3; ++l) num += s[l] * V[l * 2 + j];
        o.push_back(num / z);
      }
    }
    expect_oracle_matches("attention", in, o);
  }
}

TEST(LinalgLowp, CosineAndPairwiseDistanceMatchLongDouble) {
  for (DType d : kLowp) {
    const Input c = make(d, {vec({1.0, 2.0, -0.5}), vec({0.3, -1.25, 2.25})});
    const auto& a = c.args[0].values;
    const auto& b = c.args[1].values;
    const LD ab = dot_ref(a.data(), 1, b.data(), 1, 3),
             na = std::sqrt(dot_ref(a.data(), 1, a.data(), 1, 3)),
             nb = std::sqrt(dot_ref(b.data(), 1, b.data(), 1, 3));
    // eps = 1e-8 (0 in f16) is far below |a| |b|.
    expect_oracle_matches("cosine_similarity", c, {ab / (na * nb)});

    const Input p = make(d, {vec({1.0, 2.0, -0.5, 7.0}), vec({0.25, -1.5, 2.0, 6.0})});
    const LD eps = round_to(d, params::kPairwiseEpsDefault);
    LD s = 0;
    for (size_t i = 0; i < 4; ++i) {
      const LD v = static_cast<LD>(p.args[0].values[i]) - p.args[1].values[i] + eps;
      s += v * v;
    }
    expect_oracle_matches("pairwise_distance", p, {std::sqrt(s)});
  }
}

// adam computes f16/bf16 in f32: lr, eps and 1 - beta are f32 values, which f16 (eps = 1e-8) and
// bf16 (beta2 = 0.999) could not hold.
TEST(LinalgLowp, AdamMatchesLongDouble) {
  for (DType d : kLowp) {
    const Input in = make(d,
                          {vec({0.5, -1.25, 2.0}), vec({0.1, 0.3, -0.02}), vec({0.05, 0.2, 0.0}),
                           vec({0.01, 0.04, 0.0})},
                          {{"step", 3}});
    ASSERT_FALSE(family("adam").validate(in).has_value());
    const auto q = params::adam_params(in);
    EXPECT_EQ(q.eps, static_cast<double>(1e-8f));
    EXPECT_EQ(1 - q.beta2, static_cast<double>(static_cast<float>(1 - 0.999)));
    std::vector<LD> y;
    for (size_t i = 0; i < 3; ++i) {
      const LD g = in.args[1].values[i], m = in.args[2].values[i], v = in.args[3].values[i];
      const LD b1 = q.beta1, b2 = q.beta2;
      const LD mp = b1 * m + (1 - b1) * g, vp = b2 * v + (1 - b2) * g * g;
      const LD mh = mp / (1 - std::pow(b1, LD(3))), vh = vp / (1 - std::pow(b2, LD(3)));
      y.push_back(in.args[0].values[i] - q.lr * mh / (std::sqrt(vh) + q.eps));
    }
    expect_oracle_matches("adam", in, y);
  }
}

TEST(LinalgLowp, StableTargetsWithinToleranceOnRegimes) {
  for (const char* f :
       {"dot", "gemm", "attention", "cosine_similarity", "pairwise_distance", "adam"})
    expect_stable_within_tolerance(f, 43);
}

// The f16 cosine kernel balances its factors around sqrt(eps): |a| |b| just below eps takes the
// rho < 1 branch where 2^54 prescaling would have overflowed.
TEST(LinalgLowp, F16CosineBelowEpsUsesTheKink) {
  const Input in = make(DType::f16, {vec({0.01, 0.0}), vec({0.02, 0.0})}, {{"eps", 1e-3}});
  const Family& f = family("cosine_similarity");
  const OracleResult o = f.oracle(in);
  ASSERT_TRUE(o.decidable);
  const double a = in.args[0].values[0], b = in.args[1].values[0];
  const double eps = round_to(DType::f16, 1e-3);
  EXPECT_EQ(o.exact[0], round_to(DType::f16, a * b / eps));
  const std::vector<double> y = f.targets[0].native(in);
  EXPECT_LE(ulp_distance(DType::f16, y[0], o.exact[0]), 4.0);
}

}  // namespace
}  // namespace stabfuzz
