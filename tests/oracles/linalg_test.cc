// Tests of the linalg oracles, input validation and stable targets.
// dot, gemm, attention, cosine_similarity, pairwise_distance, adam: exact identities, independent
// references, hand-derived condition numbers, and the verdict on stable and naive kernels.
#include "oracles/linalg.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "harness/pipeline/verdict.h"
#include "tests/oracles/linalg_check.h"

namespace stabfuzz {
namespace {

using namespace linalg_check;

const Target& stable(const std::string& name) {
  return *default_registry().find_target(name + "/cpu/stable").second;
}
Input rows(DType d, Vec a, Vec b, Params p = {}) {
  return make(d, {row(std::move(a)), row(std::move(b))}, std::move(p));
}
OracleResult oracle_of(const std::string& name, const Input& in) { return family(name).oracle(in); }
bool valid(const std::string& name, const Input& in) { return !family(name).validate(in); }

// A reference value with relative error <= rel decides the correctly rounded result when the
// whole interval rounds to one value; nullopt when it is too close to a rounding boundary.
template <class F>
std::optional<double> decisive(DType d, F ref, F rel) {
  auto rnd = [d](F v) {
    return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
  };
  const F mag = ref < 0 ? -ref : ref, lo = ref - mag * rel, hi = ref + mag * rel;
  if (rnd(lo) != rnd(hi)) return std::nullopt;
  return rnd(ref);
}

// Random doubles of the dtype, N(0, 1) scaled by 2^[-4, 4], from RapidCheck.
rc::Gen<Vec> values(size_t n) {
  return rc::gen::container<Vec>(n, rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t b) {
                                   const double u = (static_cast<double>(b >> 11) + 0.5) * 0x1p-53;
                                   return std::ldexp(2 * u - 1, static_cast<int>(b % 9) - 4);
                                 }));
}

// ---- validation ---------------------------------------------------------------------------------

TEST(LinalgValidate, RejectsNonFiniteMisshapenAndUnknown) {
  for (const char* f : {"dot", "cosine_similarity", "pairwise_distance"}) {
    EXPECT_TRUE(valid(f, rows(DType::f64, {1.0}, {-0.0}))) << f << ": length 1, -0";
    EXPECT_FALSE(valid(f, rows(DType::f64, {NAN}, {1.0}))) << f;
    EXPECT_FALSE(valid(f, rows(DType::f64, {1.0}, {INFINITY}))) << f;
    EXPECT_FALSE(valid(f, rows(DType::f64, {-INFINITY}, {1.0}))) << f;
    EXPECT_FALSE(valid(f, rows(DType::f64, {1.0, 2.0}, {1.0}))) << f << ": unequal rows";
    EXPECT_FALSE(valid(f, rows(DType::f64, {}, {}))) << f << ": empty";
    EXPECT_FALSE(valid(f, rows(DType::f64, {1.0}, {1.0}, {{"alpha", 1}}))) << f;
    Input in = rows(DType::f32, {1.0}, {1.0});
    in.args[0].values[0] = 0.1;  // not a float
    EXPECT_FALSE(valid(f, in)) << f;
  }
  EXPECT_FALSE(valid("dot", rows(DType::f64, {1.0}, {1.0}, {{"eps", 1}})));
  EXPECT_TRUE(valid("cosine_similarity", rows(DType::f64, {1.0}, {1.0}, {{"eps", 0}})));
  EXPECT_FALSE(valid("cosine_similarity", rows(DType::f64, {1.0}, {1.0}, {{"eps", 2}})));
  EXPECT_FALSE(valid("cosine_similarity", rows(DType::f64, {1.0}, {1.0}, {{"eps", 1e-40}})));
  EXPECT_FALSE(valid("pairwise_distance", rows(DType::f64, {1.0}, {1.0}, {{"eps", NAN}})));
  // gemm: inner dimensions, ranks, the oracle's cost cap.
  EXPECT_TRUE(valid("gemm", make(DType::f64, {mat(1, 2, {1, 2}), mat(2, 1, {3, 4})})));
  EXPECT_FALSE(valid("gemm", make(DType::f64, {mat(1, 2, {1, 2}), mat(1, 2, {3, 4})})));
  EXPECT_FALSE(valid("gemm", make(DType::f64, {row({1, 2}), mat(2, 1, {3, 4})})));
  Input big = make(DType::f64, {mat(1, 1, {1}), mat(1, 1, {1})});
  big.args[0].shape = {8192, 1};  // values no longer match the shape
  EXPECT_FALSE(valid("gemm", big));
  // attention: head dims, lengths, causal.
  auto att = [](int64_t s, int64_t d, int64_t t, int64_t dv, Params p) {
    return make(
        DType::f64,
        {mat(s, d, Vec(s * d, 1.0)), mat(t, d, Vec(t * d, 1.0)), mat(t, dv, Vec(t * dv, 1.0))},
        std::move(p));
  };
  EXPECT_TRUE(valid("attention", att(2, 3, 2, 4, {{"causal", 1}})));
  EXPECT_FALSE(valid("attention", att(2, 3, 3, 4, {{"causal", 1}})));
  EXPECT_FALSE(valid("attention", att(2, 3, 3, 4, {{"causal", 0.5}})));
  Input bad = att(2, 3, 2, 4, {});
  bad.args[1] = mat(2, 2, Vec(4, 1.0));
  EXPECT_FALSE(valid("attention", bad));
  bad = att(2, 3, 2, 4, {});
  bad.args[2] = mat(3, 4, Vec(12, 1.0));
  EXPECT_FALSE(valid("attention", bad));
  // adam: v >= 0, betas < 1 as the dtype holds them, eps > 0, integer step.
  auto adam = [](DType d, Vec v, Params p) {
    return make(d, {row({1}), row({1}), row({1}), row(std::move(v))}, std::move(p));
  };
  EXPECT_TRUE(valid("adam", adam(DType::f64, {0.0}, {})));
  EXPECT_FALSE(valid("adam", adam(DType::f64, {-1.0}, {})));
  EXPECT_TRUE(valid("adam", adam(DType::f64, {1.0}, {{"beta2", 0.99999999}})));
  // The compute type holds 1 - beta: f32 holds 1 - 0.99999999 = 1e-8 (beta itself rounds to 1).
  EXPECT_TRUE(valid("adam", adam(DType::f32, {1.0}, {{"beta2", 0.99999999}})));
  EXPECT_TRUE(valid("adam", adam(DType::bf16, {1.0}, {})));  // beta2 = 0.999, eps = 1e-8 in f32
  EXPECT_TRUE(valid("adam", adam(DType::f16, {1.0}, {{"step", 1e6}})));  // step exact in f32
  EXPECT_FALSE(valid("adam", adam(DType::f16, {1.0}, {{"step", 16777217}})));
  EXPECT_FALSE(valid("adam", adam(DType::f64, {1.0}, {{"beta1", 1}})));
  EXPECT_FALSE(valid("adam", adam(DType::f64, {1.0}, {{"eps", 0}})));
  EXPECT_FALSE(valid("adam", adam(DType::f64, {1.0}, {{"step", 0}})));
  EXPECT_FALSE(valid("adam", adam(DType::f64, {1.0}, {{"step", 1.5}})));
  EXPECT_FALSE(valid("adam", make(DType::f64, {row({1, 2}), row({1}), row({1}), row({1})})));
  // The new second moment must be finite in the compute type: g = 2^125 squares past f32 (a
  // campaign found the reference returning p for it); 2^60 does not, nor 2^500 in f64 (2^1000 /
  // 1000).
  auto grad = [](DType d, double g) { return make(d, {row({0}), row({g}), row({0}), row({0})}); };
  EXPECT_FALSE(valid("adam", grad(DType::bf16, 0x1p125)));
  EXPECT_FALSE(valid("adam", grad(DType::f32, 0x1p70)));
  EXPECT_TRUE(valid("adam", grad(DType::f32, 0x1p60)));
  EXPECT_TRUE(valid("adam", grad(DType::f64, 0x1p500)));
  EXPECT_FALSE(valid("adam", grad(DType::f64, 0x1p520)));
}

// ---- dot and gemm -------------------------------------------------------------------------------

TEST(DotOracle, ExactValuesAndConditionNumbers) {
  for (DType d : {DType::f64, DType::f32}) {
    OracleResult r = oracle_of("dot", rows(d, {1, 2, 3}, {4, 5, 6}));
    EXPECT_EQ(r.exact, Vec{32});
    EXPECT_EQ(r.cond, Vec{2});  // 2 sum |a b| / |y|, all products positive
    // Pairs cancel: 1 - 1 + 2^-20 (a.b = 2^-20, sum |a b| = 2 - 2^-20).
    r = oracle_of("dot", rows(d, {1, 1}, {1, -1 + 0x1p-20}));
    EXPECT_EQ(r.exact, Vec{0x1p-20});
    EXPECT_DOUBLE_EQ(r.cond[0], 2 * (2 - 0x1p-20) / 0x1p-20);
    // Exact zeros: from cancellation (cond inf) and from zero terms (cond 0).
    r = oracle_of("dot", rows(d, {1, -1}, {3, 3}));
    EXPECT_EQ(r.exact, Vec{0});
    EXPECT_EQ(r.cond[0], INFINITY);
    r = oracle_of("dot", rows(d, {-0.0, 0}, {5, -0.0}));
    EXPECT_EQ(r.exact, Vec{0});
    EXPECT_EQ(r.cond, Vec{0});
  }
  // 1 + 2^-24 is a midpoint of f32: the exact sum decides it (ties to even), no interval can.
  const OracleResult r = oracle_of("dot", rows(DType::f32, {1, 0x1p-24}, {1, 1}));
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, Vec{1});
  EXPECT_EQ(oracle_of("dot", rows(DType::f32, {1, 0x1p-24, 0x1p-60}, {1, 1, 1})).exact,
            Vec{1 + 0x1p-23});
}

// Products of doubles are exact in binary128 and a short sum errs by <= n 2^-113 sum |a b|.
RC_GTEST_PROP(DotOracleProp, AgreesWithBinary128AndIgnoresOrder, ()) {
  const size_t n = *rc::gen::inRange<size_t>(1, 12);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const Input in = rows(d, *values(n), *values(n));
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  __float128 s = 0, abs = 0;
  for (size_t i = 0; i < n; ++i) {
    s += static_cast<__float128>(a[i]) * b[i];
    abs += std::fabs(a[i] * b[i]);
  }
  const OracleResult r = oracle_of("dot", in);
  RC_ASSERT(r.decidable);
  if (s != 0)
    if (auto ref = decisive<__float128>(d, s, abs / (s < 0 ? -s : s) * n * 0x1p-112))
      RC_ASSERT(r.exact[0] == *ref);
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  Vec pa, pb;
  for (size_t i : perm) pa.push_back(a[i]), pb.push_back(b[i]);
  RC_ASSERT(oracle_of("dot", rows(d, pa, pb)).exact == r.exact);
}

TEST(GemmOracle, IdentityOuterProductAndRowsAsDots) {
  for (DType d : {DType::f64, DType::f32}) {
    const Vec b = {1.5, -2, 0, 7, 0.25, -3};
    OracleResult r = oracle_of("gemm", make(d, {mat(2, 2, {1, 0, 0, 1}), mat(2, 3, b)}));
    EXPECT_EQ(r.exact, b);
    EXPECT_EQ(r.cond, (Vec{2, 2, 0, 2, 2, 2}));  // one nonzero product each; 0 for b = 0
    // k = 1: c_ij = a_i b_j rounded once (the double product of two floats is exact).
    const Input outer = make(d, {mat(3, 1, {0.1, -3.7, 1e10}), mat(1, 2, {2.9, -1e-7})});
    r = oracle_of("gemm", outer);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(r.exact[i * 2 + j],
                  round_to(d, outer.args[0].values[i] * outer.args[1].values[j]));
    // Every output is the dot oracle of its row and column.
    const Input in =
        make(d, {mat(2, 3, {1.25, -7, 3.5, 1e-3, 2, -2}), mat(3, 2, {3, 0.5, 1, -1, 9, 4})});
    r = oracle_of("gemm", in);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        Vec a, c;
        for (int l = 0; l < 3; ++l)
          a.push_back(in.args[0].values[i * 3 + l]), c.push_back(in.args[1].values[l * 2 + j]);
        const OracleResult rd = oracle_of("dot", rows(d, a, c));
        EXPECT_EQ(r.exact[i * 2 + j], rd.exact[0]);
        EXPECT_EQ(r.cond[i * 2 + j], rd.cond[0]);
      }
  }
}

// ---- attention ----------------------------------------------------------------------------------

// Long double reference: softmax(scale Q K^T) V for one query row.
std::vector<long double> attention_ld(const Input& in, size_t i, double scale) {
  const auto& q = in.args[0].values;
  const auto& k = in.args[1].values;
  const auto& v = in.args[2].values;
  const size_t dim = in.args[0].shape[1], t = in.args[1].shape[0], dv = in.args[2].shape[1];
  std::vector<long double> s(t), o(dv, 0);
  long double m = -INFINITY, z = 0;
  for (size_t l = 0; l < t; ++l) {
    for (size_t c = 0; c < dim; ++c)
      s[l] += static_cast<long double>(q[i * dim + c]) * k[l * dim + c];
    s[l] *= scale;
    m = std::max(m, s[l]);
  }
  for (size_t l = 0; l < t; ++l) z += s[l] = std::exp(s[l] - m);
  for (size_t j = 0; j < dv; ++j) {
    for (size_t l = 0; l < t; ++l) o[j] += s[l] * v[l * dv + j];
    o[j] /= z;
  }
  return o;
}

TEST(AttentionOracle, SingleKeyEqualKeysAndCausalFirstRow) {
  for (DType d : {DType::f64, DType::f32}) {
    // One key: weight 1, O = V whatever the scores; cond 1 (V's), 0 for an exact zero.
    OracleResult r = oracle_of(
        "attention", attention_input(d, 2, 2, 1, 3, {50, -3, 0.5, 9}, {7, 2}, {1.5, 0, -4}));
    EXPECT_EQ(r.exact, (Vec{1.5, 0, -4, 1.5, 0, -4}));
    EXPECT_EQ(r.cond, (Vec{1, 0, 1, 1, 0, 1}));
    // Equal keys: uniform weights, O = the mean of V's rows.
    r = oracle_of("attention",
                  attention_input(d, 1, 2, 2, 2, {0.3, -8}, {1, 2, 1, 2}, {1, 2, 3, 4}));
    EXPECT_EQ(r.exact, (Vec{2, 3}));
    // ... whose mean can be a tie of the dtype: 1 + u, decided (to even) since every step is exact.
    const double u = dtype_unit_roundoff(d);
    r = oracle_of("attention", attention_input(d, 1, 1, 2, 1, {0.5}, {3, 3}, {1, 1 + 2 * u}));
    ASSERT_TRUE(r.decidable);
    EXPECT_EQ(r.exact, Vec{1});
    // Causal: query 0 sees key 0 only.
    const Input c = attention_input(d, 2, 1, 2, 1, {1, 1}, {0, 10}, {5, 6}, {{"causal", 1}});
    r = oracle_of("attention", c);
    EXPECT_EQ(r.exact[0], 5);
    const auto ref = attention_ld(c, 1, 1.0);
    EXPECT_EQ(r.exact[1], *decisive<long double>(d, ref[0], 0x1p-56L));
  }
}

// Q = [1], K = [1; 0], V = [1; 0], scale 1: O = P_0 = e / (1 + e); cond = cV + cS with cV = 1 and
// cS = 2 P_0 A_0 |V_0 - O| / O = 2 (1 - P_0) (A_0 = 1; key 1 has A_1 = 0 and V_1 = 0... times P).
TEST(AttentionOracle, ConditionNumberByHand) {
  const OracleResult r = oracle_of(
      "attention", attention_input(DType::f64, 1, 1, 2, 1, {1}, {1, 0}, {1, 0}, {{"scale", 1}}));
  const long double p0 = std::exp(1.0L) / (1 + std::exp(1.0L));
  EXPECT_EQ(r.exact[0], *decisive<long double>(DType::f64, p0, 0x1p-60L));
  EXPECT_NEAR(r.cond[0], 1 + 2 * (1 - p0), 1e-12);
}

// Well-conditioned heads (V > 0, so cV = 1; scores within +-16): long double decides the rounding.
RC_GTEST_PROP(AttentionOracleProp, AgreesWithLongDouble, ()) {
  const int64_t s = *rc::gen::inRange(1, 4), t = *rc::gen::inRange(1, 5),
                dim = *rc::gen::inRange(1, 4);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  Vec v = *values(t * 2);
  for (auto& x : v) x = std::fabs(x) + 0.5;
  const Input in = attention_input(d, s, dim, t, 2, *values(s * dim), *values(t * dim), v);
  const OracleResult r = oracle_of("attention", in);
  RC_ASSERT(r.decidable);
  for (int64_t i = 0; i < s; ++i) {
    const auto ref = attention_ld(in, i, params::attention_params(in, double(dim)).scale);
    for (int j = 0; j < 2; ++j)
      if (auto y = decisive<long double>(d, ref[j], 0x1p-54L)) RC_ASSERT(r.exact[i * 2 + j] == *y);
  }
}

// ---- cosine_similarity and pairwise_distance ----------------------------------------------------

TEST(CosineOracle, IdentitiesBranchesAndHandCondition) {
  for (DType d : {DType::f64, DType::f32}) {
    const Vec a = {0.5, -3, 2.25, 7};
    Vec twice, neg;
    for (double x : a) twice.push_back(2 * x), neg.push_back(-x);
    OracleResult r = oracle_of("cosine_similarity", rows(d, a, twice));
    EXPECT_EQ(r.exact, Vec{1});
    EXPECT_LT(r.cond[0], 1e-15);  // y = 1 is a maximum: no first-order sensitivity
    EXPECT_EQ(oracle_of("cosine_similarity", rows(d, a, neg)).exact, Vec{-1});
    r = oracle_of("cosine_similarity", rows(d, {1, 0}, {0, 1}));
    EXPECT_EQ(r.exact, Vec{0});
    EXPECT_EQ(r.cond, Vec{0});
    r = oracle_of("cosine_similarity", rows(d, {0, 0}, {1, 2}));  // a zero row: 0
    EXPECT_EQ(r.exact, Vec{0});
    // a = e0, b = (1, 1): y = 1/sqrt(2); b's perturbations give |dy| = 1/(2 sqrt 2) each: cond 1.
    r = oracle_of("cosine_similarity", rows(d, {1, 0}, {1, 1}));
    EXPECT_EQ(r.exact[0], round_to(d, std::sqrt(0.5)));
    EXPECT_NEAR(r.cond[0], 1, 1e-12);
    // Below eps: y = a.b / eps and the dot product's cond, 2 sum |a b| / |a.b|.
    const Input small = rows(d, {0x1p-10, 0x1p-12}, {0x1p-11, -0x1p-11}, {{"eps", 0x1p-16}});
    r = oracle_of("cosine_similarity", small);
    EXPECT_EQ(r.exact[0], (0x1p-21 - 0x1p-23) / 0x1p-16);
    EXPECT_DOUBLE_EQ(r.cond[0], 2 * (0x1p-21 + 0x1p-23) / (0x1p-21 - 0x1p-23));
  }
}

RC_GTEST_PROP(CosineOracleProp, AgreesWithLongDoubleAndScalesByPowersOfTwo, ()) {
  const size_t n = *rc::gen::inRange<size_t>(1, 10);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const Input in = rows(d, *values(n), *values(n));
  const auto& a = in.args[0].values;
  const auto& b = in.args[1].values;
  long double ab = 0, aa = 0, bb = 0, abs = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += static_cast<long double>(a[i]) * b[i];
    abs += std::fabs(static_cast<long double>(a[i]) * b[i]);
    aa += static_cast<long double>(a[i]) * a[i];
    bb += static_cast<long double>(b[i]) * b[i];
  }
  const OracleResult r = oracle_of("cosine_similarity", in);
  RC_ASSERT(r.decidable);
  RC_PRE(ab != 0 && aa * bb > 1e-14L);  // above eps: y = a.b / (|a| |b|)
  const long double y = ab / std::sqrt(aa * bb);
  if (auto ref = decisive<long double>(d, y, (abs / std::fabs(ab) + 1) * (n + 4) * 0x1p-62L))
    RC_ASSERT(r.exact[0] == *ref);
  Vec a8;
  for (double x : a) a8.push_back(x * 256);
  RC_ASSERT(oracle_of("cosine_similarity", rows(d, a8, b)).exact == r.exact);
}

TEST(PairwiseDistanceOracle, IdentitiesMidpointsAndConditions) {
  for (DType d : {DType::f64, DType::f32}) {
    const double eps = round_to(d, 1e-6);
    // b = a: every d_i = eps, y = 2 eps for n = 4; cond = sum eps 2|a_i| / (4 eps^2).
    OracleResult r = oracle_of("pairwise_distance", rows(d, {1, -2, 3, 0.5}, {1, -2, 3, 0.5}));
    EXPECT_EQ(r.exact, Vec{2 * eps});
    EXPECT_NEAR(r.cond[0] / (2 * 6.5 / (4 * eps)), 1, 1e-12);
    // 3-4-5 with eps = 0: cond = (3 * 3 + 4 * 4) / 25 = 1.
    r = oracle_of("pairwise_distance", rows(d, {3, 0}, {0, -4}, {{"eps", 0}}));
    EXPECT_EQ(r.exact, Vec{5});
    EXPECT_NEAR(r.cond[0], 1, 1e-15);
    // Exact zeros: a - b + eps = 0 (cond inf), all zero (cond 0).
    r = oracle_of("pairwise_distance", rows(d, {0}, {eps}));
    EXPECT_EQ(r.exact, Vec{0});
    EXPECT_EQ(r.cond[0], INFINITY);
    r = oracle_of("pairwise_distance", rows(d, {0, -0.0}, {0, 0}, {{"eps", 0}}));
    EXPECT_EQ(r.exact, Vec{0});
    EXPECT_EQ(r.cond, Vec{0});
  }
  // |1 - 0 + 2^-24| is an f32 midpoint: decided (ties to even) because every step was exact.
  const OracleResult r =
      oracle_of("pairwise_distance", rows(DType::f32, {1}, {0}, {{"eps", 0x1p-24}}));
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, Vec{1});
}

RC_GTEST_PROP(PairwiseDistanceOracleProp, AgreesWithLongDouble, ()) {
  const size_t n = *rc::gen::inRange<size_t>(1, 10);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const Input in = rows(d, *values(n), *values(n));
  // d_i errs by 2^-63 (|a_i| + |b_i| + |d_i|): y by 2^-63 (cond + n + 2), cond = c / s.
  long double s = 0, c = 0, eps = round_to(d, params::kPairwiseEpsDefault);
  for (size_t i = 0; i < n; ++i) {
    const long double a = in.args[0].values[i], b = in.args[1].values[i], di = a - b + eps;
    s += di * di;
    c += std::fabs(di) * (std::fabs(a) + std::fabs(b));
  }
  const OracleResult r = oracle_of("pairwise_distance", in);
  RC_ASSERT(r.decidable);
  RC_PRE(s > 0);
  const long double rel = (c / s + n + 4) * 0x1p-61L;
  if (auto ref = decisive<long double>(d, std::sqrt(s), rel)) RC_ASSERT(r.exact[0] == *ref);
}

// ---- adam ---------------------------------------------------------------------------------------

// PyTorch's formula in long double with the parameters as the dtype holds them.
long double adam_ld(const Input& in, size_t i) {
  const auto q = params::adam_params(in);
  const long double p = in.args[0].values[i], g = in.args[1].values[i];
  const long double m = in.args[2].values[i], v = in.args[3].values[i];
  const long double mp = q.beta1 * m + (1 - static_cast<long double>(q.beta1)) * g;
  const long double vp = q.beta2 * v + (1 - static_cast<long double>(q.beta2)) * g * g;
  const long double bc1 = 1 - std::pow(static_cast<long double>(q.beta1), q.step);
  const long double bc2 = 1 - std::pow(static_cast<long double>(q.beta2), q.step);
  return p - q.lr * (mp / bc1) / (std::sqrt(vp / bc2) + q.eps);
}

TEST(AdamOracle, IdentitiesAndHandCondition) {
  for (DType d : {DType::f64, DType::f32}) {
    // lr = 0, or m' = 0 exactly: p' = p.
    OracleResult r =
        oracle_of("adam", adam_input(d, {0.75, -2}, {3, 1}, {1, 0}, {4, 0}, {{"lr", 0}}));
    EXPECT_EQ(r.exact, (Vec{0.75, -2}));
    r = oracle_of("adam", adam_input(d, {0.75}, {0}, {0}, {0}));
    EXPECT_EQ(r.exact, Vec{0.75});
    EXPECT_EQ(r.cond, Vec{1});
    // p = 1, g = 1, m = v = 0, lr = b1 = b2 = eps = 1/2, t = 1: m^ = v^ = 1, U = 1/3, p' = 2/3;
    // dp'/dg g = -dU/dg = -1/9, so cond = (1 + 1/9) / (2/3) = 5/3.
    const Params half = {{"lr", 0.5}, {"beta1", 0.5}, {"beta2", 0.5}, {"eps", 0.5}};
    r = oracle_of("adam", adam_input(d, {1}, {1}, {0}, {0}, half));
    EXPECT_EQ(r.exact, Vec{round_to(d, 2.0 / 3)});
    EXPECT_NEAR(r.cond[0], 5.0 / 3, 1e-12);
  }
}

RC_GTEST_PROP(AdamOracleProp, AgreesWithLongDouble, ()) {
  const size_t n = *rc::gen::inRange<size_t>(1, 6);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  Vec v = *values(n);
  for (auto& x : v) x = std::fabs(x);
  const double step = *rc::gen::element(1.0, 2.0, 10.0, 1000.0, 1e6);
  const Input in = adam_input(d, *values(n), *values(n), *values(n), v, {{"step", step}});
  const OracleResult r = oracle_of("adam", in);
  RC_ASSERT(r.decidable);
  for (size_t i = 0; i < n; ++i) {
    RC_ASSERT(r.cond[i] >= 0);
    // The long double formula errs by ~2^-60 (kappa + 10) |U| + 2^-64 |p'|, kappa = (|b1 m| +
    // |(1 - b1) g|) / |m'| (the first moment's cancellation).
    const auto q = params::adam_params(in);
    const long double p = in.args[0].values[i], g = in.args[1].values[i], m = in.args[2].values[i];
    const long double y = adam_ld(in, i), u = std::fabs(p - y);
    const long double mp = q.beta1 * m + (1 - static_cast<long double>(q.beta1)) * g;
    if (y == 0 || mp == 0) continue;
    const long double kappa =
        (std::fabs(q.beta1 * m) + std::fabs((1 - q.beta1) * g)) / std::fabs(mp);
    const long double rel = ((kappa + 10) * u / std::fabs(y) + 1) * 0x1p-58L;
    if (auto ref = decisive<long double>(d, y, rel)) RC_ASSERT(r.exact[i] == *ref);
  }
}

// ---- the stable targets -------------------------------------------------------------------------

const char* const kFamilies[] = {
    "dot", "gemm", "attention", "cosine_similarity", "pairwise_distance", "adam"};

// Every regime, both dtypes, two inputs each: valid, decidable, and no oracle or CESTAC finding.
TEST(LinalgStable, MatchesTheOracleWithinTolerance) {
  for (const char* name : kFamilies) {
    const Family& fam = family(name);
    const Target& t = stable(name);
    for (DType d : {DType::f64, DType::f32})
      for (const auto& regime : fam.regimes)
        for (uint64_t seed = 1; seed <= 2; ++seed) {
          SeededEntropy e(seed, std::hash<std::string>{}(regime.name));
          const Input in = regime.sample(e, d);
          ASSERT_FALSE(fam.validate(in)) << name << " " << regime.name;
          const OracleResult o = fam.oracle(in);
          ASSERT_TRUE(o.decidable) << name << " " << regime.name;
          CestacRequest req;
          req.seed = seed;
          const CestacOutput c = t.cestac(in, req);
          const Verdict v = judge(fam, in, t.native(in), o, &c);
          EXPECT_FALSE(v.finding()) << name << " " << dtype_name(d) << " " << regime.name << ": "
                                    << v.max_ulp << " ulps, cond " << v.cond << ", digits "
                                    << v.cestac_digits << " of " << v.expected_digits;
        }
  }
}

// Textbook formulations fail the verdict where the stable ones pass: the tolerances are tight
// enough to see them.
TEST(LinalgStable, NaiveFormulationsAreFindings) {
  // cosine: a.b / (|a| |b|) in f32 with norms near 1e20: |a| |b| overflows, y comes out 0.
  Vec a(8), b(8);
  for (int i = 0; i < 8; ++i) a[i] = (i + 1) * 1e19, b[i] = (8 - i) * 3e19;
  Input in = rows(DType::f32, a, b);
  float ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < 8; ++i)
    ab += float(a[i]) * float(b[i]), aa += float(a[i]) * float(a[i]),
        bb += float(b[i]) * float(b[i]);
  const Family& cos = family("cosine_similarity");
  EXPECT_TRUE(
      judge(cos, in, {double(ab / (std::sqrt(aa) * std::sqrt(bb)))}, cos.oracle(in), nullptr)
          .finding());
  EXPECT_FALSE(
      judge(cos, in, stable("cosine_similarity").native(in), cos.oracle(in), nullptr).finding());
  // attention without the max shift: e^s overflows f32 for scores near 100.
  in = attention_input(DType::f32, 1, 1, 2, 1, {10}, {10, 9}, {1, 2}, {{"scale", 1}});
  const float e0 = std::exp(100.0f), e1 = std::exp(90.0f);
  const Family& att = family("attention");
  EXPECT_TRUE(
      judge(att, in, {double((e0 * 1 + e1 * 2) / (e0 + e1))}, att.oracle(in), nullptr).finding());
  EXPECT_FALSE(judge(att, in, stable("attention").native(in), att.oracle(in), nullptr).finding());
  // adam with 1 - pow(beta2, t) in f32, beta2 = 0.9999, t = 3: the bias correction loses ~2^10
  // ulps to cancellation, seen where p = 0 (p' = -U). (At beta2 = 0.999 the loss, ~44 ulps, stays
  // within tolerance 41 x cond 1.5.)
  in = adam_input(DType::f32, {0}, {0.3}, {0.2}, {0.01}, {{"step", 3}, {"beta2", 0.9999}});
  const auto q = params::adam_params(in);
  const float b1 = q.beta1, b2 = q.beta2, g = 0.3f, m = 0.2f, v = 0.01f;
  const float mp = b1 * m + (1 - b1) * g, vp = b2 * v + (1 - b2) * g * g;
  const float bc1 = 1 - std::pow(b1, 3.0f), bc2 = 1 - std::pow(b2, 3.0f);
  const float naive = 0 - float(q.lr) * (mp / bc1) / (std::sqrt(vp / bc2) + float(q.eps));
  const Family& adam = family("adam");
  EXPECT_TRUE(judge(adam, in, {double(naive)}, adam.oracle(in), nullptr).finding());
  EXPECT_FALSE(judge(adam, in, stable("adam").native(in), adam.oracle(in), nullptr).finding());
}

}  // namespace
}  // namespace stabfuzz
