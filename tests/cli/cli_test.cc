// The command line: usage errors exit 2 with one line naming the problem; --list and --help;
// every command's own flags, help and defaults; docs/cli.md generated from them.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "harness/campaign/campaign.h"
#include "harness/cli/command.h"
#include "harness/core/duration.h"
#include "tests/support/require.h"
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

// Whether implementation `id` runs here: listed under its family, not under "Unavailable here".
bool listed(const std::string& id) {
  static const std::string list = run_stabfuzz("--list").out;
  return list.substr(0, list.find("\nUnavailable here:")).find("\n  " + id + " ") !=
         std::string::npos;
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
TEST(Cli, UnknownCommandExits2) { expect_usage_error("frobnicate", "frobnicate"); }
TEST(Cli, NegativeRunsExit2) { expect_usage_error("--target softmax --runs -3", "--runs"); }
TEST(Cli, UnknownFailOnKindExits2) {
  expect_usage_error("--target softmax --fail-on accuracy,sloppy", "sloppy");
  expect_usage_error("fuzz --target softmax --fail-on sloppy", "sloppy");
  expect_usage_error("campaign --fail-on sloppy", "sloppy");
}

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

TEST(Cli, ListShowsFamiliesAndImplementations) {
  const auto r = run_stabfuzz("--list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("softmax/cpu/stable"), std::string::npos);
  EXPECT_NE(r.out.find("softmax/injected/no_max_subtract"), std::string::npos);
  EXPECT_NE(r.out.find("near_overflow"), std::string::npos);
}

// --list groups by selector: kinds and libraries with the families each covers, in 100 columns.
TEST(Cli, ListGroupsBySelectorsIn100Columns) {
  const auto r = run_stabfuzz("--list");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* section : {"Selectors (", "\nKinds:\n", "\nLibraries (", "\nFamilies ("})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
  for (const char* line : {"\n  reference  ", "\n  injected   ", "\n  library    ", "\n  onednn  ",
                           "\n  torch   ", "\n  blas    ", "\n  plugin  "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line;
  EXPECT_NE(r.out.find("none loaded: give --plugin LIB.so"), std::string::npos);
  if (listed("softmax/onednn/softmax")) {
    const std::string onednn = r.out.substr(r.out.find("\n  onednn  "));
    const std::string covers = onednn.substr(0, onednn.find("\n  blas "));
    EXPECT_NE(covers.find("implementations in"), std::string::npos) << covers;
    EXPECT_NE(covers.find("layer_norm"), std::string::npos) << covers;
  }
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    size_t cols = 0;
    for (char c : line) cols += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(cols, 100u) << line;
  }
}

TEST(Cli, HelpComesFromTheFlagTable) {
  const auto r = run_stabfuzz("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--target", "--impl", "--dtype", "--runs", "--budget-s", "--seed",
                           "--out", "--case", "--list"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(r.out.find("(=300)"), std::string::npos) << "the default of --runs";
}

const char* const kCommands[] = {
    "run",      "help",  "report",        "inject",        "replay",        "fuzz",  "fuzz-compare",
    "campaign", "merge", "monitor train", "monitor sweep", "monitor infer", "bench", "calibrate"};

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
                     "monitor: expected 'train', 'sweep', 'infer' or 'onnx-tests'");
}

// The default --help shows is the one the campaign uses: without --time and --runs, the budget is
// --time's default; with --runs alone, there is no time limit; --time 0 alone is the default.
TEST(Cli, CampaignTimeDefaultShownIsTheOneUsed) {
  const auto r = run_stabfuzz("help campaign");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(--time DURATION \(=([^)]+)\))"))) << r.out;
  const double shown = parse_duration(m[1].str(), "--time");
  EXPECT_GT(shown, 0);
  EXPECT_DOUBLE_EQ(cli::campaign_config({"--targets", "var"}).time_s, shown);
  EXPECT_DOUBLE_EQ(cli::campaign_config({"--targets", "var", "--time", "0"}).time_s, shown);
  EXPECT_DOUBLE_EQ(cli::campaign_config({"--time", "5m"}).time_s, 300);
  const auto runs = cli::campaign_config({"--runs", "5"});
  EXPECT_EQ(runs.time_s, 0);
  EXPECT_EQ(runs.runs, 5);
  EXPECT_DOUBLE_EQ(cli::campaign_config({"--runs", "5", "--time", "2m"}).time_s, 120);
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

// docs/cli.md is what the binary's flags say: regenerate it with
// build/bin/stabfuzz help --markdown > docs/cli.md
TEST(CliDocs, MatchTheBinary) {
  const auto r = run_stabfuzz("help --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string doc = testing::slurp(std::string(STABFUZZ_SOURCE_DIR) + "/docs/cli.md");
  EXPECT_EQ(doc, r.out) << "docs/cli.md is stale: build/bin/stabfuzz help --markdown > docs/cli.md";
}

}  // namespace
}  // namespace stabfuzz
