// `stabfuzz triage` (harness/cli/triage_command.cc): one finding as a bug report, or --table over
// run directories; bad command lines are one line naming the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;

TEST(TriageCommand, NeedsOneFileOrRunDirectory) {
  const std::string e = "triage needs one corpus file or run directory (see stabfuzz help triage)";
  EXPECT_EQ(dispatch_error({"triage"}), e);
  EXPECT_EQ(dispatch_error({"triage", "a", "b"}), e);
}

TEST(TriageCommand, TableNeedsRunDirectoriesWithSummaries) {
  EXPECT_EQ(dispatch_error({"triage", "--table"}), "triage --table needs run directories");
  const std::string dir = testing::temp_dir("");  // exists, empty
  EXPECT_EQ(dispatch_error({"triage", "--table", dir}),
            dir + ": no summary.json in it or in its folders");
  EXPECT_EQ(dispatch_error({"triage", "--table", dir + "/missing"}),
            dir + "/missing: no summary.json in it or in its folders");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stabfuzz
