// Softmax oracle: correctly rounded softmax of a row and its componentwise condition numbers.
#include "oracles/softmax.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "families/regimes.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

using regime::row_input;

OracleResult run(DType d, std::vector<double> x) {
  return oracle::softmax(row_input(d, std::move(x)));
}

// softmax in long double (64-bit significand on x86), for rows whose result is far from subnormal.
std::vector<long double> softmax_ld(const std::vector<double>& x) {
  long double m = -INFINITY, s = 0;
  for (double v : x) m = std::fmax(m, static_cast<long double>(v));
  std::vector<long double> y;
  for (double v : x) y.push_back(std::exp(static_cast<long double>(v) - m));
  for (long double e : y) s += e;
  for (long double& e : y) e /= s;
  return y;
}

TEST(SoftmaxOracle, EqualLogitsGiveExactHalves) {
  for (DType d : kAllDTypes) {
    const OracleResult r = run(d, {0.0, 0.0});
    ASSERT_TRUE(r.decidable) << dtype_name(d);
    ASSERT_EQ(r.exact.size(), 2u);
    EXPECT_EQ(r.exact[0], 0.5);
    EXPECT_EQ(r.exact[1], 0.5);
    EXPECT_EQ(r.cond, (std::vector<double>{0.0, 0.0}));
    EXPECT_GE(r.precision_bits, 96);
  }
}

TEST(SoftmaxOracle, NegInfEntriesGetZero) {
  for (DType d : kAllDTypes) {
    const OracleResult r = run(d, {-INFINITY, 0.0});
    ASSERT_TRUE(r.decidable);
    EXPECT_EQ(r.exact, (std::vector<double>{0.0, 1.0}));
    EXPECT_EQ(r.cond, (std::vector<double>{0.0, 0.0}));
  }
  const OracleResult r = run(DType::f64, {-INFINITY, 2.0, -INFINITY, 2.0});
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, (std::vector<double>{0.0, 0.5, 0.0, 0.5}));
}

TEST(SoftmaxOracle, LargeEqualLogitsDoNotOverflow) {
  const OracleResult r = run(DType::f64, {1000.0, 1000.0});
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, (std::vector<double>{0.5, 0.5}));
  // cond_i = |x_i|(1 - y_i) + y_j |x_j| = 500 + 500.
  EXPECT_NEAR(r.cond[0], 1000.0, 1e-9);
  EXPECT_NEAR(r.cond[1], 1000.0, 1e-9);
}

TEST(SoftmaxOracle, SingleElementIsOne) {
  for (DType d : kAllDTypes) {
    const OracleResult r = run(d, {42.0});
    ASSERT_TRUE(r.decidable);
    EXPECT_EQ(r.exact, std::vector<double>{1.0});
    EXPECT_EQ(r.cond, std::vector<double>{0.0});
  }
}

TEST(SoftmaxOracle, SmallRowMatchesLongDoubleWithinOneUlp) {
  for (DType d : kAllDTypes) {
    const Input in = row_input(d, {0.1, -0.7, 1.3});
    const OracleResult r = oracle::softmax(in);
    ASSERT_TRUE(r.decidable);
    const auto ref = softmax_ld(in.args[0].values);
    ASSERT_EQ(r.exact.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      const double rd = d == DType::f64 ? static_cast<double>(ref[i])
                                        : static_cast<double>(static_cast<float>(ref[i]));
      EXPECT_LE(ulp_distance(d, r.exact[i], rd), 1.0) << dtype_name(d) << " i=" << i;
      EXPECT_GT(r.exact[i], 0.0);
    }
    EXPECT_GT(r.exact[2], r.exact[0]);
    EXPECT_GT(r.exact[0], r.exact[1]);
  }
}

TEST(SoftmaxOracle, ConditionNumbersOfADominantLogit) {
  const OracleResult r = run(DType::f64, {1000.0, 0.0});
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact[0], 1.0);
  EXPECT_EQ(r.exact[1], 0.0);  // e^-1000 is below the smallest subnormal
  // cond_1 = |x_1|(1 - y_1) + y_0 |x_0| ~ 1000: y_1 moves with x_0 - x_1.
  EXPECT_NEAR(r.cond[1], 1000.0, 10.0);
  // cond_0 = |x_0|(1 - y_0) + y_1 |x_1| = 1000 e^-1000 ~ 0.
  EXPECT_GE(r.cond[0], 0.0);
  EXPECT_LT(r.cond[0], 1e-6);
}

TEST(SoftmaxOracle, ConditionNumberOfAModerateRow) {
  // x = [1, 0]: y_0 = e/(1+e), cond_0 = 1 * (1 - y_0), cond_1 = y_0 * 1.
  const OracleResult r = run(DType::f64, {1.0, 0.0});
  const double y0 = std::exp(1.0) / (1 + std::exp(1.0));
  EXPECT_NEAR(r.cond[0], 1 - y0, 1e-12);
  EXPECT_NEAR(r.cond[1], y0, 1e-12);
}

TEST(SoftmaxOracle, F32ResultsAreRepresentableAsFloat) {
  const OracleResult r = run(DType::f32, {0.1, 0.2, 0.3, -40.0, 60.0, -39.5});
  ASSERT_TRUE(r.decidable);
  ASSERT_EQ(r.exact.size(), 6u);
  for (double y : r.exact) EXPECT_TRUE(representable(DType::f32, y)) << y;
  // e^-100 and e^-99.5 are f32 subnormals (~26 and ~43 times 2^-149), rounded once.
  for (size_t i : {3u, 5u}) {
    EXPECT_GT(r.exact[i], 0.0) << i;
    EXPECT_LT(r.exact[i], dtype_min_normal(DType::f32)) << i;
  }
  EXPECT_LT(r.exact[3], r.exact[5]);
  // The same row in f64 keeps more bits than f32 allows.
  const OracleResult r64 = run(DType::f64, {0.1, 0.2, 0.3});
  EXPECT_FALSE(representable(DType::f32, r64.exact[0]));
}

// Rows of up to 8 logits in [-50, 50]; `dyadic` keeps 10 fractional bits so shifts are exact.
rc::Gen<std::vector<double>> short_rows(bool dyadic = false) {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(1, 9), [dyadic](size_t n) {
    return rc::gen::container<std::vector<double>>(
        n, rc::gen::map(rc::gen::resize(100, rc::gen::arbitrary<uint64_t>()), [dyadic](uint64_t b) {
          const double u = static_cast<double>(b >> 11) * 0x1p-53;  // [0, 1)
          return dyadic ? std::ldexp(std::floor(u * 102400) - 51200, -10) : -50.0 + 100.0 * u;
        }));
  });
}

RC_GTEST_PROP(SoftmaxOracleProp, OutputsSumToOneWithinNUlps, ()) {
  const auto x = *short_rows();
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const OracleResult r = run(d, x);
  RC_ASSERT(r.decidable);
  RC_ASSERT(r.exact.size() == x.size());
  long double s = 0;
  for (double y : r.exact) {
    RC_ASSERT(y >= 0.0 && y <= 1.0);
    RC_ASSERT(representable(d, y));
    s += y;
  }
  const long double ulp1 = 2 * dtype_unit_roundoff(d);  // ULP of 1
  RC_ASSERT(std::fabs(s - 1.0L) <= static_cast<long double>(x.size()) * ulp1);
  for (double c : r.cond) RC_ASSERT(c >= 0.0 && c <= 100.0);  // <= max |x_i| + max |x_j|
}

// softmax(x + c) = softmax(x) exactly when the shift is exact: the oracle must agree bit for bit.
RC_GTEST_PROP(SoftmaxOracleProp, ExactShiftLeavesResultUnchanged, ()) {
  const auto x = *short_rows(true);
  const double c = static_cast<double>(*rc::gen::inRange(-1000, 1001));
  std::vector<double> shifted;
  for (double v : x) shifted.push_back(v + c);
  for (size_t i = 0; i < x.size(); ++i) RC_ASSERT(shifted[i] - c == x[i]);  // shift was exact
  const OracleResult a = run(DType::f64, x), b = run(DType::f64, shifted);
  RC_ASSERT(a.exact == b.exact);
}

// Where the long double result (error ~2^-60) is far from a rounding midpoint of the dtype, the
// correctly rounded oracle must equal its rounding exactly; a double-precision exp would not.
RC_GTEST_PROP(SoftmaxOracleProp, CorrectlyRoundedWhereLongDoubleIsDecisive, ()) {
  const auto x = *short_rows();
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const Input in = row_input(d, x);
  const OracleResult r = oracle::softmax(in);
  const auto ref = softmax_ld(in.args[0].values);
  const auto rnd = [d](long double v) {
    return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
  };
  for (size_t i = 0; i < ref.size(); ++i) {
    const long double lo = ref[i] * (1 - 0x1p-56L), hi = ref[i] * (1 + 0x1p-56L);
    if (rnd(lo) != rnd(hi)) continue;  // too close to a midpoint to judge
    RC_ASSERT(r.exact[i] == rnd(ref[i]));
  }
}

}  // namespace
}  // namespace stabfuzz

namespace stabfuzz {
namespace {

// The double-double path and MPFR's agree on every output they both decide: rows from every
// regime of the softmax family in every dtype, plus rows of equal and nearly equal logits, and
// the double-double path takes the common rows (not only the easy ones).
TEST(SoftmaxOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  SeededEntropy e(5, 77);
  int rows = 0, fast = 0, outputs = 0;
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    for (int k = 0; k < 400; ++k) {
      const Regime& r = f->regimes[static_cast<size_t>(k) % f->regimes.size()];
      Input in = r.sample(e, d);
      if (in.total_size() > 4096 || f->validate(in)) continue;
      if (k % 7 == 0) {  // logits that differ in their last bits: results near 1/n
        auto& v = in.args.at(0).values;
        for (size_t i = 1; i < v.size(); ++i) v[i] = std::nextafter(v[0], v[0] + (i % 3));
      }
      ++rows;
      const auto dd = oracle::detail::softmax_double_double(in);
      if (!dd) continue;
      ++fast;
      const OracleResult mp = oracle::detail::softmax_mpfr(in);
      ASSERT_TRUE(mp.decidable);
      ASSERT_EQ(dd->exact.size(), mp.exact.size());
      for (size_t i = 0; i < mp.exact.size(); ++i) {
        ++outputs;
        ASSERT_EQ(dd->exact[i], mp.exact[i])
            << r.name << " " << dtype_name(d) << " row " << k << " output " << i;
        ASSERT_NEAR(dd->cond[i], mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i]));
      }
    }
  }
  // Terms that MPFR evaluates inside the double-double path (e^(x_j - m) in [2^-1076, 2^-865]),
  // terms whose quotient rounds to 0, and -inf entries.
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16})
    for (double shift : {0.0, 3e4, -3.25}) {  // all finite in f16
      std::vector<double> v = {0.0, -1.5, -650, -700.25, -744.5, -745.5, -746.5, -800, -INFINITY};
      for (double& t : v) t += shift;
      const Input in = regime::row_input(d, v);
      const auto dd = oracle::detail::softmax_double_double(in);
      ASSERT_TRUE(dd.has_value()) << dtype_name(d) << " shift " << shift;
      const OracleResult mp = oracle::detail::softmax_mpfr(in);
      for (size_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(dd->exact[i], mp.exact[i]) << dtype_name(d) << " " << v[i];
        EXPECT_NEAR(dd->cond[i], mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i]));
      }
    }
  EXPECT_GT(fast, rows / 2);  // the double-double path is the common one
  EXPECT_GT(outputs, 100000);
}

}  // namespace
}  // namespace stabfuzz
