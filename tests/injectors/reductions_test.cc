// The planted reductions (injectors/reductions.cc): their registry rows, each caught on its failing
// region and fine on a benign input, each one's error where it breaks, and logsumexp's masked_rows
// regime.
#include "injectors/reductions.h"

#include <cmath>

#include "stabfuzz/entropy.h"
#include "tests/injectors/mutant_check.h"

namespace stabfuzz::mutant_check {
namespace {

std::vector<Case> cases() {
  const DType f64 = DType::f64, f32 = DType::f32;
  return {
      {"sum/injected/narrow_accumulator", row(f64, {1, 1e-10}), row(f64, {1, 2})},
      {"mean/injected/unscaled_sum", row(f64, {1e308, 1e308}), row(f64, {1, 2})},
      {"var/injected/naive_one_pass", row(f32, {2281.5, 2281.25}), row(f32, {1, 2, 3, 4})},
      {"std/injected/sqrt_naive_var", row(f32, {2281.5, 2281.25}), row(f32, {1, 2, 3, 4})},
      {"l2_norm/injected/unscaled", row(f64, {1e200, 1e200}), row(f64, {3, 4})},
      {"logsumexp/injected/no_max_shift", row(f64, {800, 800}), row(f64, {0, 0})},
      {"logsumexp/injected/unguarded_shift", row(f64, {-INFINITY, -INFINITY}),
       row(f64, {0, -INFINITY})},
      {"cumsum/injected/narrow_running_sum", row(f64, {1, 1e-10}), row(f64, {1, 2})},
      {"logcumsumexp/injected/no_max_shift", row(f64, {800, 1}), row(f64, {0, 0})},
      {"logaddexp/injected/naive", rows2(f64, {800}, {800}), rows2(f64, {0}, {0})},
  };
}

TEST(ReductionMutants, RegisteredUnderTheirIdsWithAHandPickedCaseEach) {
  expect_registered(injectors::reduction_mutants(), cases());
}

TEST(ReductionMutants, EachIsCaughtInItsFailingRegion) { expect_caught(cases()); }

TEST(ReductionMutants, EachIsFineOnABenignInput) { expect_benign(cases()); }

TEST(ReductionMutants, NarrowAccumulatorsDropWhatTheNarrowFormatCannotHold) {
  // f64 data in an f32 accumulator: 1 + 1e-10 rounds to 1, a relative error of 1e-10 (~1e6 ulps).
  const Input small = row(DType::f64, {1, 1e-10});
  EXPECT_EQ(native("sum/injected/narrow_accumulator", small), std::vector<double>{1.0});
  EXPECT_EQ(reference("sum/injected/narrow_accumulator", small), std::vector<double>{1 + 1e-10});
  EXPECT_EQ(native("cumsum/injected/narrow_running_sum", small), (std::vector<double>{1, 1}));
  EXPECT_EQ(reference("cumsum/injected/narrow_running_sum", small),
            (std::vector<double>{1, 1 + 1e-10}));
  // f32 data in an f16 accumulator: a partial sum past 65504 is inf.
  const Input big = row(DType::f32, {60000, 10000});
  EXPECT_EQ(native("sum/injected/narrow_accumulator", big), std::vector<double>{INFINITY});
  EXPECT_EQ(reference("sum/injected/narrow_accumulator", big), std::vector<double>{70000});
  EXPECT_EQ(native("cumsum/injected/narrow_running_sum", big),
            (std::vector<double>{60000, INFINITY}));
}

TEST(ReductionMutants, UnscaledFormsOverflowOrUnderflowWhereTheResultIsRepresentable) {
  EXPECT_EQ(native("mean/injected/unscaled_sum", row(DType::f64, {1e308, 1e308})),
            std::vector<double>{INFINITY});
  EXPECT_EQ(reference("mean/injected/unscaled_sum", row(DType::f64, {1e308, 1e308})),
            std::vector<double>{1e308});
  // x^2 overflows past 1.3e154 and underflows below 1.5e-162: inf and 0 for a norm of sqrt(2) x.
  const char* l2 = "l2_norm/injected/unscaled";
  EXPECT_EQ(native(l2, row(DType::f64, {1e200, 1e200})), std::vector<double>{INFINITY});
  EXPECT_DOUBLE_EQ(reference(l2, row(DType::f64, {1e200, 1e200}))[0], std::sqrt(2.0) * 1e200);
  EXPECT_EQ(native(l2, row(DType::f64, {1e-200, 1e-200})), std::vector<double>{0.0});
  EXPECT_DOUBLE_EQ(reference(l2, row(DType::f64, {1e-200, 1e-200}))[0], std::sqrt(2.0) * 1e-200);
}

TEST(ReductionMutants, OnePassVarianceCancelsEveryDigit) {
  // [2281.5, 2281.25] in f32: sum x^2 - (sum x)^2 / n rounds to 0 where the (biased) variance is
  // 1/64.
  const Input in = row(DType::f32, {2281.5, 2281.25}, {{"unbiased", 0}});
  EXPECT_EQ(native("var/injected/naive_one_pass", in), std::vector<double>{0.0});
  EXPECT_EQ(reference("var/injected/naive_one_pass", in), std::vector<double>{0.015625});
  EXPECT_EQ(native("std/injected/sqrt_naive_var", in), std::vector<double>{0.0});
  EXPECT_EQ(reference("std/injected/sqrt_naive_var", in), std::vector<double>{0.125});
}

TEST(ReductionMutants, LogSumExpFormsWithoutAGuardedShiftGiveInfinitiesAndNan) {
  const double ln2 = std::log(2.0);
  const Input high = row(DType::f64, {800, 800}), low = row(DType::f64, {-800, -800});
  EXPECT_EQ(native("logsumexp/injected/no_max_shift", high), std::vector<double>{INFINITY});
  EXPECT_DOUBLE_EQ(reference("logsumexp/injected/no_max_shift", high)[0], 800 + ln2);
  EXPECT_EQ(native("logsumexp/injected/no_max_shift", low), std::vector<double>{-INFINITY});
  EXPECT_DOUBLE_EQ(reference("logsumexp/injected/no_max_shift", low)[0], -800 + ln2);
  EXPECT_EQ(native("logcumsumexp/injected/no_max_shift", row(DType::f64, {800, 1})),
            (std::vector<double>{INFINITY, INFINITY}));
  EXPECT_EQ(reference("logcumsumexp/injected/no_max_shift", row(DType::f64, {800, 1})),
            (std::vector<double>{800, 800}));
  EXPECT_EQ(native("logaddexp/injected/naive", rows2(DType::f64, {800}, {800})),
            std::vector<double>{INFINITY});
  EXPECT_DOUBLE_EQ(reference("logaddexp/injected/naive", rows2(DType::f64, {800}, {800}))[0],
                   800 + ln2);
  // A row of -inf (every position masked): -inf - -inf = NaN where the result is -inf.
  const Input masked = row(DType::f64, {-INFINITY, -INFINITY});
  EXPECT_TRUE(std::isnan(native("logsumexp/injected/unguarded_shift", masked).at(0)));
  EXPECT_EQ(reference("logsumexp/injected/unguarded_shift", masked),
            std::vector<double>{-INFINITY});
  // With one finite logit the shift is finite and the guard does not matter.
  expect_agrees("logsumexp/injected/unguarded_shift", row(DType::f64, {0.5, -INFINITY, -2}), 2);
}

TEST(ReductionMutants, EachAgreesWithItsStableFormOnItsBenignInput) {
  for (const auto& c : cases()) expect_agrees(c.id, *c.good, 4);
}

TEST(ReductionMutants, MaskedRowsRegimeDrawsValidRowsHalfOfThemEntirelyMinusInf) {
  const Regime r = injectors::logsumexp_masked_rows_regime();
  EXPECT_EQ(r.name, "masked_rows");
  const Family* f = default_registry().find_family("logsumexp");
  ASSERT_NE(f, nullptr);
  int all_masked = 0, some_finite = 0;
  for (uint64_t k = 0; k < 64; ++k) {
    SeededEntropy e(5, k);
    const Input in = r.sample(e, k % 2 ? DType::f32 : DType::f64);
    ASSERT_EQ(f->validate(in), std::nullopt);
    ASSERT_EQ(in.args.size(), 1u);
    bool finite = false;
    for (double x : in.args[0].values) {
      EXPECT_TRUE(std::isfinite(x) || x == -INFINITY) << x;
      finite |= std::isfinite(x);
    }
    (finite ? some_finite : all_masked) += 1;
  }
  EXPECT_GT(all_masked, 16);
  EXPECT_GT(some_finite, 16);
}

}  // namespace
}  // namespace stabfuzz::mutant_check
