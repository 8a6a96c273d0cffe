// Joining the planted formulations to their families (injectors/all_injectors.cc): every group's
// mutants once, each in the family its id names, an unknown family refused, and the regimes that
// reach the failing regions (adam's early_steps, logsumexp's masked_rows) appended.
#include "injectors/all_injectors.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "injectors/elementwise.h"
#include "injectors/linalg.h"
#include "injectors/normalization.h"
#include "injectors/reductions.h"
#include "injectors/softmax.h"
#include "stabfuzz/family.h"

namespace stabfuzz::injectors {
namespace {

std::vector<std::string> ids(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const auto& t : targets) out.push_back(t.id);
  return out;
}

std::string family_of(const std::string& id) { return id.substr(0, id.find('/')); }

// A bare family per name (what attach_injectors reads: names, targets, regimes).
std::vector<Family> bare(const std::set<std::string>& names) {
  std::vector<Family> out;
  for (const auto& n : names) {
    Family f;
    f.name = n;
    out.push_back(std::move(f));
  }
  return out;
}

TEST(AllInjectors, AllMutantsJoinsEveryGroupOnceInOrder) {
  std::vector<std::string> expected;
  for (auto* group : {softmax_injected_targets, elementwise_mutants, reduction_mutants,
                      normalization_mutants, linalg_mutants})
    for (const auto& id : ids(group())) expected.push_back(id);
  const std::vector<std::string> all = ids(all_mutants());
  EXPECT_EQ(all, expected);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size()) << "a duplicate id";
  EXPECT_GE(all.size(), 39u);
}

TEST(AllInjectors, AttachAppendsEachMutantToTheFamilyItsIdNames) {
  std::set<std::string> names = {"adam", "logsumexp", "unrelated"};
  for (const auto& t : all_mutants()) names.insert(family_of(t.id));
  std::vector<Family> families = bare(names);
  attach_injectors(families);
  size_t attached = 0;
  for (const auto& f : families) {
    SCOPED_TRACE(f.name);
    for (const auto& t : f.targets) {
      EXPECT_EQ(family_of(t.id), f.name);
      EXPECT_EQ(t.kind, TargetKind::injected);
      ++attached;
    }
    if (f.name == "unrelated") EXPECT_TRUE(f.targets.empty());
    // The failing regions the families' own regimes reach too rarely.
    std::vector<std::string> regimes;
    for (const auto& r : f.regimes) regimes.push_back(r.name);
    if (f.name == "adam")
      EXPECT_EQ(regimes, std::vector<std::string>{"early_steps"});
    else if (f.name == "logsumexp")
      EXPECT_EQ(regimes, std::vector<std::string>{"masked_rows"});
    else
      EXPECT_TRUE(regimes.empty());
  }
  EXPECT_EQ(attached, all_mutants().size());
}

TEST(AllInjectors, AMutantWhoseFamilyIsMissingIsALogicError) {
  std::set<std::string> names;
  for (const auto& t : all_mutants()) names.insert(family_of(t.id));
  names.erase("softmax");
  std::vector<Family> families = bare(names);
  try {
    attach_injectors(families);
    FAIL() << "attached softmax's mutant without a softmax family";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("softmax/injected/no_max_subtract"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("no family 'softmax'"), std::string::npos) << e.what();
  }
}

// The default registry's planted formulations (family/injected/NAME) are exactly all_mutants().
TEST(AllInjectors, TheRegistrysFormulationsAreAllMutants) {
  std::set<std::string> registered;
  for (const auto& f : default_registry().families())
    for (const auto& t : f.targets)
      if (t.kind == TargetKind::injected && t.id.find("/injected/") != std::string::npos)
        registered.insert(t.id);
  const std::vector<std::string> all = ids(all_mutants());
  EXPECT_EQ(registered, std::set<std::string>(all.begin(), all.end()));
  for (const char* f : {"adam", "logsumexp"}) {
    const Family* fam = default_registry().find_family(f);
    ASSERT_NE(fam, nullptr);
    EXPECT_EQ(fam->regimes.back().name, std::string(f) == "adam" ? "early_steps" : "masked_rows");
  }
}

}  // namespace
}  // namespace stabfuzz::injectors
