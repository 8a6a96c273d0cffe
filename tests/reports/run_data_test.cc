// A run directory read back (reports/run_data.cc): every finding and the summary, or an InputError.
#include "reports/run_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "stabfuzz/errors.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using testing::fixture_dir;

TEST(RunData, LoadsEveryFindingAndTheSummary) {
  const reports::RunData run = reports::load_run(fixture_dir());
  EXPECT_EQ(run.target, "softmax");
  EXPECT_EQ(run.seed, 1u);
  ASSERT_EQ(run.results.size(), 4u);
  ASSERT_EQ(run.findings.size(), 4u);
  EXPECT_TRUE(run.problems.empty());
  const reports::Finding& f = run.findings[1];
  EXPECT_EQ(f.line, 2);
  EXPECT_EQ(f.case_index, 7);
  EXPECT_EQ(f.detectors, (std::vector<std::string>{"oracle", "cestac"}));
  EXPECT_EQ(f.magnitude, 100.0);  // max |x| over the input, parsed from hex floats
  EXPECT_EQ(f.input.size(), 3u);
  EXPECT_DOUBLE_EQ(f.digits_lost(), 6.5);
  EXPECT_TRUE(std::isinf(run.findings[2].max_ulp));  // "inf" strings read back as numbers
  EXPECT_FALSE(run.findings[3].has_cestac);
  EXPECT_EQ(run.impls(),
            (std::vector<std::string>{"softmax/cpu/stable", "softmax/injected/no_max_subtract"}));
}

TEST(RunData, MissingOrMalformedRunIsAnInputError) {
  EXPECT_THROW(reports::load_run("/nonexistent/stabfuzz-run"), InputError);
  const std::string dir = testing::temp_dir("");
  EXPECT_THROW(reports::load_run(dir), InputError);  // no summary.json
  std::ofstream(dir + "/summary.json") << "{\"target\": \"softmax\", \"results\": [";
  EXPECT_THROW(reports::load_run(dir), InputError);
}

}  // namespace
}  // namespace stabfuzz
