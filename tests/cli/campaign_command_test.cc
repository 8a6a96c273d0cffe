// `stabfuzz campaign` and `merge` (harness/cli/campaign_command.cc): their flags read into the
// campaign's configuration (budget, jobs, shard, the flags every unit gets), bad command lines.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "harness/campaign/campaign.h"
#include "harness/cli/command.h"
#include "harness/core/duration.h"
#include "tests/support/cli.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;
using testing::run_stabfuzz;
using testing::temp_dir;

std::string config_error(const std::vector<std::string>& words) {
  try {
    cli::campaign_config(words);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
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

TEST(CampaignCli, BadInputIsOneLineAndExit2) {
  const std::string dir = temp_dir("bad");
  for (const std::string& args :
       {"campaign --targets nope --runs 5 --out " + dir,
        "campaign --shard 3/2 --runs 5 --out " + dir, "campaign --time 5x --out " + dir,
        "campaign --resume --out " + dir + "/none",
        "campaign --targets var --runs 5 --baseline " + dir + "/missing --out " + dir,
        "merge --out " + dir, "merge " + dir + "/missing --out " + dir + "/m"}) {
    const auto o = run_stabfuzz(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_EQ(testing::count_lines(o.err), 1) << args << "\n" << o.err;
    EXPECT_NE(o.err.find("stabfuzz: error: "), std::string::npos) << o.err;
  }
}

TEST(CampaignCommand, UnitFlagsAreTheDetectorSettingsOtherThanTheirDefaults) {
  EXPECT_TRUE(cli::campaign_config({"--runs", "5"}).unit_flags.empty());
  const auto c = cli::campaign_config({"--runs", "5", "--cancel-digits", "5", "--max-findings", "3",
                                       "--shrink-evals", "10", "--fail-on", "nan,accuracy",
                                       "--timeout-ms", "250"});
  EXPECT_EQ(c.unit_flags, (std::vector<std::string>{"--timeout-ms", "250", "--cancel-digits", "5",
                                                    "--max-findings", "3", "--shrink-evals", "10",
                                                    "--fail-on", "accuracy,nan"}));
  const auto p = cli::campaign_config({"--runs", "5", "--plugin", "lib/../p.so"});
  ASSERT_EQ(p.unit_flags.size(), 2u);
  EXPECT_EQ(p.unit_flags[0], "--plugin");
  EXPECT_EQ(p.unit_flags[1].front(), '/');  // absolute: units may run elsewhere
  EXPECT_EQ(p.unit_flags[1].find(".."), std::string::npos) << p.unit_flags[1];
}

TEST(CampaignCommand, JobsSeedShardAndOut) {
  const auto c = cli::campaign_config(
      {"--runs", "5", "--jobs", "3", "--seed", "42", "--shard", "2/3", "--out", "/tmp/x"});
  EXPECT_EQ(c.jobs, 3);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.out_dir, "/tmp/x");
  EXPECT_GE(cli::campaign_config({"--runs", "5"}).jobs, 1);  // 0: one per CPU
  const auto d = cli::campaign_config({"--runs", "5", "--seed", "7"});
  EXPECT_EQ(d.out_dir.rfind("runs/campaign-", 0), 0u) << d.out_dir;
  EXPECT_EQ(d.out_dir.substr(d.out_dir.size() - 3), "-s7") << d.out_dir;
  EXPECT_TRUE(d.write_reports);
  EXPECT_FALSE(cli::campaign_config({"--runs", "5", "--no-reports"}).write_reports);
}

TEST(CampaignCommand, BadConfigurations) {
  EXPECT_EQ(config_error({"--runs", "0"}), "--runs must be positive");
  EXPECT_EQ(config_error({"--jobs", "-1"}), "--jobs must not be negative");
  EXPECT_EQ(config_error({"--jobs", "513"}),
            "--jobs 513 is more workers than make sense (at most 512)");
  EXPECT_EQ(config_error({"--resume"}), "--resume needs --out DIR, the campaign to continue");
  EXPECT_EQ(config_error({"stray"}),
            "campaign takes no arguments besides flags (see stabfuzz help campaign)");
  EXPECT_EQ(config_error({"--cancel-digits", "0"}), "--cancel-digits must be in 1..15");
  EXPECT_NE(config_error({"--shard", "3/2"}), "");
}

}  // namespace
}  // namespace stabfuzz
