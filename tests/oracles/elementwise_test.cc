// Elementwise families: oracles (special values, identities, long double agreement), condition
// numbers, and the stable targets judged against the oracle (the declarations:
// tests/families/elementwise_test.cc).
#include "oracles/elementwise.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz {
namespace {

using oracle::Unary;
using regime::row_input;
using LD = long double;

constexpr Unary kAll[] = {Unary::exp,      Unary::log,  Unary::log1p,   Unary::expm1,
                          Unary::tanh,     Unary::erf,  Unary::sigmoid, Unary::log_sigmoid,
                          Unary::softplus, Unary::silu, Unary::gelu,    Unary::gelu_tanh};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr LD kPi = 3.141592653589793238462643383279502884L;

const Family& family(Unary f) {
  const Family* fam = default_registry().find_family(oracle::unary_name(f));
  if (!fam) throw std::logic_error("no family " + std::string(oracle::unary_name(f)));
  return *fam;
}

const Target& stable(Unary f) {
  return *default_registry().find_target(std::string(oracle::unary_name(f)) + "/cpu/stable").second;
}

OracleResult run(Unary f, DType d, std::vector<double> x) {
  return oracle::unary(f, row_input(d, std::move(x)));
}

double exact1(Unary f, DType d, double x) {
  const OracleResult r = run(f, d, {x});
  EXPECT_TRUE(r.decidable) << oracle::unary_name(f) << " " << x;
  return r.decidable ? r.exact.at(0) : NAN;
}

double rnd(DType d, LD v) {
  return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
}

// ---- independent long double references (64-bit significand) -----------------------------------

LD sigmoid_ld(LD x) {
  const LD e = std::exp(-std::fabs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

LD reference(Unary f, LD x) {
  switch (f) {
    case Unary::exp:
      return std::exp(x);
    case Unary::log:
      return std::log(x);
    case Unary::log1p:
      return std::log1p(x);
    case Unary::expm1:
      return std::expm1(x);
    case Unary::tanh:
      return std::tanh(x);
    case Unary::erf:
      return std::erf(x);
    case Unary::sigmoid:
      return sigmoid_ld(x);
    case Unary::log_sigmoid:
      return std::fmin(x, LD(0)) - std::log1p(std::exp(-std::fabs(x)));
    case Unary::softplus:
      return std::fmax(x, LD(0)) + std::log1p(std::exp(-std::fabs(x)));
    case Unary::silu:
      return x * sigmoid_ld(x);
    case Unary::gelu:
      return x / 2 * std::erfc(-x / std::sqrt(LD(2)));
    case Unary::gelu_tanh:
      return x * sigmoid_ld(2 * std::sqrt(2 / kPi) * (x + 0.044715L * x * x * x));
  }
  return NAN;
}

// Inputs where the references above are accurate to ~2^-58 and every function is defined.
rc::Gen<double> moderate_x(Unary f) {
  return rc::gen::map(rc::gen::arbitrary<uint64_t>(), [f](uint64_t b) {
    const double u = static_cast<double>(b >> 11) * 0x1p-53;       // [0, 1)
    if (f == Unary::log) return std::exp(-20 + 40 * u);            // [2e-9, 5e8]
    if (f == Unary::log1p) return -0.99 + std::exp(-20 + 25 * u);  // (-0.99, 148)
    return -5 + 10 * u;
  });
}

// ---- special values ----------------------------------------------------------------------------

struct Special {
  Unary f;
  double x, y;
};

TEST(ElementwiseOracle, SpecialValuesAndLimits) {
  const double ln2 = 0x1.62e42fefa39efp-1;  // log 2 correctly rounded to double
  const Special cases[] = {
      {Unary::exp, 0, 1},
      {Unary::exp, -kInf, 0},
      {Unary::exp, kInf, kInf},
      {Unary::exp, 1000, kInf},
      {Unary::exp, -1000, 0},
      {Unary::log, 1, 0},
      {Unary::log, 0, -kInf},
      {Unary::log, -0.0, -kInf},
      {Unary::log, kInf, kInf},
      {Unary::log1p, 0, 0},
      {Unary::log1p, -1, -kInf},
      {Unary::log1p, kInf, kInf},
      {Unary::expm1, 0, 0},
      {Unary::expm1, -kInf, -1},
      {Unary::expm1, -100, -1},
      {Unary::tanh, 0, 0},
      {Unary::tanh, kInf, 1},
      {Unary::tanh, -kInf, -1},
      {Unary::tanh, 30, 1},
      {Unary::erf, 0, 0},
      {Unary::erf, -kInf, -1},
      {Unary::erf, 10, 1},
      {Unary::sigmoid, 0, 0.5},
      {Unary::sigmoid, kInf, 1},
      {Unary::sigmoid, -kInf, 0},
      {Unary::sigmoid, -1e30, 0},
      {Unary::log_sigmoid, -kInf, -kInf},
      {Unary::log_sigmoid, kInf, 0},
      {Unary::log_sigmoid, -1e30, -1e30},
      {Unary::softplus, kInf, kInf},
      {Unary::softplus, -kInf, 0},
      {Unary::softplus, 1e30, 1e30},
      {Unary::silu, 0, 0},
      {Unary::silu, -kInf, 0},
      {Unary::silu, kInf, kInf},
      {Unary::silu, 1e30, 1e30},
      {Unary::gelu, 0, 0},
      {Unary::gelu, -kInf, 0},
      {Unary::gelu, kInf, kInf},
      {Unary::gelu, -1e5, 0},
      {Unary::gelu, 1e30, 1e30},
      {Unary::gelu_tanh, 0, 0},
      {Unary::gelu_tanh, -kInf, 0},
      {Unary::gelu_tanh, kInf, kInf},
      {Unary::gelu_tanh, -1e30, 0},
      {Unary::gelu_tanh, 1e30, 1e30},
  };
  for (DType d : {DType::f64, DType::f32})
    for (const auto& c : cases) {
      const double x = round_to(d, c.x);
      EXPECT_EQ(exact1(c.f, d, x), round_to(d, c.y))
          << oracle::unary_name(c.f) << "(" << x << ") " << dtype_name(d);
    }
  EXPECT_EQ(exact1(Unary::log_sigmoid, DType::f64, 0), -ln2);
  EXPECT_EQ(exact1(Unary::softplus, DType::f64, 0), ln2);
  EXPECT_EQ(exact1(Unary::softplus, DType::f32, 0), static_cast<double>(static_cast<float>(ln2)));
  // Signs of zero follow the function: silu(-inf), gelu(-inf), log1p(-0), tanh(-0) are -0.
  EXPECT_TRUE(std::signbit(exact1(Unary::silu, DType::f64, -kInf)));
  EXPECT_TRUE(std::signbit(exact1(Unary::gelu, DType::f32, -kInf)));
  EXPECT_TRUE(std::signbit(exact1(Unary::log1p, DType::f64, -0.0)));
  EXPECT_TRUE(std::signbit(exact1(Unary::tanh, DType::f64, -0.0)));
  EXPECT_TRUE(std::signbit(exact1(Unary::log_sigmoid, DType::f64, 800)));  // -e^-800 -> -0
}

TEST(ElementwiseOracle, SubnormalResultsAreRoundedOnce) {
  // e^-745 = 0.57 * 2^-1074 rounds up to the smallest subnormal; e^-746 = 0.21 * 2^-1074 to 0.
  EXPECT_EQ(exact1(Unary::exp, DType::f64, -745), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(exact1(Unary::exp, DType::f64, -746), 0.0);
  // sigmoid(-100) = e^-100 / (1 + e^-100) ~ 26.5 * 2^-149, a float subnormal.
  const double s = exact1(Unary::sigmoid, DType::f32, -100);
  EXPECT_EQ(s, std::nearbyint(std::exp(-100.0L) / 0x1p-149L) * 0x1p-149);
  EXPECT_EQ(s, 27 * 0x1p-149);
  // softplus(-100) = log1p(e^-100): the same subnormal.
  EXPECT_EQ(exact1(Unary::softplus, DType::f32, -100), s);
  // erf(x) = 2x / sqrt(pi) for a subnormal x (rounded in the subnormal grid).
  const double x = 1000 * std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(exact1(Unary::erf, DType::f64, x), 1128 * std::numeric_limits<double>::denorm_min());
}

TEST(ElementwiseOracle, HugeArgumentsAreDecidedWithoutTheirBoundsExploding) {
  // gelu's and gelu_tanh's error bounds grow with x^2 and |u| for x < 0; past MPFR's exponent
  // range the result is an exact zero, decided at once by MPFR (its first precision) and by the
  // double-double path's rule for x < -39.
  for (double x : {-40.0, -1e3, -1e5, -1e300}) {
    const OracleResult r = oracle::detail::unary_mpfr(Unary::gelu, row_input(DType::f64, {x}));
    ASSERT_TRUE(r.decidable) << x;
    EXPECT_EQ(r.exact[0], 0.0) << x;
    EXPECT_EQ(r.precision_bits, 96) << x;
    const OracleResult f = run(Unary::gelu, DType::f64, {x});
    EXPECT_EQ(f.exact[0], 0.0) << x;
    EXPECT_TRUE(std::signbit(f.exact[0]) && std::signbit(r.exact[0])) << x;
  }
  for (double x : {-30.0, -1e4, -1e100, -kMax})
    EXPECT_EQ(exact1(Unary::gelu_tanh, DType::f64, x), 0.0);
  EXPECT_EQ(exact1(Unary::gelu, DType::f64, kMax), kMax);
  EXPECT_EQ(exact1(Unary::gelu_tanh, DType::f64, kMax), kMax);
  // gelu(-20) = -20 Phi(-20) ~ -5.5e-88: finite, and needs its x^2 margin.
  const double g = exact1(Unary::gelu, DType::f64, -20);
  EXPECT_LT(g, -5e-88);
  EXPECT_GT(g, -6e-88);
}

// ---- exact identities --------------------------------------------------------------------------

RC_GTEST_PROP(ElementwiseOracleProp, OddFunctionsAreExactlyOdd, ()) {
  const double x = *rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t b) {
    return std::ldexp(static_cast<double>(b >> 11) * 0x1p-53, -30 + static_cast<int>(b % 40));
  });
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  for (Unary f : {Unary::tanh, Unary::erf}) {
    const double xr = round_to(d, x);
    RC_ASSERT(exact1(f, d, -xr) == -exact1(f, d, xr));
  }
}

// log_sigmoid(x) = -softplus(-x), and rounding to nearest is symmetric: equal bit for bit.
RC_GTEST_PROP(ElementwiseOracleProp, LogSigmoidIsMinusSoftplusOfMinusX, ()) {
  const double x = *rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t b) {
    return -800 + 1600 * static_cast<double>(b >> 11) * 0x1p-53;
  });
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const double xr = round_to(d, x);
  RC_ASSERT(exact1(Unary::log_sigmoid, d, xr) == -exact1(Unary::softplus, d, -xr));
}

// sigmoid(x) + sigmoid(-x) = 1 and softplus(x) - softplus(-x) = x, within the two roundings.
RC_GTEST_PROP(ElementwiseOracleProp, ComplementIdentities, ()) {
  const double x =
      round_to(DType::f32, *rc::gen::map(rc::gen::arbitrary<uint64_t>(), [](uint64_t b) {
                 return -30 + 60 * static_cast<double>(b >> 11) * 0x1p-53;
               }));
  const LD s = LD(exact1(Unary::sigmoid, DType::f64, x)) + exact1(Unary::sigmoid, DType::f64, -x);
  RC_ASSERT(std::fabs(s - 1) <= 0x1p-53L);
  const LD sp =
      LD(exact1(Unary::softplus, DType::f64, x)) - exact1(Unary::softplus, DType::f64, -x);
  RC_ASSERT(std::fabs(sp - x) <= 0x1p-51L * std::fmax(1.0L, std::fabs(LD(x))));
}

// ---- agreement with long double ----------------------------------------------------------------

// Where the long double reference (error ~2^-60) is far from a rounding midpoint of the dtype, the
// correctly rounded oracle must equal its rounding exactly.
RC_GTEST_PROP(ElementwiseOracleProp, CorrectlyRoundedWhereLongDoubleIsDecisive, ()) {
  const Unary f = *rc::gen::elementOf(std::vector<Unary>(std::begin(kAll), std::end(kAll)));
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  std::vector<double> x = *rc::gen::container<std::vector<double>>(8, moderate_x(f));
  const Input in = row_input(d, x);
  const OracleResult r = oracle::unary(f, in);
  RC_ASSERT(r.decidable);
  for (size_t i = 0; i < x.size(); ++i) {
    const LD ref = reference(f, in.args[0].values[i]);
    RC_ASSERT(representable(d, r.exact[i]));
    const LD lo = ref * (1 - 0x1p-56L), hi = ref * (1 + 0x1p-56L);
    if (rnd(d, lo) != rnd(d, hi)) continue;  // too close to a midpoint to judge
    RC_ASSERT(r.exact[i] == rnd(d, ref));
  }
}

// gelu_tanh is its own definition, not an approximation of gelu that the oracle may substitute.
TEST(ElementwiseOracle, GeluTanhIsNotGelu) {
  const double a = exact1(Unary::gelu, DType::f64, 1), b = exact1(Unary::gelu_tanh, DType::f64, 1);
  EXPECT_NEAR(a, 0.8413447460685429, 1e-15);
  EXPECT_NEAR(b, 0.8411919906082768, 1e-15);
}

// ---- condition numbers -------------------------------------------------------------------------

TEST(ElementwiseCond, HandComputedValues) {
  using oracle::unary_cond;
  const double e = std::exp(1.0);
  EXPECT_DOUBLE_EQ(unary_cond(Unary::exp, 2), 2);
  EXPECT_DOUBLE_EQ(unary_cond(Unary::exp, -3), 3);
  EXPECT_NEAR(unary_cond(Unary::log, e), 1, 1e-15);
  EXPECT_NEAR(unary_cond(Unary::log, 1 + 0x1p-40), 0x1p40, 1);  // 1 / log(1 + 2^-40)
  EXPECT_EQ(unary_cond(Unary::log, 1), 1);  // convention: exact input, exact zero
  EXPECT_EQ(unary_cond(Unary::log, 0), 0);  // pole: only -inf is right
  EXPECT_NEAR(unary_cond(Unary::log1p, 1), 1 / (2 * std::log(2.0)), 1e-15);
  EXPECT_EQ(unary_cond(Unary::log1p, 0), 1);
  EXPECT_NEAR(unary_cond(Unary::expm1, 1), e / (e - 1), 1e-15);
  EXPECT_NEAR(unary_cond(Unary::expm1, 1e-20), 1, 1e-15);
  EXPECT_NEAR(unary_cond(Unary::tanh, 0.5), 1 / std::sinh(1.0), 1e-15);
  EXPECT_NEAR(unary_cond(Unary::erf, 1), 2 / std::sqrt(M_PI) / e / std::erf(1.0), 1e-15);
  EXPECT_EQ(unary_cond(Unary::erf, 0), 1);
  EXPECT_NEAR(unary_cond(Unary::sigmoid, 1), 1 / (1 + e), 1e-15);
  EXPECT_EQ(unary_cond(Unary::sigmoid, 0), 0);
  EXPECT_EQ(unary_cond(Unary::log_sigmoid, 0), 0);
  EXPECT_NEAR(unary_cond(Unary::log_sigmoid, 50), 50, 1e-10);   // f ~ -e^-x
  EXPECT_NEAR(unary_cond(Unary::log_sigmoid, 1e4), 1e4, 1e-6);  // e^-x underflows: the limit
  EXPECT_NEAR(unary_cond(Unary::log_sigmoid, -50), 1, 1e-10);   // f ~ x
  EXPECT_NEAR(unary_cond(Unary::softplus, -50), 50, 1e-10);
  EXPECT_NEAR(unary_cond(Unary::softplus, 50), 1, 1e-10);
  EXPECT_EQ(unary_cond(Unary::silu, 0), 1);
  EXPECT_NEAR(unary_cond(Unary::silu, -1.2784645427610738), 0, 1e-9);  // silu's minimum
  EXPECT_EQ(unary_cond(Unary::gelu, 0), 1);
  EXPECT_NEAR(unary_cond(Unary::gelu, -200), 40000, 1e-3);  // Mills ratio: x^2
  EXPECT_NEAR(unary_cond(Unary::gelu, -50), 2500, 0.01);    // erfcl branch agrees
  EXPECT_EQ(unary_cond(Unary::gelu_tanh, 0), 1);
  // Infinite inputs: the limit is exact.
  for (Unary f : kAll)
    EXPECT_EQ(unary_cond(f, f == Unary::log || f == Unary::log1p ? kInf : -kInf), 0);
}

// cond = |x f'(x) / f(x)| against a central difference of the long double reference.
RC_GTEST_PROP(ElementwiseCondProp, MatchesNumericalDerivative, ()) {
  const Unary f = *rc::gen::elementOf(std::vector<Unary>(std::begin(kAll), std::end(kAll)));
  const double x = *moderate_x(f);
  RC_PRE(std::fabs(x) > 1e-3 && std::fabs(x - 1) > 1e-3);
  const LD h = 1e-7L, fx = reference(f, x);
  RC_PRE(std::fabs(fx) > 1e-300L);
  const LD num =
      std::fabs(x * (reference(f, x * (1 + h)) - reference(f, x * (1 - h))) / (2 * h * x * fx));
  const double c = oracle::unary_cond(f, x);
  RC_ASSERT(std::fabs(c - num) <= 1e-5L * std::fmax(1.0L, num));
}

TEST(ElementwiseCond, FiniteAndNonNegativeOnLandmarks) {
  std::vector<double> xs = {0.0,    -0.0,    1.0,    -1.0,   kMax,   -kMax,  kInf,
                            -kInf,  709.78,  -745.0, 88.7,   -103.0, 1e-300, -1e-300,
                            5e-324, -5e-324, 1e154,  -1e154, 0.5,    2.0};
  for (Unary f : kAll)
    for (double x : xs) {
      if ((f == Unary::log && x < 0) || (f == Unary::log1p && x < -1)) continue;
      const double c = oracle::unary_cond(f, x);
      EXPECT_TRUE(std::isfinite(c) && c >= 0) << oracle::unary_name(f) << "(" << x << "): " << c;
    }
}

// ---- the stable targets ------------------------------------------------------------------------

// Every regime, every dtype, a few rows (cut to 64 values): no oracle finding.
TEST(ElementwiseStable, MatchesTheOracleWithinTolerance) {
  for (Unary f : kAll) {
    const Family& fam = family(f);
    const Target& t = stable(f);
    for (DType d : kAllDTypes)
      for (const auto& regime : fam.regimes)
        for (uint64_t seed = 1; seed <= 2; ++seed) {
          SeededEntropy e(seed, std::hash<std::string>{}(regime.name));
          Input in = regime.sample(e, d);
          auto& v = in.args[0].values;
          if (v.size() > 64) v.resize(64);
          in.args[0].shape[0] = static_cast<int64_t>(v.size());
          ASSERT_FALSE(fam.validate(in)) << fam.name << " " << regime.name;
          const OracleResult o = fam.oracle(in);
          ASSERT_TRUE(o.decidable) << fam.name << " " << regime.name;
          const Verdict verdict = judge(fam, in, t.native(in), o, nullptr);
          EXPECT_FALSE(verdict.finding())
              << t.id << " " << dtype_name(d) << " " << regime.name << ": " << verdict.max_ulp
              << " ulps, cond " << verdict.cond << ", x " << in.args[0].values[verdict.worst];
          EXPECT_LE(verdict.max_ratio, 1.0);
        }
  }
}

// Known unstable formulations (the catalog's rows) fail the verdict: the tolerances are not so
// loose that they pass.
TEST(ElementwiseStable, NaiveFormulationsAreFindings) {
  struct Naive {
    Unary f;
    DType d;
    double x;
    std::function<double(double)> naive;
  };
  const Naive cases[] = {
      {Unary::log1p, DType::f64, 1e-10, [](double x) { return std::log(1 + x); }},
      {Unary::expm1, DType::f32, 1e-5, [](double x) { return double(std::exp(float(x)) - 1.0f); }},
      {Unary::tanh, DType::f64, 1e-9,
       [](double x) { return (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1); }},
      {Unary::erf, DType::f64, 1e-9, [](double x) { return 1 - std::erfc(x); }},
      {Unary::log_sigmoid, DType::f64, -800, [](double x) { return -std::log(1 + std::exp(-x)); }},
      {Unary::softplus, DType::f32, 100,
       [](double x) { return double(std::log(1.0f + std::exp(float(x)))); }},
      {Unary::gelu, DType::f64, -10,
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      // f16 and bf16, per-op rounding: e^12 overflows f16; 1 + 2^-10 rounds to 1 in bf16.
      {Unary::softplus, DType::f16, 12,
       [](double x) { return double(log(Half(1) + exp(Half(x)))); }},
      {Unary::log1p, DType::bf16, 0x1p-10, [](double x) { return double(log(BFloat16(1) + x)); }},
      {Unary::gelu_tanh, DType::f32, -6,
       [](double x) {
         const float xf = float(x), u = 0.7978845608f * (xf + 0.044715f * xf * xf * xf);
         return double(0.5f * xf * (1.0f + std::tanh(u)));
       }},
  };
  for (const auto& c : cases) {
    const Family& fam = family(c.f);
    const Input in = row_input(c.d, {c.x});
    const double y = round_to(c.d, c.naive(in.args[0].values[0]));
    const Verdict v = judge(fam, in, {y}, fam.oracle(in), nullptr);
    EXPECT_TRUE(v.oracle_fired) << fam.name << ": naive " << y << " vs " << v.exact;
    // ... while the stable target passes on the same input.
    EXPECT_FALSE(judge(fam, in, stable(c.f).native(in), fam.oracle(in), nullptr).finding())
        << fam.name;
  }
}

// The CESTAC run of a stable target agrees with its native run on an easy row.
TEST(ElementwiseStable, CestacMeansTrackNativeOutputs) {
  for (Unary f : kAll) {
    const Target& t = stable(f);
    for (DType d : kAllDTypes) {
      const Input in = row_input(d, {0.25, 0.75, 1.5, 3.0});
      const auto native = t.native(in);
      CestacRequest req;
      req.seed = 1;
      const CestacOutput c = t.cestac(in, req);
      ASSERT_EQ(c.mean.size(), native.size());
      for (size_t i = 0; i < native.size(); ++i) {
        EXPECT_NEAR(c.mean[i], native[i], 8 * dtype_unit_roundoff(d) * std::fabs(native[i]))
            << t.id;
        EXPECT_GT(c.digits[i], dtype_max_digits(d) - 2) << t.id << " " << i;
      }
    }
  }
}

// ---- f16 and bf16
// --------------------------------------------------------------------------------

constexpr DType kLowp[] = {DType::f16, DType::bf16};

// v rounded once to the format, when v is decisively on one side of the midpoint between two
// neighbours (farther than 2^-40 of a spacing: the long double references err by ~2^-58
// relative), else nullopt.
std::optional<double> decisive_round(DType d, LD v) {
  const Format& f = dtype_format(d);
  const double r = round_to_format(f, static_cast<double>(v));
  if (!std::isfinite(r)) return r;
  const LD off = std::fabs(v - r) / format_quantum(f, r);
  if (std::fabs(off - 0.5L) < 0x1p-40L) return std::nullopt;
  return r;
}

// The oracle in f16 and bf16 is the long double reference rounded once to the format (MPFR's
// rounding with the format's precision and exponent range, never through float).
TEST(ElementwiseOracle, LowPrecisionMatchesLongDoubleRoundedOnce) {
  const double xs[] = {-3.5, -1.25, -0.3125, 0.09375, 0.6875, 2.5, 6.0};  // exact in f16, bf16
  for (Unary f : kAll)
    for (DType d : kLowp) {
      int checked = 0;
      for (double x : xs) {
        if (f == Unary::log) x = std::fabs(x);
        if (f == Unary::log1p && x <= -1) x /= 4;
        const auto want = decisive_round(d, reference(f, x));
        if (!want) continue;
        ++checked;
        EXPECT_EQ(exact1(f, d, x), *want)
            << oracle::unary_name(f) << " " << dtype_name(d) << " " << x;
      }
      EXPECT_GE(checked, 6) << oracle::unary_name(f) << " " << dtype_name(d);
    }
}

TEST(ElementwiseOracle, LowPrecisionRangeEnds) {
  // e^x: 65504 is f16's largest value and 65520 rounds to inf; 11.0859375 and 11.09375 are
  // neighbours in f16, e^x = 65248.8 and 65759.6.
  EXPECT_EQ(exact1(Unary::exp, DType::f16, 11.0859375), 65248.0);
  EXPECT_EQ(exact1(Unary::exp, DType::f16, 11.09375), kInf);
  EXPECT_TRUE(std::isfinite(exact1(Unary::exp, DType::bf16, 88.5)));
  // e^-12 = 6.14e-6 is subnormal in f16 (quantum 2^-24): rounded once to a multiple of 2^-24.
  const double sub = exact1(Unary::exp, DType::f16, -12);
  EXPECT_EQ(sub, std::ldexp(std::nearbyint(std::ldexp(std::exp(-12.0L), 24)), -24));
  EXPECT_EQ(exact1(Unary::sigmoid, DType::f16, -12), *decisive_round(DType::f16, sigmoid_ld(-12)));
  // Below half the smallest subnormal (2^-25), f16 results are 0; bf16 has f32's range.
  EXPECT_EQ(exact1(Unary::exp, DType::f16, -18), 0.0);
  EXPECT_GT(exact1(Unary::exp, DType::bf16, -18), 0.0);
}

// The constants of gelu and gelu_tanh: the oracle uses the exact ones, the stable target rounds
// them to the format, and the tolerance carries the difference (a few tenths of u).
TEST(ElementwiseStable, LowPrecisionConstantsStayWithinTolerance) {
  for (Unary f : {Unary::gelu, Unary::gelu_tanh})
    for (DType d : kLowp) {
      std::vector<double> x;
      for (int k = -40; k <= 40; ++k) x.push_back(k / 8.0);
      const Input in = row_input(d, x);
      const Verdict v = judge(family(f), in, stable(f).native(in), family(f).oracle(in), nullptr);
      EXPECT_FALSE(v.finding()) << oracle::unary_name(f) << " " << dtype_name(d) << " "
                                << v.max_ratio;
    }
}

// gelu_tanh's z overflows for |x| past ~113 in f16 (x^2 past 256); under CESTAC, samples of z
// straddling the threshold disagreed on inf, an invalid run although every output is exact (rows
// of seed 3 of cube_overflow, f16 and bf16). z is now formed from x clamped to [-64, 64].
TEST(ElementwiseStable, GeluTanhIntermediatesStayFiniteUnderCestac) {
  const Family& fam = family(Unary::gelu_tanh);
  for (const auto& regime : fam.regimes) {
    if (regime.name != "cube_overflow") continue;
    for (DType d : kLowp) {
      SeededEntropy e(3, 0);
      const Input in = regime.sample(e, d);
      const Verdict v = pipeline::evaluate(fam, stable(Unary::gelu_tanh), in, CestacRequest{});
      EXPECT_EQ(v.log.counts[static_cast<int>(cestac::Kind::nonfinite_divergence)], 0u)
          << dtype_name(d);
      EXPECT_FALSE(v.finding()) << dtype_name(d) << " " << v.max_ratio;
    }
  }
}

// The double-double path gives the MPFR path's correctly rounded outputs wherever it answers: on
// every regime of the twelve functions it serves, in every dtype, and at the ends of its ranges;
// one output at a time and batched over rows (unary()); and it answers for most inputs.
TEST(ElementwiseOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  constexpr Unary kFast[] = {Unary::exp,  Unary::log,       Unary::log1p,       Unary::expm1,
                             Unary::tanh, Unary::sigmoid,   Unary::log_sigmoid, Unary::softplus,
                             Unary::silu, Unary::gelu_tanh, Unary::erf,         Unary::gelu};
  SeededEntropy e(7, 29);
  for (Unary fn : kFast) {
    const Family& fam = family(fn);
    for (DType d : kAllDTypes) {
      std::vector<std::vector<double>> rows;
      for (int k = 0; k < 100; ++k) {
        const Regime& r = fam.regimes[static_cast<size_t>(k) % fam.regimes.size()];
        const Input in = r.sample(e, d);
        if (!fam.validate(in)) rows.push_back(in.args.at(0).values);
      }
      // The ends of the fast path's ranges, and their neighbours.
      std::vector<double> ends;
      for (double v :
           {-900.0,    -800.0,   -745.5, -709.0, -600.0,   -354.5,   -19.0,    -0.75, -0.5,
            -0x1p-900, 0x1p-900, 0.5,    0.75,   1.0,      2.0,      19.0,     -22.0, -20.0,
            -10.0,     20.0,     354.5,  600.0,  709.0,    709.78,   709.7828, 710.0, -39.0,
            -8.4,      -6.0,     6.0,    8.49,   0x1p-300, -0x1p-300}) {
        for (double w : {std::nextafter(v, -kInf), v, std::nextafter(v, kInf)}) {
          const double t = round_to_format(dtype_format(d), w);
          if (!fam.validate(row_input(d, {t}))) ends.push_back(t);
        }
      }
      rows.push_back(ends);
      int fast = 0, finite = 0;
      for (const auto& row : rows) {
        const Input in = row_input(d, row);
        const OracleResult batched = oracle::unary(fn, in);
        const OracleResult mp = oracle::detail::unary_mpfr(fn, in);
        ASSERT_TRUE(batched.decidable);
        ASSERT_TRUE(mp.decidable);
        for (size_t i = 0; i < row.size(); ++i) {
          const std::string where = std::string(oracle::unary_name(fn)) + " " +
                                    std::string(dtype_name(d)) + " x = " + std::to_string(row[i]);
          ASSERT_EQ(batched.exact[i], mp.exact[i]) << where;
          ASSERT_EQ(std::signbit(batched.exact[i]), std::signbit(mp.exact[i])) << where;
          ASSERT_EQ(batched.cond[i], mp.cond[i]) << where;
          if (std::isfinite(row[i])) ++finite;
          const auto one = oracle::detail::unary_double_double(fn, row[i], d);
          if (!one) continue;
          ++fast;
          ASSERT_EQ(*one, mp.exact[i]) << where;
          ASSERT_EQ(std::signbit(*one), std::signbit(mp.exact[i])) << where;
        }
      }
      EXPECT_GT(fast, finite * 9 / 10) << oracle::unary_name(fn) << " " << dtype_name(d);
    }
  }
}

}  // namespace
}  // namespace stabfuzz
