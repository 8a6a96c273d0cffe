// The shared evaluation loop: which cases it runs in which order, with which CESTAC stream, and
// when it stops.
#include "harness/campaign/cases.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "families/all_families.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"

namespace stabfuzz {
namespace {

using campaign::CasePlan;
using campaign::CaseRun;

struct Seen {
  int64_t k, index;
  DType dtype;
  uint64_t stream;
  Input input;
  bool finding;
};

std::vector<Seen> run(const Family& f, const Target& t, const CasePlan& plan, int64_t stop_after) {
  std::vector<Seen> seen;
  campaign::run_cases(f, t, plan, [&](const CaseRun& c) {
    seen.push_back({c.k, c.index, c.dtype, c.request.stream, c.input, c.verdict.finding()});
    EXPECT_EQ(&c.verdict, &c.outcome.verdict);
    return static_cast<int64_t>(seen.size()) < stop_after;
  });
  return seen;
}

const Target& stable_softmax(const Family& f) {
  const Target* t = pipeline::reference_target(f);
  if (!t) throw std::logic_error("softmax has no reference target");
  return *t;
}

TEST(Cases, DtypesTakeTurnsAndEachCaseIsTheGeneratorsInput) {
  const Family f = families::softmax_family();
  const Target& t = stable_softmax(f);
  CasePlan plan;
  plan.dtypes = {DType::f64, DType::f32};
  plan.seed = 7;
  plan.last = 6;
  const auto seen = run(f, t, plan, 100);
  ASSERT_EQ(seen.size(), 6u);
  for (int64_t k = 0; k < 6; ++k) {
    const Seen& s = seen[static_cast<size_t>(k)];
    EXPECT_EQ(s.k, k);
    EXPECT_EQ(s.dtype, k % 2 ? DType::f32 : DType::f64);
    EXPECT_EQ(s.index, k / 2);
    EXPECT_EQ(s.input.total_size(), pipeline::make_case(f, s.dtype, 7, s.index).total_size());
    EXPECT_EQ(s.input.args[0].values, pipeline::make_case(f, s.dtype, 7, s.index).args[0].values);
    // The reference softmax is stable on its own regimes.
    EXPECT_FALSE(s.finding) << "case " << k;
    // One stream per target and dtype: what replay uses.
    EXPECT_EQ(s.stream, campaign::target_request(t, s.dtype, 7, plan.cestac).stream);
  }
}

TEST(Cases, TheRunnersPlanHasAStreamPerCaseAndStartsAtFirst) {
  const Family f = families::softmax_family();
  const Target& t = stable_softmax(f);
  CasePlan plan;
  plan.dtypes = {DType::f32};
  plan.seed = 3;
  plan.first = 5;
  plan.last = 8;
  plan.stream_per_case = true;
  const auto seen = run(f, t, plan, 100);
  ASSERT_EQ(seen.size(), 3u);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].index, 5 + static_cast<int64_t>(i));
    EXPECT_EQ(seen[i].stream,
              pipeline::cestac_request(t, DType::f32, 3, seen[i].index, plan.cestac).stream);
  }
  EXPECT_NE(seen[0].stream, seen[1].stream);
}

TEST(Cases, StopsWhenTheVisitorSaysSoOrTheBudgetIsSpent) {
  const Family f = families::softmax_family();
  const Target& t = stable_softmax(f);
  CasePlan plan;
  plan.dtypes = {DType::f64};
  EXPECT_EQ(run(f, t, plan, 4).size(), 4u);
  // A spent budget still runs the first case, and only it.
  plan.budget_s = 0;
  EXPECT_EQ(run(f, t, plan, 100).size(), 1u);
  plan.budget_s = -1;
  plan.first = 9;
  const auto one = run(f, t, plan, 100);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].k, 9);
}

TEST(Cases, ThePlantedBugFailsOnTheSameCasesAsEvaluateSays) {
  const Family& f = *default_registry().find_family("softmax");
  const Target* naive = nullptr;
  for (const auto& t : f.targets)
    if (t.kind == TargetKind::injected && !naive) naive = &t;
  ASSERT_NE(naive, nullptr);
  CasePlan plan;
  plan.dtypes = naive->dtypes;
  plan.seed = 1;
  plan.last = 40;
  int64_t findings = 0;
  campaign::run_cases(f, *naive, plan, [&](const CaseRun& c) {
    const Verdict v = pipeline::evaluate(f, *naive, c.input, c.request);
    EXPECT_EQ(v.finding(), c.verdict.finding()) << "case " << c.k;
    findings += c.verdict.finding();
    return true;
  });
  EXPECT_GT(findings, 0);
}

TEST(Cases, NoDtypeIsAHarnessError) {
  const Family f = families::softmax_family();
  CasePlan plan;
  EXPECT_THROW(campaign::run_cases(f, stable_softmax(f), plan, [](const CaseRun&) { return true; }),
               std::logic_error);
}

TEST(Cases, GeneratorNamesRoundTrip) {
  for (auto g : {campaign::Generator::regimes, campaign::Generator::uniform})
    EXPECT_EQ(campaign::parse_generator(campaign::generator_name(g)), g);
  EXPECT_FALSE(campaign::parse_generator("random"));
}

}  // namespace
}  // namespace stabfuzz
