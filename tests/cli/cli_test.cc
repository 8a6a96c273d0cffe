// The command line: usage errors exit 2 with one line naming the problem; --list and --help.
#include <gtest/gtest.h>

#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::count_lines;
using testing::run_stabfuzz;

void expect_usage_error(const std::string& args, const std::string& names) {
  const auto r = run_stabfuzz(args);
  EXPECT_EQ(r.code, 2) << args;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("stabfuzz: error: ", 0), 0u) << r.err;
}

TEST(Cli, UnknownTargetExits2) { expect_usage_error("--target nosuchop", "nosuchop"); }
TEST(Cli, UnknownFlagExits2) { expect_usage_error("--frobnicate", "frobnicate"); }
TEST(Cli, BadFlagValueExits2) { expect_usage_error("--target softmax --runs many", "runs"); }
TEST(Cli, UnknownDtypeExits2) { expect_usage_error("--target softmax --dtype f8", "f8"); }
TEST(Cli, UnknownImplementationExits2) {
  expect_usage_error("--target softmax --impl softmax/cpu/nope", "softmax/cpu/nope");
}
TEST(Cli, NoTargetExits2) { expect_usage_error("", "--target"); }
TEST(Cli, UnknownCommandExits2) { expect_usage_error("frobnicate", "frobnicate"); }
TEST(Cli, NegativeRunsExit2) { expect_usage_error("--target softmax --runs -3", "--runs"); }

TEST(Cli, ListShowsFamiliesAndImplementations) {
  const auto r = run_stabfuzz("--list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("softmax/cpu/stable"), std::string::npos);
  EXPECT_NE(r.out.find("softmax/injected/no_max_subtract"), std::string::npos);
  EXPECT_NE(r.out.find("near_overflow"), std::string::npos);
}

TEST(Cli, HelpComesFromTheFlagTable) {
  const auto r = run_stabfuzz("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--target", "--impl", "--dtype", "--runs", "--budget-s", "--seed",
                           "--out", "--case", "--list"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("(=300)"), std::string::npos) << "the default of --runs";
}

}  // namespace
}  // namespace stabfuzz
