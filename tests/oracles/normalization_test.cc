// Normalization group: oracles against long double, identities, conditions, contracts, kernels.
#include "oracles/normalization.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/family.h"
#include "stabfuzz/op.h"
#include "targets/cpu/normalization.h"

namespace stabfuzz {
namespace {

using Params = std::vector<std::pair<std::string, double>>;
using LD = long double;

const Family& fam(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  return *f;
}

Input row(DType d, std::vector<double> x, Params p = {}) {
  const auto n = static_cast<int64_t>(x.size());
  return regime::make_input(d, {Tensor{{n}, std::move(x)}}, std::move(p));
}

Input rows2(DType d, std::vector<double> a, std::vector<double> b) {
  const auto n = static_cast<int64_t>(a.size());
  return regime::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{n}, std::move(b)}});
}

Input matrix(DType d, int64_t n, int64_t c, std::vector<double> v, Params p = {}) {
  return regime::make_input(d, {Tensor{{n, c}, std::move(v)}}, std::move(p));
}

double to_dtype(DType d, LD v) {
  return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
}

// The oracle agrees with a long double reference within 1 ULP (long double carries 11 more bits).
void expect_matches(const OracleResult& r, const std::vector<LD>& ref, DType d) {
  ASSERT_TRUE(r.decidable);
  ASSERT_EQ(r.exact.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_LE(ulp_distance(d, r.exact[i], to_dtype(d, ref[i])), 1.0)
        << dtype_name(d) << " i=" << i << " oracle " << r.exact[i] << " ref "
        << static_cast<double>(ref[i]);
}

bool valid(const char* family, const Input& in) { return !fam(family).validate(in).has_value(); }

// ---- contracts --------------------------------------------------------------------------------

TEST(NormalizationContracts, RejectNonFiniteAndMalformedInputs) {
  for (const char* f : {"log_softmax", "cross_entropy", "layer_norm", "rms_norm", "entropy"}) {
    EXPECT_FALSE(valid(f, row(DType::f64, {1.0, NAN}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {1.0, INFINITY}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {-INFINITY, 0.5}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {0.5}, {{"bogus", 1}}))) << f;
    EXPECT_FALSE(valid(f, matrix(DType::f64, 1, 2, {0.5, 0.25}))) << f;
    EXPECT_TRUE(valid(f, row(DType::f64, {0.0, -0.0, 0.5}))) << f;
    EXPECT_TRUE(valid(f, row(DType::f32, {0.5}))) << f;
    Input unrounded;  // 0.1 is not a float
    unrounded.dtype = DType::f32;
    unrounded.args = {Tensor{{1}, {0.1}}};
    EXPECT_FALSE(valid(f, unrounded)) << f;
  }
  for (const char* f : {"bce_with_logits", "kl_div"}) {
    EXPECT_TRUE(valid(f, rows2(DType::f64, {-1.0, 0.0}, {0.0, 1.0}))) << f;
    EXPECT_FALSE(valid(f, rows2(DType::f64, {0.0, 0.0}, {0.5, 1.5}))) << f;
    EXPECT_FALSE(valid(f, rows2(DType::f64, {0.0, 0.0}, {-0.25, 0.5}))) << f;
    EXPECT_FALSE(valid(f, rows2(DType::f64, {0.0, 0.0}, {NAN, 0.5}))) << f;
    EXPECT_FALSE(valid(f, rows2(DType::f64, {NAN, 0.0}, {0.5, 0.5}))) << f;
    EXPECT_FALSE(valid(f, rows2(DType::f64, {0.0}, {0.5, 0.5}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {0.0}))) << f;
  }
  EXPECT_FALSE(valid("entropy", row(DType::f64, {0.5, 1.25})));
  EXPECT_FALSE(valid("entropy", row(DType::f64, {-0.25})));
}

TEST(NormalizationContracts, ParametersAreChecked) {
  for (double t : {-1.0, 3.0, 0.5, std::nan("")})
    EXPECT_FALSE(valid("cross_entropy", row(DType::f64, {1, 2, 3}, {{"target", t}}))) << t;
  EXPECT_TRUE(valid("cross_entropy", row(DType::f64, {1, 2, 3}, {{"target", 2}})));
  EXPECT_TRUE(valid("cross_entropy", row(DType::f64, {1, 2, 3})));  // default target 0
  for (const char* f : {"layer_norm", "rms_norm"}) {
    EXPECT_FALSE(valid(f, row(DType::f64, {1, 2}, {{"eps", 0}}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {1, 2}, {{"eps", -1e-5}}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f64, {1, 2}, {{"eps", NAN}}))) << f;
    EXPECT_TRUE(valid(f, row(DType::f64, {1, 2}, {{"eps", 1e-50}}))) << f;
    EXPECT_FALSE(valid(f, row(DType::f32, {1, 2}, {{"eps", 1e-50}})))
        << f << ": eps rounds to 0 in f32";
  }
  // layer_norm bounds |x| by max / 2 so that x - mean stays finite (its sums are scaled); rms_norm
  // needs no bound.
  EXPECT_FALSE(valid("layer_norm", row(DType::f64, {1e308, 1})));  // > max / 2
  EXPECT_TRUE(valid("layer_norm", row(DType::f64, {8e307, -8e307})));
  EXPECT_TRUE(valid("rms_norm", row(DType::f64, {1e308, -1e308})));
  // Logits and logq are bounded the same way, so that x_i - max x stays finite; kl_div's sum of
  // p (|log p| + |logq|) must stay below max / 4.
  EXPECT_FALSE(valid("log_softmax", row(DType::f64, {1e308, -1e308})));
  EXPECT_TRUE(valid("log_softmax", row(DType::f64, {8e307, -8e307})));
  EXPECT_FALSE(valid("kl_div", rows2(DType::f64, {-1e308}, {0.5})));
  EXPECT_FALSE(valid("kl_div", rows2(DType::f64, {-8e307, -8e307}, {1.0, 1.0})));
  EXPECT_TRUE(valid("kl_div", rows2(DType::f64, {-1e302}, {0.5})));
  EXPECT_TRUE(valid("bce_with_logits", rows2(DType::f64, {-1e308}, {0.5})));
  EXPECT_FALSE(valid("batch_norm", row(DType::f64, {1, 2})));
  EXPECT_TRUE(valid("batch_norm", matrix(DType::f64, 2, 1, {1, 2})));
  EXPECT_FALSE(valid("batch_norm", regime::make_input(DType::f64, {Tensor{{2, 2}, {1, 2, 3}}})));
}

TEST(NormalizationContracts, RegimesAreValidAndStableTargetsPass) {
  const char* names[] = {"log_softmax", "cross_entropy",   "layer_norm", "rms_norm",
                         "batch_norm",  "bce_with_logits", "kl_div",     "entropy"};
  for (const char* name : names) {
    const Family& f = fam(name);
    EXPECT_GE(f.regimes.size(), 4u) << name;
    EXPECT_LE(f.regimes.size(), 7u) << name;
    ASSERT_EQ(f.targets.at(0).kind, TargetKind::reference) << name;  // injected ones follow
    const Target& t = f.targets[0];
    EXPECT_EQ(t.id, std::string(name) + "/cpu/stable");
    for (DType d : {DType::f64, DType::f32})
      for (size_t k = 0; k < f.regimes.size(); ++k)
        for (int s = 0; s < 2; ++s) {
          SeededEntropy e(17 + s, k);
          const Input in = f.regimes[k].sample(e, d);
          const auto bad = f.validate(in);
          ASSERT_FALSE(bad) << name << " " << f.regimes[k].name << ": " << *bad;
          const Verdict v = pipeline::evaluate(f, t, in, CestacRequest{});
          EXPECT_FALSE(v.undecidable) << name << " " << f.regimes[k].name;
          EXPECT_FALSE(v.finding()) << name << " " << f.regimes[k].name << " " << dtype_name(d)
                                    << " ratio " << v.max_ratio << " deficit " << v.digits_deficit;
        }
  }
}

// ---- log_softmax and cross_entropy ------------------------------------------------------------

std::vector<LD> log_softmax_ld(const std::vector<double>& x) {
  LD m = -INFINITY, s = 0;
  for (double v : x) m = std::max<LD>(m, v);
  for (double v : x) s += std::exp(static_cast<LD>(v) - m);
  std::vector<LD> y;
  for (double v : x) y.push_back(static_cast<LD>(v) - m - std::log(s));
  return y;
}

TEST(LogSoftmaxOracle, SpecialValues) {
  for (DType d : {DType::f64, DType::f32}) {
    const auto one = oracle::log_softmax(row(d, {-3.5}));
    EXPECT_EQ(one.exact, std::vector<double>{0.0});
    EXPECT_EQ(one.cond, std::vector<double>{0.0});  // y = 0 and dy/dx = 0
    const auto zeros = oracle::log_softmax(row(d, {0.0, -0.0}));
    EXPECT_EQ(zeros.exact[0], to_dtype(d, -std::log(2.0L)));
    EXPECT_EQ(zeros.exact[1], zeros.exact[0]);
    EXPECT_EQ(zeros.cond, (std::vector<double>{0.0, 0.0}));  // every |x_j| is 0
  }
}

TEST(LogSoftmaxOracle, MatchesLongDouble) {
  for (DType d : {DType::f64, DType::f32}) {
    const Input in = row(d, {0.1, -0.7, 1.3, 2.0, -5.25});
    expect_matches(oracle::log_softmax(in), log_softmax_ld(in.args[0].values), d);
    const Input big = row(d, {700.5, 699.0, 650.0});  // exp would overflow without the shift
    expect_matches(oracle::log_softmax(big), log_softmax_ld(big.args[0].values), d);
  }
}

TEST(LogSoftmaxOracle, PermutationAndExactShiftIdentities) {
  const std::vector<double> x{0.75, -2.5, 3.125, 1.0};
  const auto a = oracle::log_softmax(row(DType::f64, x));
  const auto b = oracle::log_softmax(row(DType::f64, {x[2], x[0], x[3], x[1]}));
  EXPECT_EQ(b.exact, (std::vector<double>{a.exact[2], a.exact[0], a.exact[3], a.exact[1]}));
  std::vector<double> shifted = x;
  for (auto& v : shifted) v += 1024;  // exact: dyadic values
  EXPECT_EQ(oracle::log_softmax(row(DType::f64, shifted)).exact, a.exact);
}

TEST(LogSoftmaxOracle, DominantLogitUsesLog1p) {
  // y_0 = -log1p(e^-40) ~ -4.2e-18: log(1 + t) in double would give 0.
  const auto r = oracle::log_softmax(row(DType::f64, {0.0, -40.0}));
  EXPECT_EQ(r.exact[0], static_cast<double>(-std::log1p(std::exp(-40.0L))));
  EXPECT_LT(r.exact[0], 0.0);
  // cond_0 = s_1 |x_1| / |y_0| ~ 40 (s_1 ~ |y_0| ~ e^-40); cond_1 = (40 (1 - s_1)) / 40.
  EXPECT_NEAR(r.cond[0], 40.0, 1e-12);
  EXPECT_NEAR(r.cond[1], 1.0, 1e-12);
}

TEST(LogSoftmaxOracle, ConditionNumberByHand) {
  // x = [1, 0]: s_0 = e/(1+e); cond_0 = 1 (1 - s_0) / |y_0|, cond_1 = s_0 * 1 / |y_1|.
  const auto r = oracle::log_softmax(row(DType::f64, {1.0, 0.0}));
  const LD s0 = std::exp(1.0L) / (1 + std::exp(1.0L));
  EXPECT_NEAR(r.cond[0], static_cast<double>((1 - s0) / std::log1p(std::exp(-1.0L))), 1e-12);
  EXPECT_NEAR(r.cond[1], static_cast<double>(s0 / std::log1p(std::exp(1.0L))), 1e-12);
}

TEST(LogSoftmaxKernel, SubnormalTailIsRoundedOnce) {
  // y_0 = -log1p(t), t = sum_j e^(x_j) ~ 1e-311: the sum of these 1000 subnormal exps errs by 13
  // subnormal ULPs (up to 500 in general); e^((m2 - m) + log u) rounds once.
  std::vector<double> x{0.0};
  for (int j = 0; j < 1000; ++j) x.push_back(-720.0 - 0.0123 * j);
  const Input in = row(DType::f64, x);
  const auto y = op_native<targets::LogSoftmaxStable>()(in);
  const auto r = oracle::log_softmax(in);
  EXPECT_LT(r.exact[0], 0.0);
  EXPECT_GT(r.exact[0], -dtype_min_normal(DType::f64));
  EXPECT_LE(ulp_distance(DType::f64, y[0], r.exact[0]), 3.0) << y[0] << " " << r.exact[0];
  const Family& f = fam("log_softmax");
  EXPECT_FALSE(pipeline::evaluate(f, f.targets[0], in, CestacRequest{}).finding());
}

TEST(CrossEntropyOracle, IsMinusLogSoftmaxAtTheTarget) {
  const std::vector<double> x{0.3, -1.7, 2.25, 900.0, 899.5};
  for (DType d : {DType::f64, DType::f32}) {
    const auto ls = oracle::log_softmax(row(d, x));
    for (size_t t = 0; t < x.size(); ++t) {
      const auto ce = oracle::cross_entropy(row(d, x, {{"target", static_cast<double>(t)}}));
      ASSERT_TRUE(ce.decidable);
      EXPECT_EQ(ce.exact, std::vector<double>{-ls.exact[t]}) << t;
      EXPECT_EQ(ce.cond, std::vector<double>{ls.cond[t]}) << t;
    }
  }
  const auto two = oracle::cross_entropy(row(DType::f64, {0.0, 0.0}));
  EXPECT_EQ(two.exact, std::vector<double>{static_cast<double>(std::log(2.0L))});
  const auto one = oracle::cross_entropy(row(DType::f64, {5.0}));
  EXPECT_EQ(one.exact, std::vector<double>{0.0});
  EXPECT_EQ(one.cond, std::vector<double>{0.0});
  // x = [2, 0], t = 1: loss = 2 + log1p(e^-2), cond = s_0 |x_0| / loss.
  const auto h = oracle::cross_entropy(row(DType::f64, {2.0, 0.0}, {{"target", 1}}));
  const LD loss = 2 + std::log1p(std::exp(-2.0L)), s0 = 1 / (1 + std::exp(-2.0L));
  EXPECT_EQ(h.exact[0], static_cast<double>(loss));
  EXPECT_NEAR(h.cond[0], static_cast<double>(2 * s0 / loss), 1e-12);
}

// ---- layer_norm, rms_norm, batch_norm ---------------------------------------------------------

// Centred values as (n x_i - sum x) / n: exact in long double for the short rows used here (the
// sums need <= 64 bits), so the reference does not lose the digits a rounded mean would.
std::vector<LD> layer_norm_ld(const std::vector<double>& x, LD eps) {
  const LD n = static_cast<LD>(x.size());
  LD s = 0, v = 0;
  for (double a : x) s += a;
  std::vector<LD> c;
  for (double a : x) c.push_back((n * a - s) / n);
  for (LD a : c) v += a * a;
  v /= n;
  for (LD& a : c) a /= std::sqrt(v + eps);
  return c;
}

// cond_i = sum_j |d_ij - (1 + y_i y_j) / n| |x_j| / |x_i - mu| in O(n^2), from the rounded y.
std::vector<LD> layer_norm_cond_brute(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  LD mu = 0;
  for (double a : x) mu += a;
  mu /= n;
  std::vector<LD> c(n);
  for (size_t i = 0; i < n; ++i) {
    LD s = 0;
    for (size_t j = 0; j < n; ++j)
      s += std::fabs((i == j ? 1.0L : 0.0L) - (1 + static_cast<LD>(y[i]) * y[j]) / n) *
           std::fabs(static_cast<LD>(x[j]));
    c[i] = s / std::fabs(x[i] - mu);
  }
  return c;
}

TEST(LayerNormOracle, MatchesLongDoubleAndBruteForceCondition) {
  SeededEntropy e(3, 4);
  for (DType d : {DType::f64, DType::f32})
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<double> x(2 + e.below(40));
      for (auto& v : x) v = (rep % 2 ? 100.0 : 0.0) + e.normal() * (rep % 3 ? 1.0 : 1e-3);
      const Input in = row(d, x);
      const auto r = oracle::layer_norm(in);
      expect_matches(r, layer_norm_ld(in.args[0].values, to_dtype(d, 1e-5L)), d);
      const auto brute = layer_norm_cond_brute(in.args[0].values, r.exact);
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_NEAR(r.cond[i], static_cast<double>(brute[i]),
                    1e-4 * static_cast<double>(brute[i]) + 1e-9)
            << dtype_name(d) << " rep " << rep << " i " << i;
    }
}

TEST(LayerNormOracle, ZerosAndTheirConvention) {
  const auto c = oracle::layer_norm(row(DType::f32, {123456.0f, 123456.0f, 123456.0f}));
  EXPECT_EQ(c.exact, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(c.cond, (std::vector<double>{INFINITY, INFINITY, INFINITY}));  // y_i moves with x_j
  const auto z = oracle::layer_norm(row(DType::f64, {0.0, -0.0}));
  EXPECT_EQ(z.cond, (std::vector<double>{0, 0}));
  const auto one = oracle::layer_norm(row(DType::f64, {7.0}));
  EXPECT_EQ(one.exact, std::vector<double>{0.0});
  EXPECT_EQ(one.cond, std::vector<double>{0.0});  // dy/dx = 0 for n = 1
  const auto mid = oracle::layer_norm(row(DType::f64, {1.0, 2.0, 3.0}));
  EXPECT_EQ(mid.exact[1], 0.0);
  EXPECT_EQ(mid.exact[0], -mid.exact[2]);
  EXPECT_EQ(mid.cond[1], INFINITY);
}

TEST(LayerNormOracle, ConditionOfTwoValuesByHand) {
  // x = [1, 3]: c = -+1, v = 1, y = -+1/sqrt(1 + eps); both j terms carry 1 - 1/(1+eps), so
  // cond_i = (1 + 3) eps / (2 (1 + eps)): scale and shift invariance leave only eps's share.
  const double eps = 1e-5;
  const auto r = oracle::layer_norm(row(DType::f64, {1.0, 3.0}, {{"eps", eps}}));
  const double want = 4 * eps / (2 * (1 + eps));
  EXPECT_NEAR(r.cond[0], want, 1e-9 * want);
  EXPECT_NEAR(r.cond[1], want, 1e-9 * want);
  // Mean-shifted data: cond ~ |x| / |x - mu| counts the shift.
  const auto s = oracle::layer_norm(row(DType::f64, {1e4, 1e4 + 1, 1e4 + 3}));
  EXPECT_GT(s.cond[0], 1e3);
}

TEST(LayerNormOracle, ShiftInvarianceAndEpsRounding) {
  const std::vector<double> x{0.5, -1.25, 3.0, 2.75};
  std::vector<double> shifted = x;
  for (auto& v : shifted) v += 4096;  // exact
  EXPECT_EQ(oracle::layer_norm(row(DType::f64, x)).exact,
            oracle::layer_norm(row(DType::f64, shifted)).exact);
  // f32 kernels add eps rounded to float: the oracle uses the same eps.
  const Input in = row(DType::f32, {0.0, 0x1p-10}, {{"eps", 1e-5}});
  expect_matches(oracle::layer_norm(in), layer_norm_ld(in.args[0].values, static_cast<float>(1e-5)),
                 DType::f32);
}

TEST(RmsNormOracle, ValuesAndConditionByHand) {
  // x = [3, 4]: ms = 12.5; Y = sum y^2 = 25 / (12.5 + eps); cond_0 = |1 - y_0^2/2| + y_1^2/2.
  const double eps = 1e-6;
  const auto r = oracle::rms_norm(row(DType::f64, {3.0, 4.0}));
  const LD s = std::sqrt(12.5L + static_cast<LD>(eps)), y0 = 3 / s, y1 = 4 / s;
  EXPECT_EQ(r.exact, (std::vector<double>{static_cast<double>(y0), static_cast<double>(y1)}));
  EXPECT_NEAR(r.cond[0], static_cast<double>(std::fabs(1 - y0 * y0 / 2) + y1 * y1 / 2), 1e-12);
  EXPECT_NEAR(r.cond[1], static_cast<double>(std::fabs(1 - y1 * y1 / 2) + y0 * y0 / 2), 1e-12);
  const auto z = oracle::rms_norm(row(DType::f32, {0.0, 2.0, -0.0}));
  EXPECT_EQ(z.exact[0], 0.0);
  EXPECT_EQ(z.cond[0], 0.0);  // y_0 stays exactly 0
  EXPECT_EQ(z.cond[2], 0.0);
  const auto zeros = oracle::rms_norm(row(DType::f64, {0.0, 0.0}));
  EXPECT_EQ(zeros.exact, (std::vector<double>{0, 0}));
}

TEST(RmsNormOracle, HugeValuesMatchLongDouble) {
  const std::vector<double> x{1e300, -3e299, 7e298};
  const auto r = oracle::rms_norm(row(DType::f64, x));
  LD ms = 0;
  for (double v : x) ms += static_cast<LD>(v) * v;
  ms /= 3;
  std::vector<LD> ref;
  for (double v : x) ref.push_back(v / std::sqrt(ms + 1e-6L));
  expect_matches(r, ref, DType::f64);
}

TEST(BatchNormOracle, ChannelsAreLayerNormsOfColumns) {
  const std::vector<double> v{1.5, 100.0, -2.0, 100.5, 0.25, 99.0, 3.0, 101.0};  // [4, 2]
  for (DType d : {DType::f64, DType::f32}) {
    const auto b = oracle::batch_norm(matrix(d, 4, 2, v, {{"eps", 1e-3}}));
    ASSERT_TRUE(b.decidable);
    for (size_t c = 0; c < 2; ++c) {
      const auto l =
          oracle::layer_norm(row(d, {v[c], v[2 + c], v[4 + c], v[6 + c]}, {{"eps", 1e-3}}));
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(b.exact[i * 2 + c], l.exact[i]);
        EXPECT_EQ(b.cond[i * 2 + c], l.cond[i]);
      }
    }
  }
}

TEST(BatchNormKernel, ConstantChannelGivesExactZeroWhereTwoPassWithARoundedMeanGivesOne) {
  const float c = 123456792.0f;  // |x| > 1e7: 7 c rounds, so a rounded mean misses c by 8
  std::vector<double> v;
  for (int i = 0; i < 7; ++i) v.insert(v.end(), {c, static_cast<double>(i)});
  const Input in = matrix(DType::f32, 7, 2, v);
  const auto out = op_native<targets::BatchNormStable>()(in);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(out[2 * i], 0.0) << i;
  // Plain two-pass in float: mean = fl(sum / n) != c, so y = d / sqrt(d^2 + eps) = +-1.
  float s = 0;
  for (int i = 0; i < 7; ++i) s += c;
  const float mean = s / 7, d = c - mean;
  EXPECT_NEAR(std::fabs(d / std::sqrt(d * d + 1e-5f)), 1.0f, 1e-6f);
  // The stable kernel under CESTAC: no instability invalidates the run.
  const auto ce = op_cestac<targets::BatchNormStable>()(in, CestacRequest{});
  EXPECT_FALSE(ce.log.self_validation_failed());
}

TEST(NormKernels, CentredValuesAtNoiseLevelAreNotSquared) {
  // The mean is 0.25 = x_2, but +-big round the correction mu2: under CESTAC c_2 is a noisy zero,
  // and c_2 * c_2 would be an unstable multiplication (a self-validation failure; 3 of these 6
  // runs fail when the kernel squares it).
  int failures = 0;
  for (double big : {1e10, 3e7, 1e12})
    for (DType d : {DType::f64, DType::f32}) {
      const Input in = row(d, {big, -big, 0.25, 0.5, 0.75, 0.0});
      failures +=
          op_cestac<targets::LayerNormStable>()(in, CestacRequest{}).log.self_validation_failed();
    }
  EXPECT_EQ(failures, 0);
}

TEST(NormKernels, StableTargetsKeepExactZerosAndHugeValues) {
  const auto rms = op_native<targets::RmsNormStable>()(row(DType::f32, {0.0, 3.0, -0.0, 4.0}));
  EXPECT_EQ(rms[0], 0.0);
  EXPECT_EQ(rms[2], 0.0);
  const auto huge = op_native<targets::RmsNormStable>()(row(DType::f32, {3e38f, -3e38f}));
  EXPECT_EQ(huge[0], 1.0);
  EXPECT_EQ(huge[1], -1.0);
  const Input tiny = row(DType::f32, {1e-30f, -1e-30f});  // x^2 underflows: y = x / sqrt(eps)
  const auto t = op_native<targets::LayerNormStable>()(tiny);
  EXPECT_LE(ulp_distance(DType::f32, t[0], oracle::layer_norm(tiny).exact[0]), 2.0);
  const auto ce =
      op_cestac<targets::RmsNormStable>()(row(DType::f64, {0.0, 0.0, 1.0}), CestacRequest{});
  EXPECT_FALSE(ce.log.self_validation_failed());
  // Exact zeros in both rows: no instability that invalidates the CESTAC run.
  const Input bce = rows2(DType::f32, {0.0, -0.0, 2.0}, {0.0, 0.0, 0.0});
  const auto cb = op_cestac<targets::BceWithLogitsStable>()(bce, CestacRequest{});
  EXPECT_FALSE(cb.log.self_validation_failed());
  EXPECT_EQ(op_native<targets::BceWithLogitsStable>()(bce), oracle::bce_with_logits(bce).exact);
}

// ---- bce_with_logits, kl_div, entropy ---------------------------------------------------------

TEST(BceOracle, MatchesLongDoubleAndSymmetry) {
  const std::vector<double> x{-3.5, -0.25, 0.0, 0.75, 2.0, 30.0}, z{0.0, 1.0, 0.5, 0.25, 0.75, 1.0};
  for (DType d : {DType::f64, DType::f32}) {
    const auto r = oracle::bce_with_logits(rows2(d, x, z));
    std::vector<LD> ref;
    for (size_t i = 0; i < x.size(); ++i)
      ref.push_back(std::max<LD>(x[i], 0) - static_cast<LD>(x[i]) * z[i] +
                    std::log1p(std::exp(-std::fabs(static_cast<LD>(x[i])))));
    expect_matches(r, ref, d);
    // l(x, z) = l(-x, 1 - z); 1 - z is exact for these z.
    std::vector<double> nx, nz;
    for (size_t i = 0; i < x.size(); ++i) nx.push_back(-x[i]), nz.push_back(1 - z[i]);
    EXPECT_EQ(oracle::bce_with_logits(rows2(d, nx, nz)).exact, r.exact);
  }
}

TEST(BceOracle, SpecialValuesAndCondition) {
  const auto r =
      oracle::bce_with_logits(rows2(DType::f64, {0.0, -0.0, 1000.0, 2.0}, {0.3, 1.0, 1.0, 0.25}));
  EXPECT_EQ(r.exact[0], static_cast<double>(std::log(2.0L)));
  EXPECT_EQ(r.exact[1], r.exact[0]);
  EXPECT_EQ(r.cond[0], 0.0);
  EXPECT_EQ(r.exact[2], 0.0);  // e^-1000 is below every double: the exact value rounds to 0
  EXPECT_GT(r.cond[2], 1e300);
  // x = 2, z = 1/4: cond = (|sigmoid(2) - 1/4| 2 + 1/2) / l.
  const LD l = std::log1p(std::exp(-2.0L)) + 1.5L, sg = 1 / (1 + std::exp(-2.0L));
  EXPECT_NEAR(r.cond[3], static_cast<double>((std::fabs(sg - 0.25L) * 2 + 0.5L) / l), 1e-12);
}

TEST(KlDivOracle, MatchesLongDoubleAndConventions) {
  const std::vector<double> lq{-0.5, -1.75, -3.0, -0.125}, p{0.25, 0.0, 0.5, 0.25};
  for (DType d : {DType::f64, DType::f32}) {
    const auto r = oracle::kl_div(rows2(d, lq, p));
    LD y = 0;
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0) y += p[i] * (std::log(static_cast<LD>(p[i])) - lq[i]);
    expect_matches(r, {y}, d);
  }
  const auto zero = oracle::kl_div(rows2(DType::f64, {-7.0}, {0.0}));
  EXPECT_EQ(zero.exact, std::vector<double>{0.0});
  EXPECT_EQ(zero.cond, std::vector<double>{0.0});
  const auto same = oracle::kl_div(rows2(DType::f64, {0.0, -2.0}, {1.0, 0.0}));
  EXPECT_EQ(same.exact, std::vector<double>{0.0});
  EXPECT_EQ(same.cond, std::vector<double>{INFINITY});  // dy/dp = 1 at a zero output
  // p = [1/2, 1/2], logq = [-1, -2]: y = log(1/2) + 1.5, cond by the formula of normalization.h.
  const auto h = oracle::kl_div(rows2(DType::f64, {-1.0, -2.0}, {0.5, 0.5}));
  const LD lg = std::log(0.5L), y = lg + 1.5L;
  const LD num = 0.5L * (std::fabs(lg + 2) + 1) + 0.5L * (std::fabs(lg + 3) + 2);
  EXPECT_EQ(h.exact[0], static_cast<double>(y));
  EXPECT_NEAR(h.cond[0], static_cast<double>(num / y), 1e-12);
  // Joint permutation leaves the sum unchanged.
  EXPECT_EQ(
      oracle::kl_div(rows2(DType::f64, {-3.0, -0.5, -0.125, -1.75}, {0.5, 0.25, 0.25, 0.0})).exact,
      oracle::kl_div(rows2(DType::f64, lq, p)).exact);
}

TEST(KlDivOracle, CancellingTermsAreDecidedOrCounted) {
  // logq = log p rounded: y is the rounding residual, ~1e-17; the oracle still rounds it correctly.
  const std::vector<double> p{0.125, 0.375, 0.5};
  std::vector<double> lq;
  for (double v : p) lq.push_back(std::log(v));
  const auto r = oracle::kl_div(rows2(DType::f64, lq, p));
  ASSERT_TRUE(r.decidable);
  LD y = 0;
  for (size_t i = 0; i < p.size(); ++i) y += p[i] * (std::log(static_cast<LD>(p[i])) - lq[i]);
  EXPECT_NEAR(r.exact[0], static_cast<double>(y), 1e-3 * std::fabs(static_cast<double>(y)));
  EXPECT_GT(r.cond[0], 1e14);
}

TEST(EntropyOracle, ValuesConditionAndConventions) {
  const auto u = oracle::entropy(row(DType::f64, {0.25, 0.25, 0.25, 0.25}));
  const LD h = std::log(4.0L);
  EXPECT_EQ(u.exact, std::vector<double>{static_cast<double>(h)});
  EXPECT_NEAR(u.cond[0], static_cast<double>(std::fabs(1 - h) / h), 1e-12);
  const auto ones = oracle::entropy(row(DType::f32, {0.0, 1.0, 0.0}));
  EXPECT_EQ(ones.exact, std::vector<double>{0.0});
  EXPECT_EQ(ones.cond, std::vector<double>{INFINITY});
  const auto zeros = oracle::entropy(row(DType::f32, {0.0, -0.0}));
  EXPECT_EQ(zeros.cond, std::vector<double>{0.0});
  SeededEntropy e(9, 9);
  for (DType d : {DType::f64, DType::f32}) {
    std::vector<double> p(50);
    for (auto& v : p) v = round_to(d, e.uniform());
    LD s = 0;
    for (double v : p) s -= v > 0 ? v * std::log(static_cast<LD>(v)) : 0;
    const auto r = oracle::entropy(row(d, p));
    expect_matches(r, {s}, d);
    std::reverse(p.begin(), p.end());
    EXPECT_EQ(oracle::entropy(row(d, p)).exact, r.exact);
  }
  // p near 1: -p log p ~ 1e-7 from log of an exact input, no cancellation.
  const auto n1 = oracle::entropy(row(DType::f64, {1 - 0x1p-24}));
  EXPECT_EQ(n1.exact[0], static_cast<double>(-(1 - 0x1p-24L) * std::log1p(-0x1p-24L)));
}

}  // namespace
}  // namespace stabfuzz
