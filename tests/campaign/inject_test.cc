// `stabfuzz inject`: the uniform baseline, the command's JSON and the fault matrix (the faults
// themselves: tests/injectors/fault_plan_test.cc and fault_mutants_test.cc).
#include "harness/campaign/inject.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "injectors/fault_mutants.h"
#include "injectors/fault_plan.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

TEST(Inject, UniformBaselineKeepsShapesAndDrawsFromTheUnitInterval) {
  const Family* f = default_registry().find_family("softmax");
  for (int64_t k = 0; k < 20; ++k) {
    const Input r = campaign::generate_case(*f, campaign::Generator::regimes, DType::f32, 3, k);
    const Input u = campaign::generate_case(*f, campaign::Generator::uniform, DType::f32, 3, k);
    const Input u2 = campaign::generate_case(*f, campaign::Generator::uniform, DType::f32, 3, k);
    ASSERT_EQ(r.args[0].shape, u.args[0].shape);
    EXPECT_EQ(u.args[0].values, u2.args[0].values);  // reproducible from the seed
    EXPECT_FALSE(f->validate(u));
    for (double v : u.args[0].values) {
      EXPECT_GE(v, -1.0);
      EXPECT_LE(v, 1.0);
    }
  }
}

TEST(Inject, CommandWritesTheRecallJson) {
  const std::string out = testing::temp_dir("inject");
  const auto o =
      testing::run_stabfuzz("inject --family softmax --budget-s 1 --seed 1 --json - --out " + out);
  ASSERT_TRUE(o.code == 0 || o.code == 1) << o.err;
  const json::Value j = json::parse(o.out);
  for (const char* key :
       {"mutants", "recall", "recall_cestac", "recall_oracle", "false_positive_targets"})
    EXPECT_NE(j.get(key), nullptr) << key;
  ASSERT_GE(j.at("mutants").as_array().size(), 2u);
  bool no_max = false;
  for (const auto& m : j.at("mutants").as_array()) {
    for (const char* key :
         {"id", "family", "detected", "detector", "inputs_to_detect", "seconds_to_detect"})
      EXPECT_NE(m.get(key), nullptr) << key;
    EXPECT_EQ(m.at("family").as_string(), "softmax");
    if (m.at("id").as_string() == "softmax/injected/no_max_subtract") {
      no_max = true;
      EXPECT_TRUE(m.at("detected").as_bool());
      EXPECT_GE(m.at("inputs_to_detect").as_number(), 1);
    }
  }
  EXPECT_TRUE(no_max);
  EXPECT_EQ(j.at("false_positive_targets").as_number(), 0);
  EXPECT_NE(testing::slurp(out + "/inject.json").find("\"recall\""), std::string::npos);
  EXPECT_EQ(testing::run_stabfuzz("inject --family nosuch --budget-s 1").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family softmax --budget-s 1 --generator bogus").code,
            2);
}

// --faults all: every fault planted in the reference target, the registry's pairs marked, each
// missed pair with why; var computes no elementary function, so libm_low_precision has no effect
// there whatever the budget.
TEST(Inject, FaultMatrixCoversEveryFaultAndSaysWhyAPairIsMissed) {
  const Family* var = default_registry().find_family("var");
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(injectors::fault_matrix(*var).size(), static_cast<size_t>(fault::kKindCount) - 1)
      << "every fault but eps_removed (var has no eps)";
  const Family* ln = default_registry().find_family("layer_norm");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(injectors::fault_matrix(*ln).size(), static_cast<size_t>(fault::kKindCount));
  EXPECT_TRUE(injectors::registered_fault_mutant("var/fault/perturb_ulps"));
  EXPECT_FALSE(injectors::registered_fault_mutant("var/fault/add_bf16"));

  campaign::InjectOptions o;
  o.family = "var";
  o.budget_s = 0.2;
  o.seed = 2;
  o.fault_matrix = true;
  o.references = false;
  std::ostringstream progress;
  const campaign::InjectResult r = campaign::run_inject(default_registry(), o, progress);
  std::set<std::string> faults;
  for (const auto& m : r.mutants) {
    SCOPED_TRACE(m.id);
    if (m.origin != "fault") continue;
    faults.insert(m.id);
    EXPECT_EQ(m.registered, injectors::registered_fault_mutant(m.id));
    EXPECT_EQ(m.detected, m.why_undetected.empty());
    if (m.id == "var/fault/libm_low_precision") {
      EXPECT_FALSE(m.detected);
      EXPECT_EQ(m.changed_inputs, 0);
      EXPECT_NE(m.why_undetected.find("no effect"), std::string::npos);
    }
  }
  EXPECT_EQ(faults.size(), static_cast<size_t>(fault::kKindCount) - 1);
  EXPECT_TRUE(r.stable.empty());
  const std::string md = campaign::inject_markdown({r}, "stabfuzz inject ...", {1});
  EXPECT_NE(md.find("| var |"), std::string::npos) << md;
  EXPECT_NE(md.find("no effect"), std::string::npos);
  EXPECT_NE(md.find("`var/fault/libm_low_precision`: seed 2: no effect"), std::string::npos);

  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seeds 0").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seeds 1,x").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seed 1 --seeds 2").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --faults bogus").code, 2);
}

}  // namespace
}  // namespace stabfuzz
