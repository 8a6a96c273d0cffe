// report --diff: a planted change between two runs is found as new, fixed and changed findings,
// with the exit code CI acts on.
#include "reports/diff.h"

#include <gtest/gtest.h>

#include "tests/reports/run_fixture.h"

namespace stabfuzz {
namespace {

using testing::FixtureFinding;
using testing::FixtureResult;

FixtureFinding at(long long c, const std::string& severity, double ulp,
                  const std::string& impl = "softmax/cpu/stable") {
  FixtureFinding f;
  f.impl = impl;
  f.impl_kind = impl.find("/injected/") != std::string::npos ? "injected" : "reference";
  f.case_index = c;
  f.severity = severity;
  f.max_ulp = ulp;
  f.ratio = ulp / 4;
  return f;
}

const std::vector<FixtureResult> kOld = {
    {"softmax/cpu/stable", "reference", "f32", 100, 3, 3},
    {"softmax/injected/no_max_subtract", "injected", "f32", 100, 5, 1}};

std::string old_run() {
  return testing::write_run(testing::temp_dir("old"), kOld,
                            {at(1, "minor", 10), at(2, "major", 500), at(3, "minor", 12),
                             at(4, "critical", 1e9, "softmax/injected/no_max_subtract")});
}

TEST(Diff, FindsThePlantedNewFixedAndChangedFindings) {
  // NEW: case 1 gone (fixed), case 2 worse, case 3 unchanged, case 9 new.
  const std::string dir_new =
      testing::write_run(testing::temp_dir("new"), kOld,
                         {at(2, "critical", 5e6), at(3, "minor", 13), at(9, "major", 800),
                          at(4, "critical", 1e9, "softmax/injected/no_max_subtract")});
  const auto before = reports::load_run(old_run()), after = reports::load_run(dir_new);
  const reports::RunDiff d = reports::diff_runs(before, after);
  EXPECT_TRUE(d.same_seed);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].key, "softmax/cpu/stable f32 case 9");
  ASSERT_EQ(d.fixed.size(), 1u);
  EXPECT_EQ(d.fixed[0].key, "softmax/cpu/stable f32 case 1");
  ASSERT_EQ(d.changed.size(), 1u);  // case 3's 12 -> 13 ULP is no change
  EXPECT_EQ(d.changed[0].key, "softmax/cpu/stable f32 case 2");
  EXPECT_EQ(d.changed[0].badness, 1);
  EXPECT_EQ(d.exit_code(), 1);
  const std::string text = reports::render_diff(d, before, after);
  EXPECT_NE(text.find("1 new, 1 fixed, 1 changed"), std::string::npos) << text;
  EXPECT_NE(text.find("new:     softmax/cpu/stable f32 case 9"), std::string::npos) << text;
  const json::Value j = reports::diff_json(d, before, after);
  EXPECT_EQ(j.at("exit_code").as_number(), 1);
  EXPECT_EQ(j.at("new_findings").as_array().size(), 1u);
}

TEST(Diff, OnlyFixesAndImprovementsExitZero) {
  const std::string dir_new =
      testing::write_run(testing::temp_dir("new"), kOld,
                         {at(2, "minor", 20), at(3, "minor", 12),
                          at(4, "critical", 1e9, "softmax/injected/no_max_subtract")});
  const auto before = reports::load_run(old_run()), after = reports::load_run(dir_new);
  const reports::RunDiff d = reports::diff_runs(before, after);
  EXPECT_EQ(d.fixed.size(), 1u);
  ASSERT_EQ(d.changed.size(), 1u);
  EXPECT_EQ(d.changed[0].badness, -1);
  EXPECT_EQ(d.exit_code(), 0);
}

TEST(Diff, AFindingNotRecordedBecauseOfTheCapIsNotCalledFixed) {
  // NEW failed on 3 inputs but recorded only 2 (--max-findings): case 3's absence proves nothing.
  const std::vector<FixtureResult> capped = {
      {"softmax/cpu/stable", "reference", "f32", 100, 3, 2},
      {"softmax/injected/no_max_subtract", "injected", "f32", 100, 5, 1}};
  const std::string dir_new =
      testing::write_run(testing::temp_dir("new"), capped,
                         {at(1, "minor", 10), at(2, "major", 500),
                          at(4, "critical", 1e9, "softmax/injected/no_max_subtract")});
  const auto before = reports::load_run(old_run()), after = reports::load_run(dir_new);
  const reports::RunDiff d = reports::diff_runs(before, after);
  EXPECT_TRUE(d.fixed.empty());
  ASSERT_EQ(d.unconfirmed.size(), 1u);
  EXPECT_EQ(d.exit_code(), 0);
}

TEST(Diff, APlantedBugNoLongerDetectedIsARegression) {
  const std::vector<FixtureResult> lost = {
      {"softmax/cpu/stable", "reference", "f32", 100, 3, 3},
      {"softmax/injected/no_max_subtract", "injected", "f32", 100, 0, 0}};
  const std::string dir_new =
      testing::write_run(testing::temp_dir("new"), lost,
                         {at(1, "minor", 10), at(2, "major", 500), at(3, "minor", 12)});
  const reports::RunDiff d =
      reports::diff_runs(reports::load_run(old_run()), reports::load_run(dir_new));
  EXPECT_EQ(d.lost_detection, std::vector<std::string>{"softmax/injected/no_max_subtract f32"});
  EXPECT_EQ(d.fixed.size(), 1u);  // the planted finding is gone, and that is the regression
  EXPECT_EQ(d.exit_code(), 1);
}

TEST(Diff, DifferentSeedsMatchByRegime) {
  FixtureFinding other = at(40, "major", 600);
  other.seed = 2;
  const std::string dir_new = testing::write_run(
      testing::temp_dir("new"), kOld,
      {other, at(4, "critical", 1e9, "softmax/injected/no_max_subtract")}, "", 2);
  const reports::RunDiff d =
      reports::diff_runs(reports::load_run(old_run()), reports::load_run(dir_new));
  EXPECT_FALSE(d.same_seed);
  EXPECT_TRUE(d.added.empty());
  EXPECT_TRUE(d.fixed.empty());  // one regime, worst 500 ULP major vs 600 ULP major: the same
  EXPECT_TRUE(d.changed.empty());
  EXPECT_EQ(d.exit_code(), 0);
}

TEST(Diff, CommandLineExitCodes) {
  const std::string a = old_run();
  const std::string b = testing::write_run(
      testing::temp_dir("new"), kOld,
      {at(1, "minor", 10), at(2, "major", 500), at(3, "minor", 12), at(5, "critical", 1e9),
       at(4, "critical", 1e9, "softmax/injected/no_max_subtract")});
  auto same = testing::run_stabfuzz("report --diff " + a + " " + a);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("0 new, 0 fixed, 0 changed"), std::string::npos) << same.out;
  auto regressed =
      testing::run_stabfuzz("report --diff " + a + " " + b + " --json " + b + "/diff.json");
  EXPECT_EQ(regressed.code, 1) << regressed.out << regressed.err;
  EXPECT_NE(regressed.out.find("new:     softmax/cpu/stable f32 case 5"), std::string::npos)
      << regressed.out;
  EXPECT_EQ(json::parse(testing::slurp(b + "/diff.json")).at("new_findings").as_array().size(), 1u);
  auto bad = testing::run_stabfuzz("report --diff " + a);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "stabfuzz: error: report --diff takes two run directories: OLD NEW\n");
  auto missing = testing::run_stabfuzz("report /nonexistent/run");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("stabfuzz: error: no run directory /nonexistent/run"),
            std::string::npos);
}

}  // namespace
}  // namespace stabfuzz
