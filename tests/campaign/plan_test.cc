// The campaign's plan (harness/campaign/plan.cc): the work list from --target selectors, shards,
// unit seeds, and each round's budget across the implementations.
#include "harness/campaign/plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {
namespace {

TEST(WorkList, AllNamesAndUnknown) {
  const Registry& reg = default_registry();
  std::vector<std::string> unavailable;
  const auto all = work_list(reg, "all", &unavailable);
  size_t registered = 0;
  for (const auto& f : reg.families()) registered += f.targets.size();
  EXPECT_EQ(all.size(), registered);
  EXPECT_EQ(unavailable.size(), reg.unavailable().size());
  const auto some = work_list(reg, "var,softmax/cpu/stable", nullptr);
  ASSERT_FALSE(some.empty());
  for (const auto& it : some)
    EXPECT_TRUE(it.family == "var" || it.impl == "softmax/cpu/stable") << it.impl;
  EXPECT_THROW(work_list(reg, "no_such_family", nullptr), InputError);
  EXPECT_THROW(work_list(reg, "softmax/cpu/nope", nullptr), InputError);
  EXPECT_THROW(work_list(reg, ",", nullptr), InputError);
}

// --targets takes every selector `stabfuzz --target` takes (harness/core/select.h).
TEST(WorkList, Selectors) {
  const Registry& reg = default_registry();
  const auto library = work_list(reg, "library", nullptr);
  ASSERT_FALSE(library.empty());
  for (const auto& it : library) EXPECT_EQ(it.kind, TargetKind::library) << it.impl;
  for (const auto& it : work_list(reg, "reference,injected", nullptr))
    EXPECT_NE(it.kind, TargetKind::library) << it.impl;
  for (const auto& it : work_list(reg, "softmax/reference,var", nullptr))
    EXPECT_TRUE(it.impl == "softmax/cpu/stable" || it.family == "var") << it.impl;
  if (reg.find_target("softmax/torch/softmax").second) {
    const auto torch = work_list(reg, "softmax/torch", nullptr);
    ASSERT_EQ(torch.size(), 1u);
    EXPECT_EQ(torch[0].impl, "softmax/torch/softmax");
    for (const auto& it : work_list(reg, "torch", nullptr))
      EXPECT_NE(it.impl.find("/torch/"), std::string::npos) << it.impl;
  }
  try {
    work_list(reg, "var,nosuch", nullptr);
    ADD_FAILURE() << "an unknown selector was accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'nosuch' in --targets"), std::string::npos) << m;
    EXPECT_NE(m.find("a library (onednn"), std::string::npos) << m;
  }
}

TEST(Shard, PartsAreDisjointAndCoverTheList) {
  const auto all = work_list(default_registry(), "all", nullptr);
  std::multiset<std::string> seen;
  for (int i = 1; i <= 4; ++i)
    for (const auto& it : take_shard(all, parse_shard(std::to_string(i) + "/4")))
      seen.insert(it.impl);
  EXPECT_EQ(seen.size(), all.size());
  for (const auto& it : all) EXPECT_EQ(seen.count(it.impl), 1u) << it.impl;
  EXPECT_EQ(take_shard(all, parse_shard("1/1")).size(), all.size());
  for (const char* bad : {"0/4", "5/4", "1/0", "x", "1/2/3", "2"})
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
}

TEST(UnitSeed, DeterministicAndDistinct) {
  EXPECT_EQ(unit_seed(7, "a/b/c", 1), unit_seed(7, "a/b/c", 1));
  EXPECT_NE(unit_seed(7, "a/b/c", 1), unit_seed(7, "a/b/c", 2));
  EXPECT_NE(unit_seed(7, "a/b/c", 1), unit_seed(7, "a/b/d", 1));
  EXPECT_NE(unit_seed(7, "a/b/c", 1), unit_seed(8, "a/b/c", 1));
  EXPECT_GT(unit_seed(7, "a/b/c", 1), 0u);
  EXPECT_LT(unit_seed(7, "a/b/c", 1), 2147483648ULL);
}

TEST(Plan, FirstRoundsCoverEverythingLaterRoundsFollowFindings) {
  std::vector<WorkItem> items(10);
  for (size_t k = 0; k < items.size(); ++k) items[k].impl = "f/cpu/" + std::to_string(k);
  std::vector<ItemStats> stats(items.size());
  PlanInput in;
  in.jobs = 2;
  in.worker_seconds_total = in.worker_seconds_left = 600;
  for (int round : {1, 2}) {
    in.round = round;
    const auto p = plan_round(items, stats, in);
    ASSERT_EQ(p.size(), items.size());
    double sum = 0;
    for (const auto& u : p) sum += u.budget_s + kUnitOverheadS;
    EXPECT_LE(sum, 0.3 * 600 + 1e-9);
  }
  stats[3].findings = 7;          // a reference with findings
  stats[5].corpus_growth = 0.05;  // coverage still grows
  in.round = 3;
  in.worker_seconds_left = 200;
  const auto p = plan_round(items, stats, in);
  std::map<size_t, double> budget;
  double sum = 0;
  for (const auto& u : p) budget[u.item] = u.budget_s, sum += u.budget_s + kUnitOverheadS;
  EXPECT_LE(sum, 200 + 1e-9);
  EXPECT_GT(budget[3], budget[0]);
  EXPECT_GT(budget[5], budget[0]);
  // An undetected planted bug weighs more than a detected one.
  WorkItem inj;
  inj.kind = TargetKind::injected;
  ItemStats hidden, found;
  found.detected = true;
  EXPECT_GT(item_weight(inj, hidden), item_weight(inj, found));
  // Nothing left: no round.
  in.worker_seconds_left = 0.1;
  EXPECT_TRUE(plan_round(items, stats, in).empty());
}

}  // namespace
}  // namespace stabfuzz::campaign
