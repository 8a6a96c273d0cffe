// Evaluation (harness/pipeline/evaluate.cc): one input through a target, the oracle and the
// verdict; equal outputs; whether an input pins a planted change; shrinking a failing input.
#include "harness/pipeline/evaluate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "families/regimes.h"
#include "tests/support/toy_family.h"

namespace stabfuzz {
namespace {

using pipeline::same_outputs;

// The identity with exact answers (condition number 1, 4 ulps allowed): `toy/cpu/ref` returns its
// input; `toy/injected/big` doubles every value above 100; `toy/injected/noop` is the identity.
Family identity_family() {
  Family f = testing::toy_family("toy");
  f.oracle = [](const Input& in) {
    OracleResult o;
    o.exact = in.args.at(0).values;
    o.cond.assign(o.exact.size(), 1.0);
    return o;
  };
  f.tolerance_ulps = [](DType, size_t) { return 4.0; };
  Target big = testing::toy_target("toy/injected/big");
  big.kind = TargetKind::injected;
  big.native = [](const Input& in) {
    std::vector<double> out = in.args.at(0).values;
    for (double& v : out)
      if (v > 100) v *= 2;
    return out;
  };
  f.targets.push_back(big);
  Target noop = testing::toy_target("toy/injected/noop");
  noop.kind = TargetKind::injected;
  f.targets.push_back(noop);
  return f;
}

TEST(SameOutputs, BitForBitWithNaNEqualToNaN) {
  EXPECT_TRUE(same_outputs({}, {}));
  EXPECT_TRUE(same_outputs({1.0, NAN}, {1.0, NAN}));
  EXPECT_FALSE(same_outputs({0.0}, {-0.0}));  // the sign of zero counts
  EXPECT_FALSE(same_outputs({1.0}, {1.0, 1.0}));
  EXPECT_FALSE(same_outputs({1.0}, {std::nextafter(1.0, 2.0)}));
  EXPECT_FALSE(same_outputs({NAN}, {1.0}));
  EXPECT_TRUE(same_outputs({INFINITY, -INFINITY}, {INFINITY, -INFINITY}));
}

TEST(ReferenceTarget, TheFamilysFirstReferenceOrNone) {
  Family f = identity_family();
  std::rotate(f.targets.begin(), f.targets.begin() + 1, f.targets.end());  // injected first
  const Target* r = pipeline::reference_target(f);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->id, "toy/cpu/ref");
  f.targets.erase(std::remove_if(f.targets.begin(), f.targets.end(),
                                 [](const Target& t) { return t.kind == TargetKind::reference; }),
                  f.targets.end());
  EXPECT_EQ(pipeline::reference_target(f), nullptr);
}

TEST(Evaluate, JudgesTheNativeOutputsAgainstTheOracle) {
  const Family f = identity_family();
  const Input small = regime::row_input(DType::f64, {1.0, 2.0, 3.0});
  const Input large = regime::row_input(DType::f64, {1.0, 200.0, 3.0});
  EXPECT_FALSE(pipeline::evaluate(f, f.targets[1], small, CestacRequest{}).finding());
  const Verdict v = pipeline::evaluate(f, f.targets[1], large, CestacRequest{});
  EXPECT_TRUE(v.finding());
  EXPECT_TRUE(v.oracle_fired);
  EXPECT_FALSE(v.has_cestac);  // a target without a CESTAC entry point
  EXPECT_EQ(v.worst, 1u);
  EXPECT_FALSE(pipeline::evaluate(f, f.targets[0], large, CestacRequest{}).finding());
}

TEST(Evaluate, CallsTheCestacEntryPointWithTheRequest) {
  Family f = identity_family();
  Target& t = f.targets[0];
  CestacRequest seen;
  t.cestac = [&seen](const Input& in, const CestacRequest& req) {
    seen = req;
    CestacOutput c;
    c.mean = in.args.at(0).values;
    c.digits.assign(c.mean.size(), 2.0);  // far fewer digits than a double's 15
    c.noisy.assign(c.mean.size(), 1);
    return c;
  };
  CestacRequest req;
  req.seed = 5;
  req.stream = 77;
  const Verdict v = pipeline::evaluate(f, t, regime::row_input(DType::f64, {1.0, 2.0}), req);
  EXPECT_EQ(seen.seed, 5u);
  EXPECT_EQ(seen.stream, 77u);
  EXPECT_TRUE(v.has_cestac);
  EXPECT_TRUE(v.cestac_fired);
  EXPECT_FALSE(v.oracle_fired);
}

TEST(Decide, AgreesWithEvaluateOnTheSameOutputs) {
  const Family f = identity_family();
  const Input in = regime::row_input(DType::f64, {150.0, 2.0});
  const Verdict e = pipeline::evaluate(f, f.targets[1], in, CestacRequest{});
  const Verdict d = pipeline::decide(f, in, f.targets[1].native(in), f.oracle(in), nullptr);
  EXPECT_EQ(d.finding(), e.finding());
  EXPECT_EQ(d.max_ulp, e.max_ulp);
  EXPECT_EQ(d.kind, e.kind);
}

TEST(Decide, SubnormalInputsReadAsZeroAreUnderflow) {
  // The DAZ check decide adds to the verdict: log of a subnormal read as the smallest normal.
  Family f = identity_family();
  f.oracle = [](const Input& x) {
    OracleResult o;
    for (double e : x.args[0].values) o.exact.push_back(e == 0 ? -INFINITY : std::log(e));
    o.cond.assign(o.exact.size(), 1.0);
    return o;
  };
  const Input in = regime::row_input(DType::f32, {1e-40});
  const std::vector<double> out = {std::log(dtype_min_normal(DType::f32))};
  const Verdict v = pipeline::decide(f, in, out, f.oracle(in), nullptr);
  ASSERT_TRUE(v.finding());
  EXPECT_EQ(v.kind, FindingKind::underflow);
}

TEST(PinsPlantedChange, OnlyWhereTheReferenceIsRightAndTheOutputsDiffer) {
  const Family f = identity_family();
  const Target &ref = f.targets[0], &big = f.targets[1], &noop = f.targets[2];
  const Input large = regime::row_input(DType::f64, {200.0});
  const Input small = regime::row_input(DType::f64, {2.0});
  EXPECT_TRUE(pipeline::pins_planted_change(f, big, ref, large, CestacRequest{}));
  EXPECT_FALSE(pipeline::pins_planted_change(f, big, ref, small, CestacRequest{}));  // same outputs
  EXPECT_FALSE(pipeline::pins_planted_change(f, noop, ref, large, CestacRequest{}));
  // A reference that fails on the input too: the input pins nothing.
  EXPECT_FALSE(pipeline::pins_planted_change(f, noop, big, large, CestacRequest{}));
}

TEST(ShrinkFailing, ShrinksToASmallerInputThatStillFails) {
  const Family f = identity_family();
  const Input in = regime::row_input(DType::f64, {1.5, 2.25, 300.125, 4.5, 5.75, 6.0, 7.0, 8.0});
  const auto [small, steps] = pipeline::shrink_failing(f, f.targets[1], in, CestacRequest{}, 1000);
  EXPECT_GT(steps, 0);
  EXPECT_LT(small.total_size(), in.total_size());
  EXPECT_TRUE(pipeline::evaluate(f, f.targets[1], small, CestacRequest{}).finding());
  EXPECT_TRUE(pipeline::pins_planted_change(f, f.targets[1], f.targets[0], small, CestacRequest{}));
}

TEST(ShrinkFailing, NoBudgetNoSteps) {
  const Family f = identity_family();
  const Input in = regime::row_input(DType::f64, {1.5, 300.125, 4.5});
  const auto [same, steps] = pipeline::shrink_failing(f, f.targets[1], in, CestacRequest{}, 0);
  EXPECT_EQ(steps, 0);
  EXPECT_EQ(same.args.at(0).values, in.args.at(0).values);
}

TEST(Shrink, TakesTheFirstFailingShrinkUntilNoneFails) {
  // Integers shrinking toward 0 (RapidCheck's halving), "failing" while >= 10.
  const auto fails = [](const Input& x) { return x.args.at(0).values.at(0) >= 10; };
  const Input start = regime::row_input(DType::f64, {1000.0});
  const rc::Shrinkable<Input> sh = rc::shrinkable::shrinkRecur(start, [](const Input& x) {
    const double v = x.args.at(0).values.at(0);
    std::vector<Input> smaller;
    for (double c : {0.0, std::floor(v / 2), v - 1})
      if (c < v) smaller.push_back(regime::row_input(DType::f64, {c}));
    return rc::seq::fromContainer(smaller);
  });
  const auto [shrunk, steps] = pipeline::shrink(fails, sh, 10000);
  EXPECT_EQ(shrunk.value().args.at(0).values.at(0), 10.0);
  EXPECT_GT(steps, 0);
  const auto [limited, one_step] = pipeline::shrink(fails, sh, 2);  // 0 passes, then 500 fails
  EXPECT_EQ(limited.value().args.at(0).values.at(0), 500.0);
  EXPECT_EQ(one_step, 1);
}

}  // namespace
}  // namespace stabfuzz
