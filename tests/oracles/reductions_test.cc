// Reduction oracles and stable targets: special values, identities, conditioning, agreement.
#include "oracles/reductions.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz {
namespace {

using regime::make_input;
using regime::row_input;

constexpr DType kDTypes[] = {DType::f64, DType::f32};
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();

const Family& family(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  return *f;
}

Input with_unbiased(Input in, double b) {
  in.set_param("unbiased", b);
  return in;
}

Input pair_input(DType d, std::vector<double> a, std::vector<double> b) {
  const auto n = static_cast<int64_t>(a.size());
  const auto m = static_cast<int64_t>(b.size());
  return make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{m}, std::move(b)}});
}

// The stable target of `f` run natively.
std::vector<double> stable(const char* f, const Input& in) {
  return family(f).targets.at(0).native(in);
}

double to_dtype(DType d, long double v) {
  return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
}

// ---- sum, mean, cumsum --------------------------------------------------------------------------

TEST(SumOracle, CancellationIsExact) {
  const OracleResult r = oracle::reduce_sum(row_input(DType::f64, {1e16, 1.0, -1e16}));
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, std::vector<double>{1.0});
  EXPECT_DOUBLE_EQ(r.cond[0], 2e16 + 1);  // sum |x| / |sum x|
  EXPECT_EQ(stable("sum", row_input(DType::f64, {1e16, 1.0, -1e16})), std::vector<double>{0.0});
}

TEST(SumOracle, TiesOfTheOutputFormatAreDecided) {
  // 1 + 2^-24 and 1 + 3 2^-24 are f32 midpoints: ties to even.
  const OracleResult a = oracle::reduce_sum(row_input(DType::f32, {1.0, 0x1p-24}));
  const OracleResult b = oracle::reduce_sum(row_input(DType::f32, {1.0, 0x3p-24}));
  ASSERT_TRUE(a.decidable && b.decidable);
  EXPECT_EQ(a.exact[0], 1.0);
  EXPECT_EQ(b.exact[0], 1.0 + 0x1p-22);
  const OracleResult m = oracle::reduce_mean(row_input(DType::f32, {1.0, 1.0 + 0x1p-23}));
  ASSERT_TRUE(m.decidable);
  EXPECT_EQ(m.exact[0], 1.0);
}

TEST(SumOracle, ZeroConventions) {
  for (DType d : kDTypes) {
    const OracleResult z = oracle::reduce_sum(row_input(d, {0.0, -0.0}));
    EXPECT_EQ(z.exact, std::vector<double>{0.0});
    EXPECT_EQ(z.cond, std::vector<double>{0.0});  // all-zero row: every kernel gets 0 exactly
    const OracleResult c = oracle::reduce_sum(row_input(d, {2.5, -2.5}));
    EXPECT_EQ(c.exact, std::vector<double>{0.0});
    EXPECT_EQ(c.cond[0], INFINITY);  // cancellation to exactly 0: relative error is unbounded
    const OracleResult one = oracle::reduce_sum(row_input(d, {-3.0}));
    EXPECT_EQ(one.exact, std::vector<double>{-3.0});
    EXPECT_EQ(one.cond, std::vector<double>{1.0});
  }
}

TEST(SumOracle, OverflowIsExact) {
  const double big = round_to(DType::f32, 3e38);
  const Input over = row_input(DType::f32, {big, big});
  EXPECT_EQ(oracle::reduce_sum(over).exact[0], INFINITY);
  EXPECT_EQ(stable("sum", over)[0], INFINITY);
  // Partial sums overflow in f32, the total does not: the stable target prescales.
  const Input back = row_input(DType::f32, {big, big, -big});
  EXPECT_EQ(oracle::reduce_sum(back).exact[0], big);
  EXPECT_EQ(stable("sum", back)[0], big);
  EXPECT_EQ(stable("mean", row_input(DType::f64, {0x1.8p1023, 0x1.8p1023}))[0], 0x1.8p1023);
  EXPECT_EQ(oracle::reduce_mean(row_input(DType::f64, {0x1.8p1023, 0x1.8p1023})).exact[0],
            0x1.8p1023);
}

TEST(CumSumOracle, PrefixesAndTheirConditioning) {
  const OracleResult r = oracle::cumsum(row_input(DType::f64, {1.0, 1e16, -1e16}));
  ASSERT_TRUE(r.decidable);
  // 1 + 1e16 is a tie between 1e16 and 1e16 + 2: to even.
  EXPECT_EQ(r.exact, (std::vector<double>{1.0, 1e16, 1.0}));
  EXPECT_EQ(r.cond[0], 1.0);
  EXPECT_EQ(r.cond[1], 1.0);
  EXPECT_DOUBLE_EQ(r.cond[2], 2e16 + 1);
  const OracleResult z = oracle::cumsum(row_input(DType::f32, {0.0, 4.0, -4.0}));
  EXPECT_EQ(z.cond, (std::vector<double>{0.0, 1.0, INFINITY}));
}

// Rows of up to 9 multiples of 2^-10 in [-50, 50]: exact in f32 and f64, and their sums are
// exact in __float128 (an independent exact reference).
rc::Gen<std::vector<double>> dyadic_rows() {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(1, 10), [](size_t n) {
    return rc::gen::container<std::vector<double>>(
        n, rc::gen::map(rc::gen::inRange<int64_t>(-51200, 51201),
                        [](int64_t k) { return std::ldexp(static_cast<double>(k), -10); }));
  });
}

RC_GTEST_PROP(SumOracleProp, PrefixSumsMatchFloat128AndPermutations, ()) {
  auto x = *dyadic_rows();
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const OracleResult c = oracle::cumsum(row_input(d, x));
  RC_ASSERT(c.decidable && c.exact.size() == x.size());
  __float128 s = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    s += x[k];
    RC_ASSERT(c.exact[k] == round_to(d, static_cast<double>(s)));
  }
  const OracleResult total = oracle::reduce_sum(row_input(d, x));
  RC_ASSERT(total.exact[0] == c.exact.back());
  std::reverse(x.begin(), x.end());
  RC_ASSERT(oracle::reduce_sum(row_input(d, x)).exact[0] == total.exact[0]);
  const OracleResult m = oracle::reduce_mean(row_input(d, x));
  RC_ASSERT(m.decidable);
  RC_ASSERT(m.exact[0] == to_dtype(d, static_cast<long double>(s) / x.size()));
  RC_ASSERT(m.cond == total.cond);
}

// ---- var, std -----------------------------------------------------------------------------------

TEST(VarianceOracle, HandComputedCase) {
  // x = 1..4: mean 2.5, sum d^2 = 5; cond = 2 sum |d_i x_i| / sum d^2 = 2 (1.5 + 1 + 1.5 + 6) / 5.
  const Input x = row_input(DType::f64, {1, 2, 3, 4});
  const OracleResult r1 = oracle::variance(x);  // unbiased defaults to 1
  ASSERT_TRUE(r1.decidable);
  EXPECT_EQ(r1.exact[0], 5.0 / 3.0);
  EXPECT_NEAR(r1.cond[0], 4.0, 1e-12);
  const OracleResult r0 = oracle::variance(with_unbiased(x, 0));
  EXPECT_EQ(r0.exact[0], 1.25);
  const OracleResult s = oracle::standard_deviation(with_unbiased(x, 0));
  EXPECT_EQ(s.exact[0], std::sqrt(1.25));
  EXPECT_NEAR(s.cond[0], 2.0, 1e-12);
}

TEST(VarianceOracle, MeanShiftedRowIsIllConditioned) {
  // 1e8 + {-1, 0, 1}: var = 1, cond = 2 ((1e8 - 1) + (1e8 + 1)) / 2 = 2e8.
  const Input x = row_input(DType::f64, {1e8 - 1, 1e8, 1e8 + 1});
  const OracleResult r = oracle::variance(x);
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact[0], 1.0);
  EXPECT_NEAR(r.cond[0], 2e8, 1e-4);
  EXPECT_EQ(stable("var", x)[0], 1.0);
  // The naive E[x^2] - E[x]^2 in f64 keeps no digit here, and the verdict says so.
  double sum = 0, sum_sq = 0;
  for (double v : x.args[0].values) sum += v, sum_sq += v * v;
  const double naive = (sum_sq - sum * sum / 3) / 2;
  EXPECT_NE(naive, 1.0);
  EXPECT_TRUE(judge(family("var"), x, {naive}, r, nullptr).oracle_fired) << naive;
}

TEST(VarianceOracle, AlternatingUlpRowNeedsTheCorrection) {
  // c + ulp, c, c + ulp, ...: var = ulp^2 / 4. The mean c + ulp/2 is a tie in f32 and rounds to
  // c or c + ulp, which doubles sum (x - m^)^2; the corrected two-pass removes that exactly.
  for (double c : {1.0, 1.7, 10000.3}) {
    const auto cf = static_cast<float>(c);
    std::vector<double> v(1024, cf);
    for (size_t i = 0; i < v.size(); i += 2) v[i] = std::nextafter(cf, 2 * cf);
    const Input x = with_unbiased(row_input(DType::f32, v), 0);
    const double ulp = v[0] - v[1];
    const OracleResult r = oracle::variance(x);
    ASSERT_TRUE(r.decidable);
    EXPECT_EQ(r.exact[0], ulp * ulp / 4);
    EXPECT_EQ(stable("var", x)[0], ulp * ulp / 4) << c;
    EXPECT_EQ(stable("std", x)[0], ulp / 2) << c;
  }
}

TEST(VarianceOracle, ConstantRowsAreExactlyZero) {
  for (DType d : kDTypes)
    for (double c : {0.1, -3e7, 1e-300, 0.0}) {
      const Input x = with_unbiased(row_input(d, std::vector<double>(5, c)), 0);
      for (auto* o : {oracle::variance, oracle::standard_deviation}) {
        const OracleResult r = o(x);
        ASSERT_TRUE(r.decidable);
        EXPECT_EQ(r.exact, std::vector<double>{0.0});
        EXPECT_EQ(r.cond, std::vector<double>{0.0});
      }
      EXPECT_EQ(stable("var", x), std::vector<double>{0.0});
      EXPECT_EQ(stable("std", x), std::vector<double>{0.0});
    }
}

TEST(VarianceOracle, ExtremeScales) {
  const double a = round_to(DType::f32, 3e38);
  const Input huge = with_unbiased(row_input(DType::f32, {a, -a}), 0);
  EXPECT_EQ(oracle::variance(huge).exact[0], INFINITY);  // a^2 overflows: the exact answer
  EXPECT_EQ(oracle::standard_deviation(huge).exact[0], a);
  EXPECT_EQ(stable("std", huge)[0], a);
  const Input tiny = with_unbiased(row_input(DType::f64, {kDenormMin, -kDenormMin}), 0);
  EXPECT_EQ(oracle::standard_deviation(tiny).exact[0], kDenormMin);
  EXPECT_EQ(oracle::variance(tiny).exact[0], 0.0);  // 2^-2148 rounds to 0
  EXPECT_EQ(stable("std", tiny)[0], kDenormMin);
  // A tie of the output format (var of two values) is decided, not undecidable.
  const Input tie = with_unbiased(
      row_input(DType::f32, {-0x1.387d42p+13, -0x1.38727ep+13, -0x1.388b32p+13, -0x1.388164p+13}),
      0);
  EXPECT_TRUE(oracle::variance(tie).decidable);
}

RC_GTEST_PROP(VarianceOracleProp, MatchesExactFloat128, ()) {
  const auto x = *dyadic_rows();
  RC_PRE(x.size() >= 2);
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const double b = *rc::gen::element(0.0, 1.0);
  // n sum x^2 - (sum x)^2 is exact in __float128 for these rows; one division rounds it.
  __float128 s = 0, s2 = 0;
  for (double v : x) s += v, s2 += static_cast<__float128>(v) * v;
  const __float128 n = x.size();
  const __float128 var = (n * s2 - s * s) / (n * (n - b));
  RC_PRE(var > 0);
  const Input in = with_unbiased(row_input(d, x), b);
  const OracleResult r = oracle::variance(in), sd = oracle::standard_deviation(in);
  RC_ASSERT(r.decidable && sd.decidable);
  RC_ASSERT(ulp_distance(d, r.exact[0], to_dtype(d, static_cast<long double>(var))) <= 1.0);
  RC_ASSERT(ulp_distance(d, sd.exact[0], to_dtype(d, std::sqrt(static_cast<long double>(var)))) <=
            1.0);
  RC_ASSERT(std::fabs(sd.cond[0] - r.cond[0] / 2) <= 1e-12 * r.cond[0]);
}

// ---- l2_norm ------------------------------------------------------------------------------------

TEST(L2NormOracle, SpecialValuesAndScaling) {
  for (DType d : kDTypes) {
    const OracleResult r = oracle::l2_norm(row_input(d, {3.0, -4.0}));
    EXPECT_EQ(r.exact, std::vector<double>{5.0});
    EXPECT_EQ(r.cond, std::vector<double>{1.0});
    const OracleResult z = oracle::l2_norm(row_input(d, {0.0, -0.0}));
    EXPECT_EQ(z.exact, std::vector<double>{0.0});
    EXPECT_EQ(z.cond, std::vector<double>{0.0});
    EXPECT_EQ(stable("l2_norm", row_input(d, {0.0, -0.0})), std::vector<double>{0.0});
    EXPECT_EQ(oracle::l2_norm(row_input(d, {-7.5})).exact, std::vector<double>{7.5});
  }
  // Squares overflow f32 (1e40) and underflow f64 (1e-640): the norm does neither.
  const Input big = row_input(DType::f32, {1e20, 1e20});
  const double want =
      round_to(DType::f32, static_cast<double>(round_to(DType::f32, 1e20)) * std::sqrt(2.0));
  EXPECT_EQ(oracle::l2_norm(big).exact[0], want);
  EXPECT_EQ(stable("l2_norm", big)[0], want);
  const Input small = row_input(DType::f64, {kDenormMin, kDenormMin, kDenormMin, kDenormMin});
  EXPECT_EQ(oracle::l2_norm(small).exact[0], 2 * kDenormMin);
  EXPECT_EQ(stable("l2_norm", small)[0], 2 * kDenormMin);
}

RC_GTEST_PROP(L2NormOracleProp, MatchesLongDouble, ()) {
  const auto x = *dyadic_rows();
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  long double ss = 0;
  for (double v : x) ss += static_cast<long double>(v) * v;
  const OracleResult r = oracle::l2_norm(row_input(d, x));
  RC_ASSERT(r.decidable);
  RC_ASSERT(ulp_distance(d, r.exact[0], to_dtype(d, std::sqrt(ss))) <= 1.0);
}

// ---- logsumexp, logcumsumexp, logaddexp ---------------------------------------------------------

// logsumexp in long double and its condition number sum softmax_i |x_i| / |y|.
std::pair<long double, long double> lse_ld(const std::vector<double>& x) {
  long double m = -INFINITY, s = 0, sx = 0;
  for (double v : x) m = std::fmax(m, static_cast<long double>(v));
  for (double v : x) {
    const long double e = std::exp(static_cast<long double>(v) - m);
    s += e;
    sx += e * std::fabs(static_cast<long double>(v));
  }
  const long double y = m + std::log(s);
  return {y, sx / s / std::fabs(y)};
}

TEST(LogSumExpOracle, SpecialValues) {
  for (DType d : kDTypes) {
    const OracleResult z = oracle::logsumexp(row_input(d, {0.0}));
    EXPECT_EQ(z.exact, std::vector<double>{0.0});
    EXPECT_EQ(z.cond, std::vector<double>{0.0});
    EXPECT_EQ(oracle::logsumexp(row_input(d, {-INFINITY, -INFINITY})).exact[0], -INFINITY);
    EXPECT_EQ(oracle::logsumexp(row_input(d, {INFINITY, 0.0})).exact[0], INFINITY);
    EXPECT_EQ(oracle::logsumexp(row_input(d, {-INFINITY, 2.5})).exact[0], 2.5);
    EXPECT_EQ(stable("logsumexp", row_input(d, {-INFINITY, -INFINITY}))[0], -INFINITY);
    EXPECT_EQ(stable("logsumexp", row_input(d, {INFINITY, -INFINITY}))[0], INFINITY);
    EXPECT_EQ(stable("logsumexp", row_input(d, {-INFINITY, 2.5}))[0], 2.5);
  }
  EXPECT_TRUE(family("logsumexp").validate(row_input(DType::f64, {0.0, NAN})));
  EXPECT_FALSE(family("logsumexp").validate(row_input(DType::f64, {INFINITY, -INFINITY})));
}

TEST(LogSumExpOracle, ConditionNumbers) {
  // [1000, 1000]: y = 1000 + log 2, softmax = (1/2, 1/2), cond = 1000 / y.
  const OracleResult r = oracle::logsumexp(row_input(DType::f64, {1000.0, 1000.0}));
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact[0], 1000 + std::log(2.0));
  EXPECT_NEAR(r.cond[0], 1000 / (1000 + std::log(2.0)), 1e-12);
  // One dominant logit near 0: y = 1e-10 + log1p(e^-30 ...), cond ~ 1; log(1 + t) would lose it.
  const Input dom = row_input(DType::f64, {1e-10, -30.0});
  const OracleResult q = oracle::logsumexp(dom);
  const long double x0 = 1e-10;  // the double nearest 1e-10, as the input holds it
  const long double want = x0 + std::log1p(std::exp(-30.0L - x0));
  EXPECT_LE(ulp_distance(DType::f64, q.exact[0], static_cast<double>(want)), 1.0);
  const long double t = std::exp(-30.0L - x0);  // softmax weights 1 / (1 + t), t / (1 + t)
  EXPECT_NEAR(q.cond[0], static_cast<double>((x0 + 30 * t) / (1 + t) / want), 1e-12);
  EXPECT_LE(ulp_distance(DType::f64, stable("logsumexp", dom)[0], q.exact[0]), 2.0);
}

RC_GTEST_PROP(LogSumExpOracleProp, MatchesLongDoubleAndScans, ()) {
  const auto x = *dyadic_rows();
  const DType d = *rc::gen::element(DType::f64, DType::f32);
  const auto [y, cond] = lse_ld(x);
  RC_PRE(cond < 100);  // long double's 64 bits then hold the f64 result within 0.1 ulp
  const OracleResult r = oracle::logsumexp(row_input(d, x));
  RC_ASSERT(r.decidable);
  RC_ASSERT(ulp_distance(d, r.exact[0], to_dtype(d, y)) <= 1.0);
  const OracleResult c = oracle::logcumsumexp(row_input(d, x));
  RC_ASSERT(c.decidable && c.exact.size() == x.size());
  RC_ASSERT(c.exact.back() == r.exact[0]);
  RC_ASSERT(std::fabs(c.cond.back() - r.cond[0]) <= 1e-12 * r.cond[0]);
  RC_ASSERT(c.exact[0] == x[0]);
  for (size_t k = 1; k < x.size(); ++k) RC_ASSERT(c.exact[k] >= c.exact[k - 1]);
}

TEST(LogCumSumExpOracle, InfinitiesAndPrefixes) {
  const OracleResult r =
      oracle::logcumsumexp(row_input(DType::f64, {-INFINITY, 0.0, -INFINITY, 0.0}));
  ASSERT_TRUE(r.decidable);
  EXPECT_EQ(r.exact, (std::vector<double>{-INFINITY, 0.0, 0.0, std::log(2.0)}));
  EXPECT_EQ(r.cond, (std::vector<double>{0.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(stable("logcumsumexp", row_input(DType::f64, {-INFINITY, 0.0, -INFINITY, 0.0})),
            r.exact);
  const OracleResult p = oracle::logcumsumexp(row_input(DType::f32, {1.0, INFINITY, 0.0}));
  EXPECT_EQ(p.exact, (std::vector<double>{1.0, INFINITY, INFINITY}));
}

// The double-double path gives the MPFR path's outputs and conditions wherever it answers, on
// every regime in every dtype and on hard pairs (ties, a far smaller term, results near 0, ties
// of the dtype just above the larger value), and answers for most pairs.
TEST(LogAddExpOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  const Family& fam = family("logaddexp");
  SeededEntropy e(3, 47);
  for (DType d : kAllDTypes) {
    std::vector<Input> ins;
    for (int k = 0; k < 120; ++k) {
      const Regime& r = fam.regimes[static_cast<size_t>(k) % fam.regimes.size()];
      Input in = r.sample(e, d);
      if (in.total_size() <= 8192 && !fam.validate(in)) ins.push_back(std::move(in));
    }
    ins.push_back(pair_input(d, {5, 0, 1e30, -0.6931471805599453, 40, 3, -INFINITY, INFINITY},
                             {5, -700, 1, -0.6931471805599453, 0, -1e4, 2, -INFINITY}));
    int pairs = 0, fast = 0;
    for (const Input& in : ins) {
      const OracleResult mp = oracle::detail::logaddexp_mpfr(in);
      const OracleResult whole = oracle::logaddexp(in);
      ASSERT_TRUE(mp.decidable);
      ASSERT_TRUE(whole.decidable);
      for (size_t i = 0; i < mp.exact.size(); ++i) {
        const double a = in.args[0].values[i], b = in.args[1].values[i];
        const std::string what =
            std::string(dtype_name(d)) + " pair " + std::to_string(a) + " " + std::to_string(b);
        ASSERT_EQ(whole.exact[i], mp.exact[i]) << what;
        ++pairs;
        double c = 0;
        const auto v = oracle::detail::logaddexp_double_double(a, b, d, &c);
        if (!v) continue;
        ++fast;
        ASSERT_EQ(*v, mp.exact[i]) << what;
        ASSERT_NEAR(c, mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i])) << what;
        ASSERT_EQ(whole.cond[i], c) << what;
      }
    }
    EXPECT_GT(fast, pairs * 99 / 100) << dtype_name(d);
  }
}

TEST(LogAddExpOracle, ElementwiseLogSumExpOfPairs) {
  const std::vector<double> a = {0.0, -INFINITY, INFINITY, 1000.0, -0.6931471805599453, 3.0};
  const std::vector<double> b = {0.0, -INFINITY, -INFINITY, -1000.0, -0.6931471805599453, -2.0};
  for (DType d : kDTypes) {
    const Input in = pair_input(d, a, b);
    const OracleResult r = oracle::logaddexp(in);
    ASSERT_TRUE(r.decidable);
    const OracleResult swapped = oracle::logaddexp(pair_input(d, b, a));
    EXPECT_EQ(r.exact, swapped.exact);
    for (size_t i = 0; i < a.size(); ++i) {
      const Input pair = row_input(d, {in.args[0].values[i], in.args[1].values[i]});
      const OracleResult l = oracle::logsumexp(pair);
      EXPECT_EQ(r.exact[i], l.exact[0]) << i;
      EXPECT_NEAR(r.cond[i], l.cond[0], 1e-12 * l.cond[0]) << i;
    }
    EXPECT_EQ(r.exact[1], -INFINITY);
    EXPECT_EQ(r.exact[2], INFINITY);
    EXPECT_EQ(r.exact[3], 1000.0);
    const auto y = stable("logaddexp", in);
    const Family& f = family("logaddexp");
    for (size_t i : {0, 1, 2, 3, 5})  // 4 has no digit to keep (see below)
      EXPECT_LE(ulp_distance(d, y[i], r.exact[i]),
                f.tolerance_ulps(d, 12) * std::fmax(1, r.cond[i]));
  }
  // y = log 2 - 0.6931471805599453 ~ 2.3e-17 is ill-conditioned: cond ~ 0.69 / 2.3e-17.
  const OracleResult r =
      oracle::logaddexp(pair_input(DType::f64, {-0.6931471805599453}, {-0.6931471805599453}));
  EXPECT_GT(r.cond[0], 1e15);
  EXPECT_TRUE(family("logaddexp").validate(pair_input(DType::f64, {1.0, 2.0}, {1.0})));
  EXPECT_TRUE(family("logaddexp").validate(row_input(DType::f64, {1.0})));
  EXPECT_FALSE(
      family("logaddexp").validate(pair_input(DType::f64, {1.0, -INFINITY}, {INFINITY, 2.0})));
}

// ---- every family: the stable target against the oracle and CESTAC ------------------------------

TEST(ReductionFamilies, StableTargetsPassOnEveryRegime) {
  for (const char* name : {"sum", "mean", "var", "std", "l2_norm", "logsumexp", "cumsum",
                           "logcumsumexp", "logaddexp"}) {
    const Family& f = family(name);
    ASSERT_EQ(f.targets.at(0).kind, TargetKind::reference);  // injected targets follow it
    const Target& t = f.targets[0];
    EXPECT_EQ(t.dtypes, std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)));
    for (DType d : kAllDTypes)
      for (size_t r = 0; r < f.regimes.size(); ++r) {
        SeededEntropy e(17, r);
        const Input in = f.regimes[r].sample(e, d);
        ASSERT_FALSE(f.validate(in)) << name << " " << f.regimes[r].name << ": " << *f.validate(in);
        const Verdict v = pipeline::evaluate(f, t, in, CestacRequest{});
        EXPECT_FALSE(v.undecidable) << name << " " << f.regimes[r].name;
        EXPECT_FALSE(v.finding()) << name << " " << dtype_name(d) << " " << f.regimes[r].name
                                  << " ratio " << v.max_ratio << " digits deficit "
                                  << v.digits_deficit;
      }
  }
}

// ---- logsumexp: the double-double path against MPFR --------------------------------------------

void expect_same_logsumexp(const Input& in, const char* what, int* fast) {
  const auto dd = oracle::detail::logsumexp_double_double(in);
  if (!dd) return;
  ++*fast;
  const OracleResult mp = oracle::detail::logsumexp_mpfr(in);
  ASSERT_TRUE(mp.decidable);
  ASSERT_EQ(dd->exact.at(0), mp.exact.at(0)) << what << " " << dtype_name(in.dtype);
  ASSERT_NEAR(dd->cond.at(0), mp.cond.at(0), 1e-9 * std::fmax(1.0, mp.cond.at(0)))
      << what << " " << dtype_name(in.dtype);
}

// The double-double path and MPFR's scan give the same result and condition on rows of every
// regime of the logsumexp family in every dtype, and on rows built to be hard: results near 0,
// one dominant logit (log1p of a tiny sum), repeated maxima, a single element.
TEST(LogsumexpOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  const Family* f = default_registry().find_family("logsumexp");
  ASSERT_NE(f, nullptr);
  SeededEntropy e(9, 31);
  int rows = 0, fast = 0;
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    for (int k = 0; k < 1000; ++k) {
      const Regime& r = f->regimes[static_cast<size_t>(k) % f->regimes.size()];
      const Input in = r.sample(e, d);
      if (in.total_size() > 4096 || f->validate(in)) continue;
      ++rows;
      expect_same_logsumexp(in, r.name.c_str(), &fast);
    }
    const double ln2 = 0.6931471805599453;
    const std::vector<std::vector<double>> hard = {{-ln2, -ln2},
                                                   {-ln2, -ln2, -40},
                                                   {0.0, -30, -35},
                                                   {0.0, -700},
                                                   {0.0},
                                                   {3.5},
                                                   {-2.0, -2.0, -2.0, -2.0},
                                                   {1e5, 1e5 - 3.25},
                                                   {-1e-3, -20, -25.5},
                                                   {2.0, -1.0, 0.5, -0.25}};
    for (const auto& v : hard) {
      ++rows;
      expect_same_logsumexp(regime::row_input(d, v), "hard", &fast);
    }
  }
  EXPECT_GT(fast, rows / 2);  // the double-double path is the common one
}

// The double-double scan and MPFR's give the same outputs and conditions on rows of every regime of
// the logcumsumexp family in every dtype, and on hard rows: every element a new maximum (a rescale
// at each step), infinities, zeros of both signs, outputs near 0, ties; rows with a gap past 600
// are left to MPFR.
TEST(LogCumSumExpOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  const Family& f = family("logcumsumexp");
  SeededEntropy e(9, 37);
  int rows = 0, fast = 0;
  const double ln2 = 0.6931471805599453;
  for (DType d : kAllDTypes) {
    std::vector<Input> ins;
    for (int k = 0; k < 400; ++k) {
      const Regime& r = f.regimes[static_cast<size_t>(k) % f.regimes.size()];
      Input in = r.sample(e, d);
      if (in.total_size() <= 4096 && !f.validate(in)) ins.push_back(std::move(in));
    }
    std::vector<double> rising;
    for (int i = 0; i < 200; ++i) rising.push_back(-50 + 0.5 * i);
    for (const auto& v : std::vector<std::vector<double>>{rising,
                                                          {-ln2, -ln2, -3.0},
                                                          {0.0, -30.0, 1.0},
                                                          {-0.0},
                                                          {0.0},
                                                          {-INFINITY, 2.0, -INFINITY, 2.0},
                                                          {1.0, INFINITY, 3.0},
                                                          {-2.0, -2.0, -2.0, -2.0},
                                                          {1e5, 1e5 - 3.25, 1e5 + 1}}) {
      ins.push_back(row_input(d, v));
    }
    for (const Input& in : ins) {
      ++rows;
      const auto dd = oracle::detail::logcumsumexp_double_double(in);
      if (!dd) continue;
      ++fast;
      const OracleResult mp = oracle::detail::logcumsumexp_mpfr(in);
      ASSERT_TRUE(mp.decidable);
      ASSERT_EQ(dd->exact.size(), mp.exact.size());
      for (size_t i = 0; i < mp.exact.size(); ++i) {
        ASSERT_EQ(dd->exact[i], mp.exact[i]) << dtype_name(d) << " output " << i;
        ASSERT_EQ(std::signbit(dd->exact[i]), std::signbit(mp.exact[i])) << i;
        ASSERT_NEAR(dd->cond[i], mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i]))
            << dtype_name(d) << " output " << i;
      }
    }
  }
  EXPECT_GT(fast, rows * 3 / 4);
  EXPECT_FALSE(
      oracle::detail::logcumsumexp_double_double(row_input(DType::f64, {0.0, -700.0})).has_value());
}

}  // namespace
}  // namespace stabfuzz
