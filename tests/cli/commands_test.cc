// The small commands (harness/cli/commands.cc): help, report, inject, replay, bench and calibrate
// refuse bad command lines with one line naming the problem, before doing any work.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;

TEST(HelpCommand, UnknownCommand) {
  EXPECT_EQ(dispatch_error({"help", "nosuch"}),
            "help: unknown command 'nosuch' (stabfuzz help lists them)");
}

TEST(ReportCommand, OneRunDirectoryOrTwoWithDiff) {
  EXPECT_EQ(dispatch_error({"report"}), "report takes one run directory (or --diff OLD NEW)");
  EXPECT_EQ(dispatch_error({"report", "a", "b"}),
            "report takes one run directory (or --diff OLD NEW)");
  EXPECT_EQ(dispatch_error({"report", "--diff", "a"}),
            "report --diff takes two run directories: OLD NEW");
}

TEST(InjectCommand, SeedOptionsFaultsAndGenerator) {
  EXPECT_EQ(dispatch_error({"inject", "--seed", "1", "--seeds", "2,3"}),
            "give --seed or --seeds, not both");
  EXPECT_EQ(dispatch_error({"inject", "--faults", "some"}),
            "--faults: registry or all, not 'some'");
  EXPECT_EQ(dispatch_error({"inject", "--generator", "gaussian"}),
            "unknown --generator 'gaussian' (regimes or uniform)");
  EXPECT_EQ(dispatch_error({"inject", "--cancel-digits", "0"}), "--cancel-digits must be in 1..15");
  EXPECT_EQ(dispatch_error({"inject", "--seeds", "1.5"}),
            "--seeds: expected whole numbers > 0 separated by commas, got '1.5'");
}

TEST(ReplayCommand, NeedsAFile) {
  EXPECT_EQ(dispatch_error({"replay"}), "replay needs at least one file or directory");
}

TEST(BenchCommand, SuiteAndDtype) {
  EXPECT_EQ(dispatch_error({"bench", "--suite", "other"}),
            "--suite: engine, user or monitor, not 'other'");
  EXPECT_EQ(dispatch_error({"bench", "--dtype", "f32"}), "--dtype needs --suite user");
  EXPECT_EQ(dispatch_error({"bench", "--suite", "monitor", "--dtype", "f32"}),
            "--dtype does not apply to --suite monitor");
  EXPECT_EQ(dispatch_error({"bench", "--suite", "monitor", "--budget-s", "5"}),
            "--budget-s does not apply to --suite monitor");
}

TEST(BenchCommand, BudgetMustNotBeNegative) {
  EXPECT_EQ(dispatch_error({"bench", "--budget-s", "-1"}), "--budget-s must not be negative");
  EXPECT_EQ(dispatch_error({"bench", "--suite", "user", "--budget-s", "-0.5"}),
            "--budget-s must not be negative");
  EXPECT_EQ(dispatch_error({"bench", "--budget-s", "nan"}), "--budget-s must be a finite number");
}

TEST(CalibrateCommand, SuiteAndItsFlags) {
  EXPECT_EQ(dispatch_error({"calibrate", "--suite", "other"}),
            "--suite: families or broad, not 'other'");
  EXPECT_EQ(dispatch_error({"calibrate", "--docs"}), "--docs needs --suite broad");
  EXPECT_EQ(dispatch_error({"calibrate", "--suite", "broad", "--variant", "stoch9"}),
            "unknown --variant 'stoch9'");
}

TEST(CalibrateCommand, RunsMustBeAtLeastOneCase) {
  const std::string want = "--runs must be between 1 and 1000000";
  EXPECT_EQ(dispatch_error({"calibrate", "--runs", "0"}), want);
  EXPECT_EQ(dispatch_error({"calibrate", "--runs", "-1"}), want);
  EXPECT_EQ(dispatch_error({"calibrate", "--blackbox", "--runs", "0"}), want);
  EXPECT_EQ(dispatch_error({"calibrate", "--suite", "broad", "--runs", "0"}), want);
  EXPECT_EQ(dispatch_error({"calibrate", "--runs", "4294967297"}), want);
}

}  // namespace
}  // namespace stabfuzz
