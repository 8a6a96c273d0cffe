// The command line across commands: a flag several commands share rejects the same bad values.
// Each command's own flags, help and errors: tests/cli/<command file>_test.cc.
#include "tests/support/cli.h"

#include <gtest/gtest.h>

namespace stabfuzz {
namespace {

using testing::expect_usage_error;

TEST(Cli, UnknownFailOnKindExits2) {
  expect_usage_error("--target softmax --fail-on accuracy,sloppy", "sloppy");
  expect_usage_error("fuzz --target softmax --fail-on sloppy", "sloppy");
  expect_usage_error("campaign --fail-on sloppy", "sloppy");
}

}  // namespace
}  // namespace stabfuzz
