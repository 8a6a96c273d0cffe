// `stabfuzz triage` (harness/cli/triage_command.cc): one finding as a bug report, or --table over
// run directories; bad command lines are one line naming the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

// A run directory needs --finding N >= 1; a malformed findings.jsonl line is an input error naming
// the file and line (it was an internal error, exit 3).
TEST(TriageCommand, RunDirectoryFindingLines) {
  const std::string dir = testing::temp_dir("");
  EXPECT_EQ(dispatch_error({"triage", dir}),
            dir + " is a directory: give --finding N for line N of its findings.jsonl");
  EXPECT_EQ(dispatch_error({"triage", dir, "--finding", "0"}),
            "--finding must be at least 1 (a line of findings.jsonl)");
  std::ofstream(dir + "/findings.jsonl") << "{\"target\": \"softmax\"}\ngarbage\n";
  const std::string bad = dispatch_error({"triage", dir, "--finding", "2"});
  EXPECT_EQ(bad.rfind(dir + "/findings.jsonl:2: JSON parse error", 0), 0u) << bad;
  EXPECT_EQ(dispatch_error({"triage", dir, "--finding", "3"}),
            dir + "/findings.jsonl has no line 3");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stabfuzz
