// Help (harness/cli/help.cc): `stabfuzz --help`, `help`, `help COMMAND` and docs/cli.md, all from
// the commands' own flag descriptions.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/command.h"
#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::kCommands;
using testing::run_stabfuzz;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Cli, HelpComesFromTheFlagTable) {
  const auto r = run_stabfuzz("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--target", "--impl", "--dtype", "--runs", "--budget-s", "--seed",
                           "--out", "--case", "--list"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("(=300)"), std::string::npos) << "the default of --runs";
}

TEST(Cli, HelpListsEveryCommandWithItsSummary) {
  const auto r = run_stabfuzz("help");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* name : kCommands) {
    const auto c = cli::make_command(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_NE(r.out.find(std::string(name) + " "), std::string::npos) << name;
    EXPECT_NE(r.out.find(c->summary()), std::string::npos) << name;
  }
}

// `help COMMAND` and `COMMAND --help` print the same: that command's flags only.
TEST(Cli, HelpCommandShowsOnlyThatCommandsFlags) {
  const auto campaign = run_stabfuzz("help campaign");
  EXPECT_EQ(campaign.code, 0) << campaign.err;
  for (const char* flag : {"--targets", "--time", "--jobs", "--resume", "--shard", "--baseline"})
    EXPECT_NE(campaign.out.find(flag), std::string::npos) << flag;
  for (const char* flag : {"--keep-going", "--lr", "--junit", "--case", "--target "})
    EXPECT_EQ(campaign.out.find(flag), std::string::npos) << flag;
  for (const char* name : kCommands) {
    const std::string n = name;
    if (n == "run" || n == "help") continue;
    const auto help = run_stabfuzz("help " + n);
    const auto flag = run_stabfuzz(n + " --help");
    EXPECT_EQ(help.code, 0) << n;
    EXPECT_EQ(flag.code, 0) << n << ": " << flag.err;
    EXPECT_EQ(help.out, flag.out) << n;
    EXPECT_EQ(help.out.rfind("stabfuzz " + n + ": ", 0), 0u) << help.out;
  }
  const auto run = run_stabfuzz("help run");  // the default run: no command word
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("--target FAMILY"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(=300)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("Commands:"), std::string::npos) << run.out;
  EXPECT_EQ(run_stabfuzz("help nosuch").code, 2);
}

// docs/cli.md is what the binary's flags say: regenerate it with
// build/bin/stabfuzz help --markdown > docs/cli.md
TEST(CliDocs, MatchTheBinary) {
  const auto r = run_stabfuzz("help --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string doc = testing::slurp(std::string(STABFUZZ_SOURCE_DIR) + "/docs/cli.md");
  EXPECT_EQ(doc, r.out) << "docs/cli.md is stale: build/bin/stabfuzz help --markdown > docs/cli.md";
}

TEST(Help, CommandHelpIsSummaryUsageAndFlagsWithDefaults) {
  auto c = cli::make_command("campaign");
  const std::string h = cli::command_help(*c);
  EXPECT_EQ(h.rfind(std::string("stabfuzz campaign: ") + c->summary() + "\n\nUsage:\n", 0), 0u)
      << h;
  EXPECT_TRUE(has(h, "stabfuzz campaign [--targets all|LIST]")) << h;
  EXPECT_TRUE(has(h, "--time DURATION (=10m)")) << h;
  EXPECT_TRUE(has(h, "--help")) << h;
  auto run = cli::make_command("run");
  EXPECT_EQ(cli::command_help(*run).rfind("stabfuzz (the default run): ", 0), 0u);
}

TEST(Help, CommandListAlignsEverySummary) {
  const std::string list = cli::command_list();
  std::istringstream in(list);
  size_t column = 0, rows = 0;
  for (std::string line; std::getline(in, line);) {
    for (const auto& c : cli::all_commands()) {
      const std::string head = std::string("  ") + c->name() + " ";
      if (line.rfind(head, 0) != 0 || !has(line, c->summary())) continue;
      const size_t at = line.find(c->summary());
      if (column == 0) column = at;
      EXPECT_EQ(at, column) << line;
      ++rows;
    }
  }
  EXPECT_EQ(rows, cli::all_commands().size()) << list;
}

TEST(Help, GeneralHelpListsTheCommandsButNotTheDefaultRun) {
  const std::string h = cli::general_help();
  const std::string commands = h.substr(h.find("\nCommands:\n"));
  EXPECT_TRUE(has(commands, "\n  campaign ")) << commands;
  EXPECT_TRUE(has(commands, "\n  monitor train ")) << commands;
  EXPECT_FALSE(has(commands, "\n  run ")) << commands;
  EXPECT_TRUE(has(h, "stabfuzz COMMAND [FLAGS] [ARGS]")) << h;
}

TEST(Help, MarkdownHasARowAndASectionPerCommand) {
  const std::string md = cli::markdown();
  EXPECT_EQ(md.rfind("# stabfuzz command line\n", 0), 0u);
  for (const auto& c : cli::all_commands())
    EXPECT_TRUE(has(md, std::string("| `") + c->name() + "` | ")) << c->name();
}

}  // namespace
}  // namespace stabfuzz
