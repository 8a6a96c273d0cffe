// The verdict rule: error against tolerance x conditioning, non-finite outputs, CESTAC digits.
#include "harness/pipeline/verdict.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "families/regimes.h"

namespace stabfuzz {
namespace {

// A family stub with a fixed tolerance, enough to exercise judge() in isolation.
Family test_family(double tol_ulps) {
  Family f;
  f.name = "unit";
  f.tolerance_ulps = [tol_ulps](DType, size_t) { return tol_ulps; };
  f.cestac_margin_digits = 1.0;
  f.finite_outputs = true;
  return f;
}

OracleResult exact(std::vector<double> values, std::vector<double> cond) {
  OracleResult o;
  o.exact = std::move(values);
  o.cond = std::move(cond);
  return o;
}

TEST(Verdict, ErrorWithinToleranceIsNoFinding) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f64, {1.0});
  const Verdict v = judge(f, in, {std::nextafter(1.0, 2.0)}, exact({1.0}, {1.0}), nullptr);
  EXPECT_EQ(v.max_ulp, 1.0);
  EXPECT_FALSE(v.finding());
}

TEST(Verdict, ConditioningExplainsLargeErrors) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f64, {1.0});
  double off = 1.0;
  for (int i = 0; i < 100; ++i) off = std::nextafter(off, 2.0);
  // 100 ulps: a finding at cond 1, explained at cond 1000 (tolerance 4000 ulps).
  EXPECT_TRUE(judge(f, in, {off}, exact({1.0}, {1.0}), nullptr).oracle_fired);
  const Verdict v = judge(f, in, {off}, exact({1.0}, {1000.0}), nullptr);
  EXPECT_FALSE(v.oracle_fired);
  EXPECT_NEAR(v.max_ratio, 100.0 / 4000.0, 1e-12);
}

TEST(Verdict, NonFiniteOutputOfAFiniteResultIsCritical) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f32, {1.0, 2.0});
  const Verdict v = judge(f, in, {0.5, NAN}, exact({0.5, 0.5}, {1, 1}), nullptr);
  EXPECT_TRUE(v.oracle_fired);
  EXPECT_TRUE(v.nonfinite);
  EXPECT_EQ(v.worst, 1u);
  EXPECT_EQ(v.severity(), Severity::critical);
}

TEST(Verdict, UndecidableOracleGivesNoOracleVerdict) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f64, {1.0});
  OracleResult o;
  o.decidable = false;
  const Verdict v = judge(f, in, {123.0}, o, nullptr);
  EXPECT_TRUE(v.undecidable);
  EXPECT_FALSE(v.oracle_fired);
}

CestacOutput cestac_output(double mean, double digits, bool noisy) {
  CestacOutput c;
  c.mean = {mean};
  c.digits = {digits};
  c.noisy = {static_cast<uint8_t>(noisy)};
  return c;
}

TEST(Verdict, CestacFiresOnlyBelowTheConditionedExpectation) {
  const Family f = test_family(10);  // expected f64 digits at cond 1: 15.95 - 1 = 14.95
  const Input in = regime::row_input(DType::f64, {1.0});
  const OracleResult o = exact({1.0}, {1.0});
  const CestacOutput good = cestac_output(1.0, 14.5, true);
  EXPECT_FALSE(judge(f, in, {1.0}, o, &good).cestac_fired);
  const CestacOutput bad = cestac_output(1.0, 9.0, true);
  const Verdict v = judge(f, in, {1.0}, o, &bad);
  EXPECT_TRUE(v.cestac_fired);
  EXPECT_FALSE(v.oracle_fired);
  EXPECT_NEAR(v.expected_digits, 14.95, 0.01);
  // The same 9 digits are what cond 1e5 predicts: no finding.
  const OracleResult ill = exact({1.0}, {1e5});
  EXPECT_FALSE(judge(f, in, {1.0}, ill, &bad).cestac_fired);
}

TEST(Verdict, SamplesThatAgreeAreJudgedByTheOracleAlone) {
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f64, {1.0});
  const CestacOutput quiet = cestac_output(0.0, 0.0, false);  // all samples exactly 0
  EXPECT_FALSE(judge(f, in, {0.0}, exact({0.0}, {1.0}), &quiet).cestac_fired);
}

TEST(Verdict, AnOutputThatOverflowsExactlyIsNotACestacFinding) {
  // dot([4], [16384]) in f16: the exact 65536 rounds to inf, and inf is the right answer.
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f16, {4.0});
  const CestacOutput inf_out = cestac_output(INFINITY, 0.0, true);
  const Verdict v = judge(f, in, {INFINITY}, exact({INFINITY}, {1.0}), &inf_out);
  EXPECT_FALSE(v.cestac_fired);
  EXPECT_FALSE(v.finding());
  // The same infinite samples where the exact result is finite stay a finding.
  EXPECT_TRUE(judge(f, in, {INFINITY}, exact({60000.0}, {1.0}), &inf_out).cestac_fired);
  // And the wrong infinity is one too.
  const CestacOutput neg = cestac_output(-INFINITY, 0.0, true);
  EXPECT_TRUE(judge(f, in, {-INFINITY}, exact({INFINITY}, {1.0}), &neg).cestac_fired);
}

TEST(Verdict, SelfValidationFailureInvalidatesTheRun) {
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f64, {1.0});
  CestacOutput c = cestac_output(1.0, 15.0, true);
  c.log.counts[static_cast<int>(cestac::Kind::unstable_division)] = 1;
  const Verdict v = judge(f, in, {1.0}, exact({1.0}, {1.0}), &c);
  EXPECT_TRUE(v.self_validation_failed);
  EXPECT_TRUE(v.cestac_fired);
  EXPECT_EQ(v.detectors(), "cestac");
}

// An undecidable oracle means an exact value at 0 or a hair from a rounding boundary, with
// unbounded conditioning: CESTAC's digits are not judged then, its invalid operations still are.
TEST(Verdict, UndecidableOracleLeavesCestacDigitsUnjudged) {
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f64, {1.0});
  OracleResult o;
  o.decidable = false;
  const CestacOutput few = cestac_output(1e-17, 2.0, true);
  EXPECT_FALSE(judge(f, in, {0.0}, o, &few).cestac_fired);
  CestacOutput invalid = few;
  invalid.log.counts[static_cast<int>(cestac::Kind::unstable_division)] = 1;
  EXPECT_TRUE(judge(f, in, {0.0}, o, &invalid).cestac_fired);
  const CestacOutput nan_out = cestac_output(NAN, 0.0, true);  // finite_outputs family
  EXPECT_TRUE(judge(f, in, {NAN}, o, &nan_out).cestac_fired);
}

// Samples that disagree on overflow at an output whose exact value overflows (a prefix within an
// ULP of the threshold) show the exact value's rounding; the same divergence counts where the
// exact output is finite, or where no output shows it.
TEST(Verdict, OverflowDivergenceExplainedByAnOverflowingOutput) {
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f32, {1.0, 2.0});
  CestacOutput c;
  c.mean = {1.0, -INFINITY};
  c.digits = {7.0, 0.0};
  c.noisy = {0, 1};
  c.log.counts[static_cast<int>(cestac::Kind::nonfinite_divergence)] = 1;
  EXPECT_FALSE(judge(f, in, {1.0, -INFINITY}, exact({1.0, -INFINITY}, {1, 1}), &c).cestac_fired);
  EXPECT_TRUE(judge(f, in, {1.0, -INFINITY}, exact({1.0, -3e38}, {1, 1}), &c).cestac_fired);
  CestacOutput hidden = c;  // every output finite: the divergence lies in an intermediate
  hidden.mean = {1.0, 2.0};
  hidden.digits = {7.0, 7.0};
  hidden.noisy = {0, 0};
  EXPECT_TRUE(judge(f, in, {1.0, 2.0}, exact({1.0, 2.0}, {1, 1}), &hidden).cestac_fired);
}

// Finding kinds: decided from the computed and exact values, not from the exact value alone.
TEST(VerdictKind, OutputsFlushedBelowTheNormalRangeAreUnderflow) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f32, {1.0, -100.0});
  const double sub = 6.0546e-39;  // an f32 subnormal, returned as 0
  const Verdict v = judge(f, in, {1.0, 0.0}, exact({1.0, sub}, {1, 1}), nullptr);
  ASSERT_TRUE(v.finding());
  EXPECT_EQ(v.kind, FindingKind::underflow);
  EXPECT_EQ(v.kind_detail, "outputs below the normal range flushed to zero");
}

TEST(VerdictKind, AnExactZeroComputedAsANormalValueIsAccuracy) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f32, {1.0});
  const Verdict v = judge(f, in, {-1.43e-6}, exact({0.0}, {1}), nullptr);
  ASSERT_TRUE(v.finding());
  EXPECT_EQ(v.kind, FindingKind::accuracy);
}

TEST(VerdictKind, AFailingNormalOutputBesideAFlushedOneIsAccuracy) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f32, {1.0, 2.0});
  const Verdict v = judge(f, in, {0.75, 0.0}, exact({0.5, 1e-40}, {1, 1}), nullptr);
  EXPECT_EQ(v.kind, FindingKind::accuracy);
}

TEST(VerdictKind, NanAndInfinityOfFiniteResults) {
  const Family f = test_family(4);
  const Input in = regime::row_input(DType::f64, {1.0, 2.0});
  EXPECT_EQ(judge(f, in, {NAN, 0.5}, exact({0.0, 0.5}, {1, 1}), nullptr).kind, FindingKind::nan);
  EXPECT_EQ(judge(f, in, {-INFINITY, 0.5}, exact({3.0, 0.5}, {1, 1}), nullptr).kind,
            FindingKind::overflow);
  // NaN outranks overflow in one verdict.
  EXPECT_EQ(judge(f, in, {INFINITY, NAN}, exact({3.0, 0.5}, {1, 1}), nullptr).kind,
            FindingKind::nan);
}

TEST(VerdictKind, CestacDigitLossOnAnUnderflowedOutputIsAccuracy) {
  const Family f = test_family(10);
  const Input in = regime::row_input(DType::f64, {1.0});
  const double sub = 1e-310;
  const Verdict v = judge(f, in, {0.0}, exact({sub}, {1}), nullptr);
  ASSERT_EQ(v.kind, FindingKind::underflow);
  CestacOutput c = cestac_output(1.0, 2.0, true);
  const Verdict w = judge(f, in, {1.0}, exact({1.0}, {1}), &c);
  ASSERT_TRUE(w.cestac_fired);
  EXPECT_EQ(w.kind, FindingKind::accuracy);
}

// A family whose oracle is the identity: DAZ policies read subnormal inputs as 0 or min normal.
Family identity_family() {
  Family f = test_family(2);
  f.oracle = [](const Input& in) { return exact(in.args[0].values, {1, 1}); };
  return f;
}

TEST(VerdictKind, SubnormalInputsReadAsZeroAreUnderflow) {
  const Family f = identity_family();
  const double sub = 1e-40;  // f32 subnormal input, read as 0 by the implementation
  const Input in = regime::row_input(DType::f32, {sub, 2.0});
  Verdict v = judge(f, in, {0.0, 2.0}, f.oracle(in), nullptr);
  ASSERT_EQ(v.kind, FindingKind::underflow);  // the output itself is below the normal range
  // log-like: the output is normal, but it is the exact answer for the input read as min normal.
  Family lg = test_family(2);
  lg.oracle = [](const Input& x) {
    std::vector<double> out;
    for (double e : x.args[0].values) out.push_back(e == 0 ? -INFINITY : std::log(e));
    return exact(out, {1});
  };
  const Input one = regime::row_input(DType::f32, {sub});
  const std::vector<double> computed = {std::log(dtype_min_normal(DType::f32))};
  Verdict w = judge(lg, one, computed, lg.oracle(one), nullptr);
  ASSERT_EQ(w.kind, FindingKind::accuracy);
  classify_subnormal_inputs(w, lg, one, computed);
  EXPECT_EQ(w.kind, FindingKind::underflow);
  EXPECT_EQ(w.kind_detail, "subnormal inputs read as the smallest normal");
  // A wrong answer that no reading of the subnormal input explains stays accuracy.
  Verdict u = judge(lg, one, {-50.0}, lg.oracle(one), nullptr);
  classify_subnormal_inputs(u, lg, one, {-50.0});
  EXPECT_EQ(u.kind, FindingKind::accuracy);
}

TEST(VerdictKind, InfAtTheOverflowThresholdIsALastPlaceError) {
  const Family f = test_family(2);
  const Input in = regime::row_input(DType::f64, {709.78});
  // The exact result rounds to the largest finite double: inf is the next step, 1 ulp away.
  EXPECT_FALSE(judge(f, in, {INFINITY}, exact({DBL_MAX}, {1}), nullptr).finding());
  const Verdict v = judge(f, in, {INFINITY}, exact({1e308}, {1}), nullptr);
  EXPECT_TRUE(v.nonfinite);
  EXPECT_EQ(v.kind, FindingKind::overflow);
}

}  // namespace
}  // namespace stabfuzz
