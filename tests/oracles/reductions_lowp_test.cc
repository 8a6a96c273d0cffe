// f16 and bf16: every reduction oracle against long double references rounded once, the
// regimes' distance from the overflow threshold, and the stable targets on long or noisy rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "oracles/reductions.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz {
namespace {

using regime::row_input;

const Family& family(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  return *f;
}

Input pair_input(DType d, std::vector<double> a, std::vector<double> b) {
  const auto n = static_cast<int64_t>(a.size());
  const auto m = static_cast<int64_t>(b.size());
  return regime::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{m}, std::move(b)}});
}

// The stable target of `f` run natively.
std::vector<double> stable(const char* f, const Input& in) {
  return family(f).targets.at(0).native(in);
}

constexpr DType kLowp[] = {DType::f16, DType::bf16};

// v rounded once to the format, when v is decisively on one side of the midpoint between two
// neighbours (farther than 2^-40 of a spacing; long double errs by ~2^-60 here), else nullopt.
std::optional<double> decisive_round(DType d, long double v) {
  const Format& fmt = dtype_format(d);
  const double r = round_to_format(fmt, static_cast<double>(v));
  if (!std::isfinite(r)) return r;
  const long double off = std::fabs(v - r) / format_quantum(fmt, r);
  if (std::fabs(off - 0.5L) < 0x1p-40L) return std::nullopt;
  return r;
}

// Every reduction oracle in f16 and bf16 against long double references rounded once.
TEST(LowPrecisionOracles, MatchLongDoubleRoundedOnce) {
  const std::vector<double> x = {1.5, -0.375, 3.25, 0.0078125, -2.0, 7.0};  // exact in both
  const std::vector<double> b = {0.5, 2.0, -1.0, 4.0, -3.0, 0.25};
  long double s = 0, ss = 0, lse = 0;
  std::vector<long double> prefix, lcse, lae;
  for (size_t i = 0; i < x.size(); ++i) {
    s += x[i];
    ss += static_cast<long double>(x[i]) * x[i];
    lse += std::exp(static_cast<long double>(x[i]));
    prefix.push_back(s);
    lcse.push_back(std::log(lse));
    lae.push_back(std::log(std::exp(static_cast<long double>(x[i])) + std::exp(b[i])));
  }
  const long double n = x.size(), mean = s / n, var = (ss - s * s / n) / (n - 1);
  for (DType d : kLowp) {
    const Input in = row_input(d, x);
    const auto check = [&](const char* what, const OracleResult& r, size_t i, long double want) {
      ASSERT_TRUE(r.decidable) << what;
      if (const auto w = decisive_round(d, want))
        EXPECT_EQ(r.exact.at(i), *w) << what << " " << dtype_name(d) << " " << i;
    };
    check("sum", oracle::reduce_sum(in), 0, s);
    check("mean", oracle::reduce_mean(in), 0, mean);
    check("var", oracle::variance(in), 0, var);
    check("std", oracle::standard_deviation(in), 0, std::sqrt(var));
    check("l2_norm", oracle::l2_norm(in), 0, std::sqrt(ss));
    check("logsumexp", oracle::logsumexp(in), 0, std::log(lse));
    for (size_t i = 0; i < x.size(); ++i) {
      check("cumsum", oracle::cumsum(in), i, prefix[i]);
      check("logcumsumexp", oracle::logcumsumexp(in), i, lcse[i]);
      check("logaddexp", oracle::logaddexp(pair_input(d, x, b)), i, lae[i]);
    }
  }
  // f16 overflows at 65520: 40000 + 30000 is inf, 40000 + 25504 the largest value.
  EXPECT_EQ(oracle::reduce_sum(row_input(DType::f16, {40000, 30000})).exact[0], INFINITY);
  EXPECT_EQ(oracle::reduce_sum(row_input(DType::f16, {40000, 25504})).exact[0], 65504.0);
}

// f16 and bf16 rows of the sums, moments and norms keep their results clear of the overflow
// threshold M (in [M/4, 4M] a kernel within tolerance can land on either side of inf), and
// sums whose exact value is inf are still drawn.
TEST(LowPrecisionRegimes, ResultsStayClearOfTheOverflowThreshold) {
  for (DType d : kLowp) {
    const long double m = dtype_format(d).max_finite();
    int overflowing_sums = 0;
    for (const char* name : {"sum", "mean", "cumsum", "var", "l2_norm"}) {
      const Family& f = family(name);
      for (const auto& regime : f.regimes)
        for (uint64_t seed = 1; seed <= 10; ++seed) {
          SeededEntropy e(seed, 99);
          const Input in = regime.sample(e, d);
          const auto& x = in.args[0].values;
          long double sum = 0, ss = 0, top = 0;
          for (double v : x) {
            sum += v;
            ss += static_cast<long double>(v) * v;
            top = std::max(top, std::fabs(sum));
          }
          const long double k = x.size();
          const long double var = (ss - sum * sum / k) / std::max(k - 1, 1.0L);
          const auto clear = [&](long double r) { return r < m / 4 || r > 4 * m; };
          const std::string what = std::string(name) + " " + regime.name;
          if (std::string(name) == "cumsum") EXPECT_LT(top, m / 4) << what;
          if (std::string(name) == "sum" || std::string(name) == "mean")
            EXPECT_TRUE(clear(std::fabs(sum))) << what;
          if (std::string(name) == "sum") overflowing_sums += std::fabs(sum) > 4 * m;
          if (std::string(name) == "var") EXPECT_TRUE(clear(var) && clear(std::sqrt(var))) << what;
          if (std::string(name) == "l2_norm") EXPECT_TRUE(clear(std::sqrt(ss))) << what;
        }
    }
    EXPECT_GT(overflowing_sums, 0) << dtype_name(d);
  }
}

// More than 2^7 values near 65504 of one sign overflow f16's guarded pairwise sum (scaled by
// 2^-7): the mean is then summed again at a smaller scale and stays finite; the sum is inf.
TEST(LowPrecisionStable, LongRowsOfLargeF16ValuesKeepAFiniteMean) {
  const Input in = row_input(DType::f16, std::vector<double>(4096, 30000.0));
  const Verdict v = judge(family("mean"), in, stable("mean", in), oracle::reduce_mean(in), nullptr);
  EXPECT_FALSE(v.finding()) << v.computed << " vs " << v.exact;
  EXPECT_EQ(stable("sum", in)[0], INFINITY);
  EXPECT_EQ(oracle::reduce_sum(in).exact[0], INFINITY);
}

// bf16 logits of 1e2..1e4 carry ulps of up to 64: under CESTAC the scan's intermediate results
// differ by more than 88 between samples, and where the comparison called two of them equal,
// e^(lo - hi) overflowed in some samples only (an invalid run, on seed 32 of this regime). The
// exponent -|a - b| is <= 0 in every sample.
TEST(LowPrecisionStable, LogAddExpOfNoisyEqualValuesStaysFiniteUnderCestac) {
  const Family& f = family("logcumsumexp");
  for (const auto& regime : f.regimes) {
    if (regime.name != "large") continue;
    SeededEntropy e(32, 0);
    const Input in = regime.sample(e, DType::bf16);
    const Verdict v = pipeline::evaluate(f, f.targets[0], in, CestacRequest{});
    EXPECT_EQ(v.log.counts[static_cast<int>(cestac::Kind::nonfinite_divergence)], 0u);
    EXPECT_FALSE(v.finding()) << v.max_ratio << " " << v.digits_deficit;
  }
}

}  // namespace
}  // namespace stabfuzz
