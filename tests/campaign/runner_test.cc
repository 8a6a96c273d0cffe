// The run loop: exit code 1 for an unstable reference, shrinking, budgets, input errors.
#include "harness/campaign/runner.h"

#include <gtest/gtest.h>

#include <sstream>

#include "families/all_families.h"
#include "injectors/softmax.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/op.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

campaign::RunOptions options(const std::string& family) {
  campaign::RunOptions o;
  o.family = family;
  o.runs = 40;
  o.seed = 2;
  o.max_findings = 2;
  o.shrink_evals = 200;
  o.out_dir = testing::temp_dir("runner");
  return o;
}

// The softmax family with its planted bug relabelled as a reference implementation.
Registry mislabelled_registry() {
  Family f = families::softmax_family();
  f.targets = injectors::softmax_injected_targets();  // only the planted bug
  f.targets[0].id = "softmax/cpu/naive";
  f.targets[0].kind = TargetKind::reference;
  f.targets[0].injection.reset();
  Registry r;
  r.add(std::move(f));
  return r;
}

TEST(Runner, AnUnstableReferenceFailsTheRun) {
  std::ostringstream progress;
  const auto res = campaign::run_family(mislabelled_registry(), options("softmax"), progress);
  EXPECT_EQ(res.exit_code, 1);
  ASSERT_EQ(res.results.size(), 4u);  // f64, f32, f16, bf16
  for (const auto& r : res.results) EXPECT_GE(r.findings, 1) << dtype_name(r.dtype);
  EXPECT_FALSE(testing::slurp(res.findings_path).empty());
}

// The reports are rendered from the run the recorder holds in memory: exactly what rendering the
// directory from its files gives (the recorder keeps each finding as it was written).
TEST(Runner, ReportsFromMemoryEqualReportsFromTheFiles) {
  std::ostringstream progress;
  campaign::RunOptions o = options("softmax");
  o.write_reports = true;
  const auto res = campaign::run_family(default_registry(), o, progress);
  ASSERT_EQ(res.report_paths.size(), 3u);
  std::vector<std::string> in_memory;
  for (const auto& p : res.report_paths) in_memory.push_back(reports::read_text(p));
  EXPECT_NE(in_memory[0].find("softmax/injected/no_max_subtract"), std::string::npos);
  std::ostringstream log;
  const auto again = reports::write_reports(o.out_dir, log);
  ASSERT_EQ(again, res.report_paths);
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_EQ(reports::read_text(again[i]), in_memory[i]) << again[i];
}

TEST(Runner, ShrinksOverflowToASingleLogit) {
  std::ostringstream progress;
  campaign::RunOptions o = options("softmax");
  o.impl = "softmax/injected/no_max_subtract";
  o.dtypes = {DType::f32};
  o.shrink_evals = 2000;
  const auto res = campaign::run_family(default_registry(), o, progress);
  const std::string text = testing::slurp(res.findings_path);
  const json::Value first = json::parse(text.substr(0, text.find('\n')));
  EXPECT_LE(first.at("n").as_number(), 2);  // one overflowing logit (or an underflowing pair)
  EXPECT_GE(first.at("original_n").as_number(), first.at("n").as_number());
  EXPECT_EQ(res.exit_code, 0);  // planted findings are expected
}

TEST(Runner, UnknownFamilyImplAndDtypeAreInputErrors) {
  std::ostringstream progress;
  EXPECT_THROW(campaign::run_family(default_registry(), options("nope"), progress), InputError);
  campaign::RunOptions o = options("softmax");
  o.impl = "softmax/cpu/nope";
  EXPECT_THROW(campaign::run_family(default_registry(), o, progress), InputError);
}

TEST(Runner, BudgetBoundsTheRun) {
  std::ostringstream progress;
  campaign::RunOptions o = options("softmax");
  o.runs = 0;
  o.budget_s = 0.5;
  o.impl = "softmax/cpu/stable";
  const auto res = campaign::run_family(default_registry(), o, progress);
  ASSERT_EQ(res.results.size(), 4u);
  for (const auto& r : res.results) EXPECT_GT(r.inputs, 0);
}

}  // namespace
}  // namespace stabfuzz
