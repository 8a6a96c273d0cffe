// `stabfuzz campaign` and `stabfuzz merge`'s checks (harness/campaign/campaign_cli.cc): a
// --baseline must be a finished campaign or run.
#include "harness/campaign/campaign_cli.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::campaign {
namespace {

std::string baseline_error(const std::string& dir, const std::string& flag) {
  try {
    check_baseline(dir, flag);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CampaignCli, BaselineMustHoldASummary) {
  const std::string dir = testing::temp_dir("");
  EXPECT_EQ(baseline_error("", "--baseline"), "");  // none given
  EXPECT_EQ(baseline_error(dir, "--baseline"),
            "--baseline " + dir + " holds no summary.json (not a finished campaign or run)");
  EXPECT_EQ(baseline_error(dir + "/missing", "--against").rfind("--against " + dir, 0), 0u);
  std::ofstream(dir + "/summary.json") << "{}";
  EXPECT_EQ(baseline_error(dir, "--baseline"), "");
  // A file where a directory should be: an error, not an exception from the filesystem.
  EXPECT_NE(baseline_error(dir + "/summary.json/x", "--baseline").find("holds no summary.json"),
            std::string::npos);
}

}  // namespace
}  // namespace stabfuzz::campaign
