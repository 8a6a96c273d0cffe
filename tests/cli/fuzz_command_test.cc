// `stabfuzz fuzz` and `fuzz-compare` (harness/cli/fuzz_command.cc): their flags read into the fuzz
// engine's options; bad command lines are one line, before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;

TEST(FuzzCommand, NeedsATarget) {
  EXPECT_EQ(dispatch_error({"fuzz", "--runs", "5"}),
            "fuzz needs --target FAMILY or FAMILY/LIBRARY (stabfuzz --list shows them)");
}

TEST(FuzzCommand, BadValuesNameTheirFlag) {
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "--runs", "0"}),
            "--runs must be positive");
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "--feedback", "speed"}),
            "unknown --feedback 'speed' (error or coverage)");
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "--generator", "gaussian"}),
            "unknown --generator 'gaussian' (regimes or uniform)");
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "--dtype", "f8"}),
            "unknown --dtype 'f8' (f64, f32, f16, bf16 or all)");
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "--max-findings", "-1"}),
            "--max-findings must not be negative");
  const std::string t = dispatch_error({"fuzz", "--target", "softmax", "--time", "5x"});
  EXPECT_EQ(t, "--time '5x' is not a duration (90 or 90s, 5m, 2h, 1h30m)");
}

TEST(FuzzCommand, PositionalWordsOnlyAfterTheDoubleDash) {
  EXPECT_EQ(dispatch_error({"fuzz", "--target", "softmax", "extra"}),
            "fuzz takes no arguments besides flags; libFuzzer flags go after `--`");
}

TEST(FuzzCompareCommand, RunsMustBePositive) {
  EXPECT_EQ(dispatch_error({"fuzz-compare", "--runs", "0"}), "--runs must be positive");
  EXPECT_EQ(dispatch_error({"fuzz-compare", "--time", "1h30"}),
            "--time '1h30' is not a duration (90 or 90s, 5m, 2h, 1h30m)");
}

}  // namespace
}  // namespace stabfuzz
