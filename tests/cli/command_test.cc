// Commands (harness/cli/command.cc): finding the command, parsing its flags, dispatching a command
// line, flags written before the command word.
#include "harness/cli/command.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "stabfuzz/errors.h"
#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::count_lines;
using testing::expect_usage_error;
using testing::kCommands;
using testing::run_stabfuzz;

// The InputError's message a call throws ("" when it throws none).
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Cli, UnknownCommandExits2) { expect_usage_error("frobnicate", "frobnicate"); }

TEST(Cli, UnknownOptionOfACommandIsOneLineAndExit2) {
  const auto r = run_stabfuzz("campaign --keep-going");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("stabfuzz: error: campaign: unknown option --keep-going", 0), 0u) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  for (const char* name : kCommands) {
    const std::string n = name;
    if (n == "run") continue;
    expect_usage_error(n + " --frobnicate", n + ": unknown option --frobnicate");
  }
  // A flag of another command is unknown too.
  expect_usage_error("report --runs 3 somewhere", "report: unknown option --runs");
  expect_usage_error("monitor infer --steps 3", "monitor infer: unknown option --steps");
}

// Old command lines that put flags before the command still reach the command.
TEST(Cli, FlagsBeforeTheCommandStillWork) {
  expect_usage_error("--junit /tmp/nowhere.xml replay", "replay needs at least one file");
  expect_usage_error("--steps 3 monitor",
                     "monitor: expected 'train', 'sweep', 'infer', 'export' or 'onnx-tests'");
}

TEST(Commands, EveryCommandOnceTheDefaultRunFirst) {
  const auto all = cli::all_commands();
  ASSERT_FALSE(all.empty());
  EXPECT_STREQ(all[0]->name(), "run");
  std::set<std::string> names;
  for (const auto& c : all) {
    EXPECT_TRUE(names.insert(c->name()).second) << c->name();
    EXPECT_STRNE(c->summary(), "") << c->name();
    EXPECT_EQ(std::string(c->usage()).rfind("stabfuzz ", 0), 0u) << c->name();
  }
  for (const char* name : kCommands) EXPECT_EQ(names.count(name), 1u) << name;
}

TEST(Commands, MakeCommandByNameOrNull) {
  for (const char* name : kCommands) {
    const auto c = cli::make_command(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_STREQ(c->name(), name);
  }
  EXPECT_EQ(cli::make_command("monitor"), nullptr);  // only with its subcommand
  EXPECT_EQ(cli::make_command("frobnicate"), nullptr);
  EXPECT_EQ(cli::make_command(""), nullptr);
}

TEST(Parse, PositionalArgumentsAndGivenFlags) {
  auto c = cli::make_command("campaign");
  const cli::Invocation inv = cli::parse(*c, {"campaign", "--runs", "5", "extra", "--", "--x"}, 1);
  EXPECT_EQ(inv.args, (std::vector<std::string>{"extra", "--x"}));
  EXPECT_TRUE(inv.given("runs"));
  EXPECT_FALSE(inv.given("time"));  // defaulted, not given
  EXPECT_FALSE(inv.given("nosuch"));
  EXPECT_EQ(inv.words.size(), 6u);
  EXPECT_FALSE(inv.vm["help"].as<bool>());
}

TEST(Parse, UnknownOptionNamesTheCommandAndItsHelp) {
  auto campaign = cli::make_command("campaign");
  EXPECT_EQ(input_error([&] {
              cli::parse(*campaign, {"campaign", "--nope"}, 1);
            }),
            "campaign: unknown option --nope (see stabfuzz help campaign)");
  auto run = cli::make_command("run");
  EXPECT_EQ(input_error([&] { cli::parse(*run, {"--nope"}, 0); }),
            "unknown option --nope (see stabfuzz --help)");
}

TEST(Parse, BadValuesAreInputErrorsOfTheCommand) {
  auto campaign = cli::make_command("campaign");
  const std::string e = input_error([&] { cli::parse(*campaign, {"campaign", "--jobs", "x"}, 1); });
  EXPECT_EQ(e.rfind("campaign: ", 0), 0u) << e;
  EXPECT_NE(e.find("jobs"), std::string::npos) << e;
  EXPECT_NE(input_error([&] { cli::parse(*campaign, {"campaign", "--jobs"}, 1); }), "");
}

TEST(Parse, AWordWithAPercentTokenIsRefused) {
  // Boost.Program_options loops forever on a word holding its own %name% token.
  auto run = cli::make_command("run");
  const std::string e = input_error([&] { cli::parse(*run, {"--target", "%value%x"}, 0); });
  EXPECT_EQ(e, "'%value%x': a command-line word may not hold a %name% token");
  // A lone % or %% is no token.
  EXPECT_EQ(input_error([&] { cli::parse(*run, {"--target", "50%"}, 0); }), "");
  EXPECT_EQ(input_error([&] { cli::parse(*run, {"--target", "a%%b"}, 0); }), "");
}

TEST(Dispatch, UnknownCommandsAndMonitorSubcommands) {
  EXPECT_EQ(input_error([] { cli::dispatch({"run"}); }),
            "unknown command 'run' (stabfuzz help lists the commands)");
  EXPECT_EQ(input_error([] { cli::dispatch({"monitor"}); }),
            "monitor: expected 'train', 'sweep', 'infer', 'export' or 'onnx-tests'");
  EXPECT_EQ(input_error([] {
              cli::dispatch({"monitor", "fly"});
            }),
            "monitor: expected 'train', 'sweep', 'infer', 'export' or 'onnx-tests', got 'fly'");
  EXPECT_EQ(input_error([] {
              cli::dispatch({"monitor", "infer", "--steps", "3"});
            }),
            "monitor infer: unknown option --steps (see stabfuzz help monitor infer)");
}

}  // namespace
}  // namespace stabfuzz
