// Every planted bug of the registry at once: complete rows for the formulations, and CESTAC firing
// where a row expects it. Each group's own mutants are tested in tests/injectors/<group>_test.cc.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "harness/campaign/inject.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

// Planted formulations: injected targets named family/injected/NAME (the arithmetic fault
// mutants, family/fault/NAME, are covered by tests/injectors/fault_mutants_test.cc).
bool formulation(const Family& f, const Target& t) {
  return t.kind == TargetKind::injected && t.id.rfind(f.name + "/fault/", 0) != 0;
}

TEST(Mutants, EveryInjectedTargetHasCompleteMetadata) {
  size_t injected = 0;
  std::set<std::string> families;
  for (const auto& f : default_registry().families())
    for (const auto& t : f.targets) {
      if (!formulation(f, t)) continue;
      ++injected;
      families.insert(f.name);
      SCOPED_TRACE(t.id);
      const std::string prefix = f.name + "/injected/";
      ASSERT_EQ(t.id.rfind(prefix, 0), 0u);
      EXPECT_GT(t.id.size(), prefix.size());
      EXPECT_EQ(t.id.find('/', prefix.size()), std::string::npos);
      ASSERT_TRUE(t.injection.has_value());
      EXPECT_FALSE(t.injection->plants.empty());
      EXPECT_FALSE(t.injection->fails_where.empty());
      EXPECT_FALSE(t.injection->fix.empty());
      const auto& e = t.injection->expected_detection;
      EXPECT_TRUE(e == "oracle" || e == "cestac" || e == "both") << e;
      EXPECT_FALSE(t.description.empty());
      EXPECT_TRUE(t.native);
      EXPECT_TRUE(t.cestac);
      const std::set<DType> dt(t.dtypes.begin(), t.dtypes.end());
      EXPECT_TRUE(dt.count(DType::f64) && dt.count(DType::f32));
    }
  EXPECT_GE(injected, 32u);
  EXPECT_GE(families.size(), 30u);
}

// The CESTAC half of expected_detection: every planted bug (formulation or registered fault)
// whose expected detectors include CESTAC is flagged by CESTAC within the first 256 regime inputs,
// in inject's order and CESTAC stream, at the tuning seed 1 and at the evaluation seeds 2 and 3.
// (The hand-picked inputs of the groups' tests are chosen for the oracle: an overflow that every
// sample shares is not CESTAC's to see.)
TEST(Mutants, CestacFiresWhereItIsExpected) {
  int checked = 0;
  for (const auto& f : default_registry().families())
    for (const auto& t : f.targets) {
      if (t.kind != TargetKind::injected || !t.injection || !t.cestac) continue;
      const auto& e = t.injection->expected_detection;
      if (e != "cestac" && e != "both") continue;
      ++checked;
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(t.id + " seed " + std::to_string(seed));
        int64_t fired_at = -1;
        const auto nd = static_cast<int64_t>(t.dtypes.size());
        for (int64_t k = 0; k < 256 && fired_at < 0; ++k) {
          const DType d = t.dtypes[static_cast<size_t>(k % nd)];
          const Input in =
              campaign::generate_case(f, campaign::Generator::regimes, d, seed, k / nd);
          CestacRequest req;
          req.seed = seed;
          req.stream = hash_str(t.id) ^ (static_cast<uint64_t>(d) << 56);
          if (pipeline::evaluate(f, t, in, req).cestac_fired) fired_at = k;
        }
        EXPECT_GE(fired_at, 0) << "CESTAC never fired in 256 inputs";
      }
    }
  EXPECT_GE(checked, 30);
}

}  // namespace
}  // namespace stabfuzz
