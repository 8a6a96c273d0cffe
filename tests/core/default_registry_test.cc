// The default registry (harness/core/default_registry.cc): every family, its planted bugs and fault
// mutants, the library and GPU targets present or listed as unavailable.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "injectors/fault_mutants.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

TEST(DefaultRegistry, HasSoftmaxWithReferenceAndInjectedTargets) {
  const Registry& r = default_registry();
  const Family* sm = r.find_family("softmax");
  ASSERT_NE(sm, nullptr);
  EXPECT_FALSE(sm->regimes.empty());
  EXPECT_TRUE(sm->oracle);

  const auto [f1, stable] = r.find_target("softmax/cpu/stable");
  ASSERT_NE(stable, nullptr);
  EXPECT_EQ(f1, sm);
  EXPECT_EQ(stable->kind, TargetKind::reference);
  EXPECT_FALSE(stable->injection.has_value());

  const auto [f2, naive] = r.find_target("softmax/injected/no_max_subtract");
  ASSERT_NE(naive, nullptr);
  EXPECT_EQ(f2, sm);
  EXPECT_EQ(naive->kind, TargetKind::injected);
  ASSERT_TRUE(naive->injection.has_value());
  EXPECT_FALSE(naive->injection->plants.empty());
  EXPECT_EQ(target_kind_name(naive->kind), "injected");
  EXPECT_EQ(target_kind_name(stable->kind), "reference");
}

TEST(DefaultRegistry, EveryTargetIsPrefixedByItsFamily) {
  for (const Family& f : default_registry().families())
    for (const Target& t : f.targets) EXPECT_EQ(t.id.rfind(f.name + "/", 0), 0u) << t.id;
}

TEST(DefaultRegistry, MutableAndConstAreTheSameRegistry) {
  EXPECT_EQ(&default_registry(), &mutable_default_registry());
}

TEST(DefaultRegistry, HasAFamilyOfEveryGroup) {
  for (const char* name : {"softmax", "exp", "var", "layer_norm", "cross_entropy", "gemm",
                           "cosine_similarity", "adam"})
    EXPECT_NE(default_registry().find_family(name), nullptr) << name;
}

TEST(DefaultRegistry, FaultMutantsAreInjectedTargetsOfTheirFamily) {
  size_t faults = 0;
  for (const Family& f : default_registry().families())
    for (const Target& t : f.targets) {
      if (t.id.find("/fault/") == std::string::npos) continue;
      ++faults;
      EXPECT_EQ(t.kind, TargetKind::injected) << t.id;
      EXPECT_TRUE(injectors::registered_fault_mutant(t.id)) << t.id;
    }
  EXPECT_GT(faults, 0u);
}

TEST(DefaultRegistry, NoUnavailableTargetIsAlsoRegistered) {
  for (const auto& u : default_registry().unavailable()) {
    EXPECT_EQ(default_registry().find_target(u.id).second, nullptr) << u.id;
    EXPECT_FALSE(u.reason.empty()) << u.id;
  }
}

TEST(DefaultRegistry, TargetIdsAreUnique) {
  std::set<std::string> ids;
  for (const Family& f : default_registry().families())
    for (const Target& t : f.targets) EXPECT_TRUE(ids.insert(t.id).second) << t.id;
}

}  // namespace
}  // namespace stabfuzz
