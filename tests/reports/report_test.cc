// Reports of a run directory (reports/report.cc): written from a hand-written run, with its
// corrupt and truncated findings.jsonl lines named and skipped.
#include "reports/report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "reports/run_data.h"
#include "tests/reports/run_fixture.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using testing::fixture_dir;
using testing::FixtureFinding;
using testing::FixtureResult;

TEST(RunData, CorruptAndTruncatedLinesAreReportedAndSkipped) {
  const std::string line = json::dump(testing::finding_json(FixtureFinding{}));
  std::string huge = line;  // an integer field no cast may take
  huge.replace(huge.find("\"n\":"), 4, "\"n\":1e300,\"x\":");
  const std::string extra = "{not json}\n" + std::string("{\"dtype\": \"f32\"}\n") + huge + "\n" +
                            line.substr(0, line.size() / 2);
  const std::string dir = fixture_dir(extra);
  const reports::RunData run = reports::load_run(dir);
  EXPECT_EQ(run.findings.size(), 4u);  // the four good lines survive
  ASSERT_EQ(run.problems.size(), 4u);
  EXPECT_NE(run.problems[0].find("findings.jsonl:5: skipped"), std::string::npos)
      << run.problems[0];
  EXPECT_NE(run.problems[1].find("findings.jsonl:6: skipped: missing key 'impl'"),
            std::string::npos)
      << run.problems[1];
  EXPECT_NE(run.problems[2].find("findings.jsonl:7: skipped: 'n' is not an integer"),
            std::string::npos)
      << run.problems[2];
  EXPECT_NE(run.problems[3].find("findings.jsonl:8:"), std::string::npos) << run.problems[3];
  // The reports still render, and name the skipped lines.
  std::ostringstream log;
  const auto paths = reports::write_reports(dir, log);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_NE(log.str().find("findings.jsonl:8:"), std::string::npos);
  const std::string md = testing::slurp(dir + "/report.md");
  EXPECT_NE(md.find("4 unreadable line(s) skipped"), std::string::npos);
  EXPECT_NE(md.find("case 7"), std::string::npos);
  EXPECT_NE(testing::slurp(dir + "/report.html").find("id=\"problems\""), std::string::npos);
}

}  // namespace
}  // namespace stabfuzz
