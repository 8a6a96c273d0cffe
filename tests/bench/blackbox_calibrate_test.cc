// `stabfuzz calibrate --blackbox` (harness/bench/blackbox_calibrate.cc): the groups a target counts
// in and their totals on one family, the JSON rows, and the markdown table's rows and rates.
#include "harness/bench/blackbox_calibrate.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

namespace stabfuzz::calibrate {
namespace {

// entropy: a reference and an injected target, no library, no fault mutant.
const BlackBoxSummary& entropy_summary() {
  static const BlackBoxSummary s = [] {
    std::ostringstream progress;
    BlackBoxSummary r = run_blackbox(3, 1, "entropy", progress);
    EXPECT_NE(progress.str().find("entropy: "), std::string::npos) << progress.str();
    return r;
  }();
  return s;
}

std::map<std::string, BlackBoxGroup> by_name(const BlackBoxSummary& s) {
  std::map<std::string, BlackBoxGroup> m;
  for (const auto& g : s.groups) EXPECT_TRUE(m.emplace(g.name, g).second) << g.name;
  return m;
}

TEST(BlackBoxCalibrate, EachTargetCountsInAllItsKindItsFamilyAndItself) {
  const BlackBoxSummary& s = entropy_summary();
  ASSERT_FALSE(s.groups.empty());
  EXPECT_EQ(s.groups.front().name, "all");
  const auto g = by_name(s);
  std::vector<std::string> names;
  for (const auto& x : s.groups) names.push_back(x.name);
  EXPECT_EQ(names, (std::vector<std::string>{"all", "reference", "injected (formulations)",
                                             "family entropy", "impl entropy/cpu/stable f32",
                                             "impl entropy/cpu/stable f64",
                                             "impl entropy/injected/log_of_product f32",
                                             "impl entropy/injected/log_of_product f64"}));
  // 3 regime cases per target x dtype (entropy has no conditioned rows): 12 inputs in all.
  const BlackBoxGroup& all = g.at("all");
  EXPECT_EQ(all.inputs + all.not_measured, 12);
  EXPECT_EQ(g.at("family entropy").inputs, all.inputs);
  EXPECT_EQ(g.at("reference").inputs + g.at("injected (formulations)").inputs, all.inputs);
  int64_t impl_inputs = 0, impl_outputs = 0;
  for (const auto& [name, x] : g)
    if (name.rfind("impl ", 0) == 0) {
      impl_inputs += x.inputs + x.not_measured;
      impl_outputs += x.outputs;
      EXPECT_EQ(x.inputs + x.not_measured, 3) << name;
    }
  EXPECT_EQ(impl_inputs, 12);
  EXPECT_EQ(impl_outputs, all.outputs);
  for (const auto& x : s.groups) {
    SCOPED_TRACE(x.name);
    EXPECT_LE(x.agree + x.overclaim, x.outputs);
    EXPECT_LE(x.lossy, x.outputs);
    EXPECT_LE(x.lossy_agree, x.lossy);
    EXPECT_LE(x.lossy_overclaim, x.lossy);
    EXPECT_LE(x.sensitive_findings, x.oracle_findings);
    EXPECT_LE(x.oracle_findings, x.inputs);
    EXPECT_LE(x.spread_inputs, x.inputs);
  }
  // entropy's output is one number per input, compared where it is finite and nonzero; the stable
  // target errs on none of its regime cases.
  EXPECT_LE(all.outputs, all.inputs);
  EXPECT_GT(all.outputs, 0);
  EXPECT_EQ(g.at("reference").oracle_findings, 0);
  EXPECT_GT(all.agree, 0);
}

TEST(BlackBoxCalibrate, JsonHasARowPerGroupWithRatesAsFractions) {
  const BlackBoxSummary& s = entropy_summary();
  const json::Value j = to_json(s);
  const auto& rows = j.at("groups").as_array();
  ASSERT_EQ(rows.size(), s.groups.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const BlackBoxGroup& g = s.groups[i];
    EXPECT_EQ(rows[i].at("group").as_string(), g.name);
    EXPECT_EQ(rows[i].at("inputs").as_number(), static_cast<double>(g.inputs));
    EXPECT_EQ(rows[i].at("outputs").as_number(), static_cast<double>(g.outputs));
    const double agree = rows[i].at("agree_within_1").as_number();
    EXPECT_DOUBLE_EQ(agree, g.outputs ? double(g.agree) / double(g.outputs) : 0.0) << g.name;
  }
  EXPECT_GE(j.at("seconds").as_number(), 0);
}

TEST(BlackBoxCalibrate, MarkdownTableSelectsTheGroupsAndGivesPercentages) {
  const BlackBoxGroup all{.name = "all",
                          .inputs = 4,
                          .spread_inputs = 1,
                          .sensitive_inputs = 2,
                          .oracle_findings = 3,
                          .sensitive_findings = 1,
                          .outputs = 8,
                          .agree = 6,
                          .overclaim = 1,
                          .lossy = 2,
                          .lossy_agree = 1};
  BlackBoxGroup family = all, impl = all, lib = all;
  family.name = "family exp";
  impl.name = "impl exp/cpu/stable f64";
  lib.name = "lib-impl exp/torch/exp f32";
  BlackBoxSummary s;
  s.groups = {all, family, impl, lib};
  const std::string top = markdown_table(s, "");
  EXPECT_EQ(top.rfind("| group | inputs | spread |", 0), 0u) << top;
  EXPECT_NE(top.find("| all | 4 | 25.0 % | 50.0 % | 3 (1) | 8 | 75.0 % | 12.5 % | 2 | 50.0 % | "
                     "0.0 % |\n"),
            std::string::npos)
      << top;
  EXPECT_EQ(top.find("family exp"), std::string::npos);
  EXPECT_EQ(top.find("impl exp"), std::string::npos);
  const std::string families = markdown_table(s, "family ");
  EXPECT_NE(families.find("| family exp | 4 |"), std::string::npos) << families;
  EXPECT_EQ(families.find("| all |"), std::string::npos);
  const std::string libs = markdown_table(s, "lib-impl ");
  EXPECT_NE(libs.find("| lib-impl exp/torch/exp f32 |"), std::string::npos);
  EXPECT_EQ(libs.find("| impl exp/cpu/stable f64 |"), std::string::npos);
  const BlackBoxGroup empty{.name = "all"};
  EXPECT_NE(markdown_table(BlackBoxSummary{{empty}, 0}, "").find("| all | 0 | 0.0 % |"),
            std::string::npos);  // no division by zero
}

}  // namespace
}  // namespace stabfuzz::calibrate
