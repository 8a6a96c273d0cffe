// The default run (harness/cli/run_command.cc): `stabfuzz --target SELECTOR ...`, its usage errors
// (exit 2, one line), what each selector runs, --fail-on's exit code, and replay lines.
#include <gtest/gtest.h>

#include <string>

#include "harness/cli/command.h"
#include "tests/support/cli.h"
#include "tests/support/require.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;
using testing::expect_usage_error;
using testing::listed;
using testing::run_stabfuzz;

TEST(Cli, UnknownTargetExits2) {
  expect_usage_error("--target nosuchop", "nosuchop");
  // The message names the kinds of selector there are.
  expect_usage_error("--target softmax,nosuchop --runs 1", "a library (onednn, onednn3, blas");
  expect_usage_error("--target softmax/nosuchlib --runs 1", "a kind (reference, injected");
}

// A library that is not built or not loaded here: one line saying why, exit 2.
TEST(Cli, AbsentLibraryExits2) {
  expect_usage_error("--target plugin --runs 1", "no plugin is loaded");
  expect_usage_error("--target softmax/plugin --runs 1", "--plugin LIB.so");
  expect_usage_error("--target gelu/blas --runs 1", "blas has no gelu implementation");
}

// Each kind of selector runs what it names: exit 0, or 1 for findings (libraries have some).
TEST(Cli, SelectorsRunLibrariesKindsAndFamiliesWithinALibrary) {
  const std::string dir = testing::temp_dir("selectors");
  struct Case {
    const char* selector;
    const char* needs;  // skipped without this implementation
    const char* impl;   // a row the table must show
  };
  for (const Case& c : {Case{"onednn", "softmax/onednn/softmax", "exp/onednn/eltwise_exp"},
                        Case{"torch", "softmax/torch/softmax", "softmax/torch/softmax"},
                        Case{"blas", "dot/blas/dot", "gemm/blas/gemm"},
                        Case{"softmax/torch", "softmax/torch/softmax", "softmax/torch/softmax"},
                        Case{"library", "dot/blas/dot", "dot/blas/dot"},
                        Case{"reference", "", "softmax/cpu/stable"},
                        Case{"softmax/injected,var/reference", "", "var/cpu/stable"}}) {
    if (*c.needs && !listed(c.needs)) continue;
    const auto r = run_stabfuzz(std::string("--target ") + c.selector +
                                " --runs 2 --seed 1 --quiet --no-reports --no-blackbox --out " +
                                dir + "/" + std::to_string(std::hash<std::string>()(c.selector)));
    EXPECT_TRUE(r.code == 0 || r.code == 1) << c.selector << ": " << r.err;
    EXPECT_NE(r.out.find("\n" + std::string(c.impl) + "  "), std::string::npos) << r.out;
  }
  // softmax/torch is libtorch's softmax alone.
  if (listed("softmax/torch/softmax")) {
    const auto r =
        run_stabfuzz("--target softmax/torch --runs 2 --quiet --no-reports --out " + dir + "/one");
    EXPECT_EQ(r.out.find("softmax/cpu/stable"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("softmax/onednn"), std::string::npos) << r.out;
  }
}

TEST(Cli, UnknownFlagExits2) { expect_usage_error("--frobnicate", "frobnicate"); }

TEST(Cli, BadFlagValueExits2) { expect_usage_error("--target softmax --runs many", "runs"); }

TEST(Cli, UnknownDtypeExits2) { expect_usage_error("--target softmax --dtype f8", "f8"); }

TEST(Cli, UnknownImplementationExits2) {
  expect_usage_error("--target softmax --impl softmax/cpu/nope", "softmax/cpu/nope");
}

TEST(Cli, NoTargetExits2) { expect_usage_error("", "--target"); }

TEST(Cli, NegativeRunsExit2) { expect_usage_error("--target softmax --runs -3", "--runs"); }

// The exit code follows --fail-on: oneDNN's f32 softmax flushing a subnormal output (case 124 of
// seed 1) is an underflow finding, reported but not failing the run unless asked to.
TEST(Cli, UnderflowIsReportedButFailsOnlyWhenAsked) {
  if (!listed("softmax/onednn/softmax"))
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "built without oneDNN");
  const std::string run =
      "--target softmax --impl softmax/onednn/softmax --dtype f32 --seed 1 --case 124 --quiet "
      "--no-reports --out ";
  const auto dflt = run_stabfuzz(run + testing::temp_dir("underflow-default"));
  EXPECT_EQ(dflt.code, 0) << dflt.out << dflt.err;
  EXPECT_NE(dflt.out.find("ok (policy: underflow 1)"), std::string::npos) << dflt.out;
  const auto strict =
      run_stabfuzz(run + testing::temp_dir("underflow-strict") + " --fail-on underflow");
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("UNSTABLE (underflow 1)"), std::string::npos) << strict.out;
}

// Replay lines name their flags in the default run's order, whatever order they are given in.
TEST(Cli, CommandLineOrdersFlagsAsBefore) {
  EXPECT_EQ(cli::command_line({{"case", "3"},
                               {"timeout-ms", "300"},
                               {"plugin", "/p/a.so"},
                               {"target", "softmax"},
                               {"impl", "softmax/cpu/stable"},
                               {"dtype", "f32"},
                               {"seed", "5"},
                               {"cancel-digits", "5"},
                               {"plugin", "/p/b.so"}}),
            "stabfuzz --plugin /p/a.so --plugin /p/b.so --target softmax --impl softmax/cpu/stable "
            "--dtype f32 --seed 5 --case 3 --cancel-digits 5 --timeout-ms 300");
}

TEST(RunCommand, BadValuesAreInputErrorsInProcess) {
  EXPECT_EQ(dispatch_error({}),
            "no --target given (a family, a library, a kind...; stabfuzz --list)");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "--runs", "0"}), "--runs must be positive");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "--case", "-5"}), "--case must not be negative");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "--budget-s", "-1"}),
            "--budget-s must not be negative");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "--cancel-digits", "16"}),
            "--cancel-digits must be in 1..15");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "--max-findings", "-2"}),
            "--max-findings must not be negative");
  EXPECT_EQ(dispatch_error({"--target", "softmax", "stray"}),
            "unknown command 'stray' (stabfuzz help lists the commands)");
}

TEST(RunCommand, CommandLineKeepsOnlyTheRunsFlags) {
  EXPECT_EQ(cli::command_line({}), "stabfuzz");
  EXPECT_EQ(cli::command_line({{"steps", "3"}, {"seed", "2"}}), "stabfuzz --seed 2");
}

}  // namespace
}  // namespace stabfuzz
