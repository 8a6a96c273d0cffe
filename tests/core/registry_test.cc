// Registry: a malformed family or target is rejected at registration; lookups find what was added.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "stabfuzz/family.h"
#include "tests/support/toy_family.h"

namespace stabfuzz {
namespace {

using testing::toy_family;
using testing::toy_target;

// Registers `f` into a fresh registry and returns the logic_error's message ("" when accepted).
std::string rejection(Family f) {
  Registry r;
  try {
    r.add(std::move(f));
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

bool mentions(const std::string& msg, const std::string& what) {
  return msg.find(what) != std::string::npos;
}

TEST(RegistryAdd, AcceptsAWellFormedFamily) {
  Registry r;
  EXPECT_NO_THROW(r.add(toy_family()));
  ASSERT_EQ(r.families().size(), 1u);
  EXPECT_EQ(r.families()[0].name, "toy");
}

TEST(RegistryAdd, RejectsFamilyWithoutOracle) {
  Family f = toy_family();
  f.oracle = nullptr;
  EXPECT_THROW(Registry().add(std::move(f)), std::logic_error);
  Family g = toy_family();
  g.oracle = nullptr;
  EXPECT_TRUE(mentions(rejection(std::move(g)), "oracle"));
}

TEST(RegistryAdd, RejectsFamilyWithoutRegimes) {
  Family f = toy_family();
  f.regimes.clear();
  EXPECT_TRUE(mentions(rejection(std::move(f)), "regimes"));
}

TEST(RegistryAdd, RejectsRegimeWithoutSampler) {
  Family f = toy_family();
  f.regimes[0].sample = nullptr;
  EXPECT_TRUE(mentions(rejection(std::move(f)), "sampler"));
}

TEST(RegistryAdd, RejectsFamilyWithoutValidationOrTolerances) {
  Family f = toy_family();
  f.validate = nullptr;
  EXPECT_TRUE(mentions(rejection(std::move(f)), "validation"));
  Family g = toy_family();
  g.tolerance_ulps = nullptr;
  EXPECT_TRUE(mentions(rejection(std::move(g)), "tolerances"));
}

TEST(RegistryAdd, RejectsTargetWithoutDtypes) {
  Family f = toy_family();
  f.targets[0].dtypes.clear();
  const std::string msg = rejection(std::move(f));
  EXPECT_TRUE(mentions(msg, "no dtypes")) << msg;
  EXPECT_TRUE(mentions(msg, "toy/cpu/ref")) << msg;
}

TEST(RegistryAdd, RejectsTargetWithoutNativeEntryPoint) {
  Family f = toy_family();
  f.targets[0].native = nullptr;
  const std::string msg = rejection(std::move(f));
  EXPECT_TRUE(mentions(msg, "native entry point")) << msg;
}

TEST(RegistryAdd, RejectsDuplicateTargetIdsWithinAFamily) {
  Family f = toy_family();
  f.targets.push_back(toy_target("toy/cpu/ref"));
  const std::string msg = rejection(std::move(f));
  EXPECT_TRUE(mentions(msg, "registered twice")) << msg;
}

TEST(RegistryAdd, RejectsTargetIdAlreadyOwnedByAnotherFamily) {
  // Family "a/b" may name targets "a/b/...", which family "a" can also own.
  Registry r;
  Family a = toy_family("a");
  a.targets.push_back(toy_target("a/b/x"));
  r.add(std::move(a));
  Family ab = toy_family("a/b");
  ab.targets[0].id = "a/b/x";
  EXPECT_THROW(r.add(std::move(ab)), std::logic_error);
  EXPECT_EQ(r.families().size(), 1u);
}

TEST(RegistryAdd, RejectsTheSameFamilyTwice) {
  Registry r;
  r.add(toy_family());
  EXPECT_THROW(r.add(toy_family()), std::logic_error);
  EXPECT_EQ(r.families().size(), 1u);
}

TEST(RegistryAdd, RejectsInjectedTargetWithoutInjection) {
  Family f = toy_family();
  Target inj = toy_target("toy/injected/bad");
  inj.kind = TargetKind::injected;
  f.targets.push_back(inj);
  const std::string msg = rejection(std::move(f));
  EXPECT_TRUE(mentions(msg, "toy/injected/bad")) << msg;
  EXPECT_TRUE(mentions(msg, "plants")) << msg;

  // The same target with its Injection filled in is accepted.
  Family ok = toy_family();
  inj.injection = Injection{"naive exp", "large logits", "subtract the max", "oracle"};
  ok.targets.push_back(inj);
  EXPECT_EQ(rejection(std::move(ok)), "");
}

TEST(RegistryAdd, RejectsTargetIdNotPrefixedByFamily) {
  for (const char* id : {"other/cpu/ref", "toyx/cpu/ref", "toy", "cpu/toy/ref", ""}) {
    Family f = toy_family();
    f.targets[0].id = id;
    const std::string msg = rejection(std::move(f));
    EXPECT_TRUE(mentions(msg, "is not named family/")) << id << ": " << msg;
  }
}

TEST(RegistryAdd, RejectsFamilyWithoutNameOrTargets) {
  EXPECT_TRUE(mentions(rejection(toy_family("")), "no name"));
  Family f = toy_family();
  f.targets.clear();
  EXPECT_TRUE(mentions(rejection(std::move(f)), "no targets"));
}

TEST(RegistryLookup, FindsFamiliesAndTargets) {
  Registry r;
  r.add(toy_family("a"));
  r.add(toy_family("b"));
  ASSERT_NE(r.find_family("b"), nullptr);
  EXPECT_EQ(r.find_family("b")->name, "b");
  EXPECT_EQ(r.find_family("c"), nullptr);
  const auto [fam, tgt] = r.find_target("b/cpu/ref");
  ASSERT_NE(fam, nullptr);
  ASSERT_NE(tgt, nullptr);
  EXPECT_EQ(fam->name, "b");
  EXPECT_EQ(tgt->id, "b/cpu/ref");
  const auto [nf, nt] = r.find_target("b/cpu/none");
  EXPECT_EQ(nf, nullptr);
  EXPECT_EQ(nt, nullptr);
}

TEST(RegistryAddTarget, AddsToAKnownFamilyAndRejectsTheRest) {
  Registry r;
  r.add(toy_family());
  r.add_target("toy", toy_target("toy/lib/fast"));
  EXPECT_NE(r.find_target("toy/lib/fast").second, nullptr);
  EXPECT_EQ(r.families()[0].targets.size(), 2u);
  // Unknown family, a duplicate id, an id outside the family, a target without dtypes.
  EXPECT_THROW(r.add_target("nope", toy_target("nope/lib/x")), std::logic_error);
  EXPECT_THROW(r.add_target("toy", toy_target("toy/lib/fast")), std::logic_error);
  EXPECT_THROW(r.add_target("toy", toy_target("other/lib/x")), std::logic_error);
  Target bare = toy_target("toy/lib/bare");
  bare.dtypes.clear();
  EXPECT_THROW(r.add_target("toy", std::move(bare)), std::logic_error);
  EXPECT_EQ(r.families()[0].targets.size(), 2u);
}

TEST(RegistryUnavailable, KeepsWhatIsMissingAndWhy) {
  Registry r;
  r.add_unavailable({"toy/gpu/kernel", "no GPU on this machine"});
  ASSERT_EQ(r.unavailable().size(), 1u);
  EXPECT_EQ(r.unavailable()[0].reason, "no GPU on this machine");
  EXPECT_EQ(r.find_target("toy/gpu/kernel").second, nullptr);
}

}  // namespace
}  // namespace stabfuzz
