// stabfuzz calibrate (harness/bench/calibrate.cc): CESTAC's digits against the oracle's, rarely
// overclaimed, within the spread the docs quote.
#include <gtest/gtest.h>

#include <string>

#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;

TEST(Calibrate, CestacDigitsAgreeWithTheOracle) {
  const auto r = run_stabfuzz("calibrate --runs 40 --seed 3 --quiet --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const json::Value j = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_GE(j.at("cases").as_number(),
            250);  // 4 implementations x 2 dtypes x 40, minus exact zeros
  // Measured: 95.2 / 95.3 / 95.9 % within one digit, 2.2 / 1.5 / 1.1 % overclaiming over 2000
  // cases at seeds 1 / 2 / 3 (`calibrate --runs 250`, one-word random stream); 40 runs here only
  // guard against a broken estimator.
  EXPECT_GE(j.at("agree_within_1").as_number(), 0.85);
  EXPECT_LE(j.at("overclaim").as_number(), 0.05);
}

// The calibration the docs quote, guarded tightly enough to catch a regression of the estimator:
// `calibrate` (300 cases per implementation and dtype) at seeds 1-5 measured 95.5 / 96.1 / 95.1 /
// 96.3 / 96.1 % agreeing within one digit and 0.8 / 0.7 / 0.6 / 0.5 / 0.5 % overclaiming (Clang,
// 2026-12-05; the GCC build: 95.8 / 95.9 / 96.2 / 95.0 / 95.6 and 0.5 / 0.7 / 0.5 / 0.5 / 0.6).
// The margins are the seed-to-seed spread: each seed within 0.6 points of the lowest agreement and
// of the highest overclaim seen, the five-seed means within 0.5 and 0.25 points.
TEST(Calibrate, FiveSeedsStayWithinTheirMeasuredSpread) {
  double agree = 0, over = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    const auto r = run_stabfuzz("calibrate --seed " + std::to_string(seed) + " --quiet --json -");
    ASSERT_EQ(r.code, 0) << r.err;
    const json::Value j = json::parse(r.out.substr(r.out.find('{')));
    const double a = j.at("agree_within_1").as_number(), o = j.at("overclaim").as_number();
    EXPECT_GE(a, 0.944) << "seed " << seed;
    EXPECT_LE(o, 0.014) << "seed " << seed;
    agree += a / 5;
    over += o / 5;
  }
  EXPECT_GE(agree, 0.952);
  EXPECT_LE(over, 0.0087);
}

}  // namespace
}  // namespace stabfuzz
