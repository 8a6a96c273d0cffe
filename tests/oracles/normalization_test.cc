// Normalization group: oracles against long double, identities, conditions, contracts, kernels
// (the log-softmax and loss oracles: losses_test.cc).
#include "oracles/normalization.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/op.h"
#include "targets/cpu/normalization.h"
#include "tests/oracles/normalization_check.h"

namespace stabfuzz {
namespace {

using normalization_check::expect_matches;
using normalization_check::LD;
using normalization_check::Params;
using normalization_check::row;
using normalization_check::rows2;
using normalization_check::to_dtype;

const Family& fam(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  return *f;
}

Input matrix(DType d, int64_t n, int64_t c, std::vector<double> v, Params p = {}) {
  return regime::make_input(d, {Tensor{{n, c}, std::move(v)}}, std::move(p));
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

// Inputs of every regime of family `name` in dtype d (k samples, at most 4096 values each).
std::vector<Input> regime_inputs(const char* name, DType d, int k, Entropy& e) {
  const Family* fam = default_registry().find_family(name);
  std::vector<Input> ins;
  if (!fam) return ins;
  for (int i = 0; i < k; ++i) {
    const Regime& r = fam->regimes[static_cast<size_t>(i) % fam->regimes.size()];
    Input in = r.sample(e, d);
    if (in.total_size() <= 4096 && !fam->validate(in)) ins.push_back(std::move(in));
  }
  return ins;
}

// Two evaluations of one input give the same outputs and conditions (1e-9 relative: the
// double-double paths form their condition numbers in long double).
void expect_same_result(const OracleResult& dd, const OracleResult& mp, const std::string& what) {
  ASSERT_TRUE(mp.decidable) << what;
  ASSERT_EQ(dd.exact.size(), mp.exact.size()) << what;
  for (size_t i = 0; i < mp.exact.size(); ++i) {
    ASSERT_EQ(dd.exact[i], mp.exact[i]) << what << " output " << i;
    if (std::isinf(mp.cond[i]))
      ASSERT_EQ(dd.cond[i], mp.cond[i]) << what << " output " << i;
    else
      ASSERT_NEAR(dd.cond[i], mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i]))
          << what << " output " << i;
  }
}

// The double-double path of layer_norm and batch_norm gives the MPFR path's outputs and
// conditions wherever it answers, on every regime in every dtype and on rows built to be hard
// (a large common offset, one outlier, constant rows, zeros), and answers for most rows.
TEST(LayerNormOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(3, 41);
  for (const char* name : {"layer_norm", "batch_norm"}) {
    const bool batch = std::string(name) == "batch_norm";
    int inputs = 0, fast = 0;
    for (DType d : kAllDTypes) {
      std::vector<Input> ins = regime_inputs(name, d, 120, e);
      ASSERT_FALSE(ins.empty()) << name;
      if (!batch) {
        ins.push_back(row(d, {1e4 + 1, 1e4 - 1, 1e4 + 0.5, 1e4}));
        ins.push_back(row(d, {3, 3, 3, 3}));
        ins.push_back(row(d, {0, 0, 1, 0}));
        ins.push_back(row(d, {1, 2, 3, 1000}));
        ins.push_back(row(d, {7}));
        if (d == DType::f64) {  // scaled by 2^-k, and a subnormal among normal values
          ins.push_back(row(d, {1e300, -2e300, 3e299, 1e250}));
          ins.push_back(row(d, {1, 2, 3, 5e-320}));
          for (const auto& r : {ins[ins.size() - 1], ins[ins.size() - 2], ins[ins.size() - 3]})
            EXPECT_TRUE(oracle::detail::layer_norm_double_double(r).has_value());
        }
      }
      for (const Input& in : ins) {
        const auto dd = batch ? oracle::detail::batch_norm_double_double(in)
                              : oracle::detail::layer_norm_double_double(in);
        ++inputs;
        if (!dd) continue;
        ++fast;
        expect_same_result(
            *dd, batch ? oracle::detail::batch_norm_mpfr(in) : oracle::detail::layer_norm_mpfr(in),
            std::string(name) + " " + std::string(dtype_name(d)));
      }
    }
    EXPECT_GT(fast, inputs / 2) << name;
  }
}

// The double-double path of log_softmax and cross_entropy gives the MPFR path's outputs and
// conditions wherever it answers, on every regime in every dtype and on hard rows (a dominant
// logit, terms below e^-600, ties at the maximum, one value), and answers for most rows.
TEST(LogSoftmaxOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(3, 43);
  for (const char* name : {"log_softmax", "cross_entropy"}) {
    const bool ce = std::string(name) == "cross_entropy";
    int inputs = 0, fast = 0;
    for (DType d : kAllDTypes) {
      std::vector<Input> ins = regime_inputs(name, d, 160, e);
      ASSERT_FALSE(ins.empty()) << name;
      if (!ce) {
        ins.push_back(row(d, {0, -700, -1e4, -3}));
        ins.push_back(row(d, {5, 5, 5}));
        ins.push_back(row(d, {1}));
        ins.push_back(row(d, {40, 0, -0.5}));  // x - m exact, l ~ e^-40: ties of the dtype
        if (d == DType::f64) {
          ins.push_back(row(d, {659.5, 0, -1, 2}));  // every other term below e^-600
          ins.push_back(row(d, {0x1p10, 0x1p10 - 0x1p-42, 1}));
          for (size_t q = ins.size() - 6; q < ins.size(); ++q)
            EXPECT_TRUE(oracle::detail::log_softmax_double_double(ins[q], false).has_value())
                << "hard row " << q;
        }
      }
      for (const Input& in : ins) {
        const auto dd = oracle::detail::log_softmax_double_double(in, ce);
        ++inputs;
        if (!dd) continue;
        ++fast;
        expect_same_result(*dd, oracle::detail::log_softmax_mpfr(in, ce),
                           std::string(name) + " " + std::string(dtype_name(d)));
      }
    }
    EXPECT_GT(fast, inputs * 3 / 4) << name;
  }
}

// The double-double paths of kl_div and entropy give the MPFR paths' outputs and conditions
// wherever they answer, on every regime in every dtype and on hard rows (p in {0, 1}, tiny p,
// a result near 0 by cancellation), and answer for most rows.
TEST(KlDivEntropyOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(3, 53);
  for (const char* name : {"kl_div", "entropy"}) {
    const bool kl = std::string(name) == "kl_div";
    int inputs = 0, fast = 0;
    for (DType d : kAllDTypes) {
      std::vector<Input> ins = regime_inputs(name, d, 160, e);
      ASSERT_FALSE(ins.empty()) << name;
      if (!kl) {
        ins.push_back(row(d, {0, 1, 0}));
        ins.push_back(row(d, {0.5, 0.25, 0.25}));
        ins.push_back(row(d, {1e-30, 1 - 0x1p-20}));
      } else {
        ins.push_back(rows2(d, {std::log(0.5), std::log(0.5)}, {0.5, 0.5}));
        ins.push_back(rows2(d, {-1, -2, -3}, {0.2, 0.3, 0.5}));
      }
      for (const Input& in : ins) {
        const auto dd = kl ? oracle::detail::kl_div_double_double(in)
                           : oracle::detail::entropy_double_double(in);
        ++inputs;
        if (!dd) continue;
        ++fast;
        expect_same_result(*dd,
                           kl ? oracle::detail::kl_div_mpfr(in) : oracle::detail::entropy_mpfr(in),
                           std::string(name) + " " + std::string(dtype_name(d)));
      }
    }
    EXPECT_GT(fast, inputs * 3 / 4) << name;
  }
}

// The double-double path of bce_with_logits gives the MPFR path's outputs and conditions
// wherever it answers, on every regime in every dtype and on hard rows (x = 0, targets 0 and 1
// where a = max(x, 0) - x z is 0, |x| past 600 where e^-|x| is bounded or is the result, products
// x z that are midpoints of f16 and bf16), and answers for most rows.
TEST(BceOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(3, 59);
  int inputs = 0, fast = 0;
  for (DType d : kAllDTypes) {
    std::vector<Input> ins = regime_inputs("bce_with_logits", d, 200, e);
    ASSERT_FALSE(ins.empty());
    ins.push_back(rows2(d, {0.0, -0.0, 3.0, -3.0}, {0.5, 0.0, 1.0, 0.0}));
    ins.push_back(rows2(d, {650.0, -650.0, 1000.0, 2.0}, {0.25, 0.75, 0.5, 0.5}));
    ins.push_back(rows2(d, {1.5, -2.5, 0.375, 7.0}, {0.1, 0.9, 0.3, 1e-30}));
    ins.push_back(rows2(d, {1.0 + 0x1p-7, -3.0, 20.0}, {0.5 + 0x1p-8, 0.125, 1 - 0x1p-10}));
    // a = 0 past |x| = 600: l = e^-|x|, normal, subnormal and 0 in f64, 0 in the others.
    const Input tails = rows2(d, {700.0, 740.0, -745.0, 1000.0, -650.0}, {1, 1, 0, 1, 0});
    ASSERT_TRUE(oracle::detail::bce_with_logits_double_double(tails).has_value());
    ins.push_back(tails);
    for (const Input& in : ins) {
      const auto dd = oracle::detail::bce_with_logits_double_double(in);
      ++inputs;
      if (!dd) continue;
      ++fast;
      expect_same_result(*dd, oracle::detail::bce_with_logits_mpfr(in),
                         "bce_with_logits " + std::string(dtype_name(d)));
    }
  }
  EXPECT_GT(fast, inputs * 4 / 5);
}

}  // namespace
}  // namespace stabfuzz
