// Black-box digits: the rounding mode around a call, digits from four rounding modes,
// nondeterminism by repetition and by thread count.
#include "harness/pipeline/blackbox.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cfenv>
#include <cfloat>
#include <cmath>
#include <stdexcept>

#include "families/regimes.h"
#include "tests/support/require.h"

namespace stabfuzz::pipeline::blackbox {
namespace {

// libgomp in the global scope, as oneDNN loads it, so that the thread count can be set.
void* const gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL);

// Outside the compiler's view: the arithmetic below runs at run time, in the caller's mode.
[[gnu::noinline]] double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

[[gnu::noinline]] double cancel(double big, double x) { return (big + x) - big; }

Input row(std::vector<double> v) { return regime::row_input(DType::f64, std::move(v)); }

Options no_threads() {
  Options o;
  o.threads = false;
  return o;
}

TEST(BlackBox, CallRunsInTheModeAndRestoresIt) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  int seen = -1;
  const Native f = [&](const Input&) {
    seen = std::fegetround();
    return std::vector<double>{1.0};
  };
  call_in_mode(f, row({1}), FE_DOWNWARD);
  EXPECT_EQ(seen, FE_DOWNWARD);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(BlackBox, ModeRestoredAfterAThrowingCall) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const Native f = [](const Input&) -> std::vector<double> {
    if (std::fegetround() != FE_TONEAREST) throw std::runtime_error("no directed rounding here");
    return {1.0};
  };
  EXPECT_THROW(call_in_mode(f, row({1}), FE_UPWARD), std::runtime_error);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  const Result r = measure(f, row({1}), no_threads());  // throws in the second mode
  EXPECT_FALSE(r.measured);
  EXPECT_NE(r.note.find("no directed rounding here"), std::string::npos) << r.note;
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  // Restores the mode the caller had, not round to nearest.
  {
    const RoundingScope outer(FE_TOWARDZERO);
    EXPECT_THROW(call_in_mode(f, row({1}), FE_UPWARD), std::runtime_error);
    EXPECT_EQ(std::fegetround(), FE_TOWARDZERO);
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

TEST(BlackBox, WellConditionedSumKeepsNearlyAllDigits) {
  std::vector<double> v;
  for (int i = 0; i < 64; ++i) v.push_back(1.0 + i / 7.0);
  Options o = no_threads();
  o.sensitive_ulps = 2.0 * 64;  // what the run would allow a 64-term sum (2 tol(n))
  const Result r =
      measure([](const Input& in) { return std::vector{sum(in.args[0].values)}; }, row(v), o);
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_GT(r.max_spread_ulps, 0) << "the directed modes changed nothing: not applied?";
  EXPECT_GE(r.min_digits, 13.5);
  EXPECT_LT(r.min_digits, dtype_max_digits(DType::f64));
  EXPECT_FALSE(r.sensitive);
  EXPECT_EQ(r.nondeterminism, Nondeterminism::none);
}

TEST(BlackBox, CatastrophicCancellationLosesTheDigitsAndIsSensitive) {
  const Native f = [](const Input& in) {
    return std::vector{cancel(in.args[0].values[0], in.args[0].values[1])};
  };
  const Result r = measure(f, row({1e16, 1.3}), no_threads());
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_LT(r.min_digits, 1.0);  // 2 to nearest and upward, 0 downward: the result is noise
  EXPECT_TRUE(r.sensitive);
  EXPECT_EQ(r.worst, 0u);
  // Without the cancellation the same function keeps its digits.
  const Result ok = measure(f, row({0.5, 1.3}), no_threads());
  EXPECT_GT(ok.min_digits, 15.0);
  EXPECT_FALSE(ok.sensitive);
}

TEST(BlackBox, UnderflowIsNotJudged) {
  const Native f = [](const Input& in) {
    return std::vector{in.args[0].values[0] * in.args[0].values[1], in.args[0].values[0]};
  };
  const Result r = measure(f, row({1e-200, 1e-200}), no_threads());  // 0 or 2^-1074
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_TRUE(std::isnan(r.digits[0]));
  EXPECT_EQ(r.min_digits, dtype_max_digits(DType::f64));  // output 1 is exact
  EXPECT_EQ(r.max_spread_ulps, 1.0);
  EXPECT_FALSE(r.sensitive);
}

TEST(BlackBox, OverflowIsNotJudged) {
  const Native f = [](const Input& in) { return std::vector{in.args[0].values[0] * 2}; };
  const Result r = measure(f, row({DBL_MAX}), no_threads());  // inf, or DBL_MAX downward
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_TRUE(std::isnan(r.digits[0]));
  EXPECT_FALSE(r.sensitive);
}

// The method's blind spot (docs/blackbox.md): code that sets its own rounding mode computes the
// same bits in every mode, so its cancellation passes for full digits.
TEST(BlackBox, CodeThatSetsItsOwnRoundingModeHidesItsCancellation) {
  const Native f = [](const Input& in) {
    const RoundingScope own(FE_TONEAREST);
    return std::vector{cancel(in.args[0].values[0], in.args[0].values[1])};
  };
  const Result r = measure(f, row({1e16, 1.3}), no_threads());
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_EQ(r.min_digits, dtype_max_digits(DType::f64));  // true digits: 0.27
  EXPECT_FALSE(r.sensitive);
}

TEST(BlackBox, ChangingResultsAreNondeterministic) {
  int calls = 0;
  const Native f = [&](const Input&) {
    ++calls;
    return std::vector<double>{1.0 + (calls > 4 ? 0x1p-52 : 0.0)};  // the repeats differ
  };
  const Result r = measure(f, row({1}), no_threads());
  ASSERT_TRUE(r.measured) << r.note;
  EXPECT_EQ(r.nondeterminism, Nondeterminism::repeat);
  EXPECT_EQ(nondeterminism_name(r.nondeterminism), "repeat");
  calls = -1000;  // the same input again: now every call agrees
  EXPECT_EQ(measure(f, row({1}), no_threads()).nondeterminism, Nondeterminism::none);
}

TEST(BlackBox, ResultsThatDependOnTheThreadCountAreNondeterministic) {
  ASSERT_NE(gomp, nullptr) << dlerror();
  auto max_threads = reinterpret_cast<int (*)()>(dlsym(gomp, "omp_get_max_threads"));
  ASSERT_NE(max_threads, nullptr);
  const Native f = [&](const Input&) { return std::vector<double>{double(max_threads())}; };
  const Result r = measure(f, row({1}), Options{});
  ASSERT_TRUE(r.measured) << r.note;
  if (!r.threads_compared) STABFUZZ_SKIP_UNLESS_REQUIRED("threads", r.threads);
  EXPECT_EQ(r.nondeterminism, Nondeterminism::threads) << r.threads;
  EXPECT_NE(r.threads.find("omp_set_num_threads"), std::string::npos) << r.threads;
  const int before = max_threads();
  (void)measure(f, row({1}), Options{});
  EXPECT_EQ(max_threads(), before) << "the thread count was not restored";
  // A function that ignores the thread count is not flagged.
  const Result same = measure([](const Input&) { return std::vector<double>{2.0}; }, row({1}), {});
  EXPECT_EQ(same.nondeterminism, Nondeterminism::none);
}

TEST(BlackBox, TotalsOfCampaignUnitsAreJoined) {
  Totals a, b;
  Result r =
      measure([](const Input& in) { return std::vector{cancel(1e16, in.args[0].values[0])}; },
              row({1.3}), no_threads());
  a.add(r);
  b.add(not_measured("not measured (isolated)"));
  r.nondeterminism = Nondeterminism::repeat;
  r.min_digits = 3;
  b.add(r);
  const json::Value j = merge_totals_json(nullptr, totals_json(a));
  const json::Value m = merge_totals_json(&j, totals_json(b));
  EXPECT_EQ(m.at("measured_inputs").as_number(), 2);
  EXPECT_EQ(m.at("min_digits").as_number(), a.min_digits);  // the lower of the two
  EXPECT_EQ(m.at("rounding_sensitive_inputs").as_number(), 2);
  EXPECT_EQ(m.at("nondeterministic_repeat").as_number(), 1);
  EXPECT_EQ(m.at("not_measured_inputs").as_number(), 1);
  EXPECT_EQ(m.at("not_measured").as_string(), "not measured (isolated)");
}

TEST(BlackBox, OutputDigitsOfZeroInfAndNaN) {
  const double full = dtype_max_digits(DType::f64);
  const double same[3] = {0.0, 0.0, 0.0};
  EXPECT_EQ(output_digits(DType::f64, 0.0, same), full);  // an exact zero
  const double tiny[3] = {1e-300, 0.0, 0.0};
  EXPECT_EQ(output_digits(DType::f64, 0.0, tiny), 0.0);  // a computational zero
  const double sub[3] = {0x1p-1074, 0.0, 0.0};           // underflow: exp(-1000) upward
  EXPECT_TRUE(std::isnan(output_digits(DType::f64, 0.0, sub)));
  const double inf[3] = {INFINITY, INFINITY, INFINITY};
  EXPECT_EQ(output_digits(DType::f64, INFINITY, inf), full);
  const double to_inf[3] = {INFINITY, 1e308, 1e308};
  EXPECT_EQ(output_digits(DType::f64, 1e308, to_inf), 0.0);
  const double max[3] = {INFINITY, DBL_MAX, DBL_MAX};  // exp(710): overflow, not judged
  EXPECT_TRUE(std::isnan(output_digits(DType::f64, INFINITY, max)));
  const double nan[3] = {NAN, 1.0, 1.0};
  EXPECT_EQ(output_digits(DType::f64, 1.0, nan), 0.0);
  const double ulp[3] = {1.0 + 0x1p-52, 1.0, 1.0};
  EXPECT_NEAR(output_digits(DType::f64, 1.0, ulp), 15.65, 0.01);
  const double f32[3] = {1.0, 1.0, 1.0 - 0x1p-10};
  EXPECT_NEAR(output_digits(DType::f32, 1.0, f32), 3.01, 0.01);
}

}  // namespace
}  // namespace stabfuzz::pipeline::blackbox
