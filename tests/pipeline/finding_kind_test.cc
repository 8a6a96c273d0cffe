// Finding kinds, severities and --fail-on sets (harness/pipeline/finding_kind.cc).
#include "harness/pipeline/finding_kind.h"

#include <gtest/gtest.h>

#include <string>

#include "stabfuzz/errors.h"

namespace stabfuzz {
namespace {

TEST(KindSet, ParsesListsAllAndNoneAndRejectsUnknownKinds) {
  EXPECT_EQ(KindSet::defaults().str(), "accuracy,overflow,nan,nondeterminism,crash,hang");
  EXPECT_FALSE(KindSet::defaults().has(FindingKind::underflow));
  EXPECT_EQ(KindSet::parse("underflow,nan").str(), "nan,underflow");
  EXPECT_EQ(KindSet::parse("all").str(), KindSet::all().str());
  EXPECT_EQ(KindSet::parse("none").str(), "none");
  EXPECT_THROW(KindSet::parse("accuracy,typo"), InputError);
  EXPECT_THROW(KindSet::parse(""), InputError);
}

TEST(FindingKind, NamesParseBackAndUnknownNamesDoNot) {
  for (FindingKind k : kAllFindingKinds) {
    const auto parsed = parse_finding_kind(finding_kind_name(k));
    ASSERT_TRUE(parsed.has_value()) << finding_kind_name(k);
    EXPECT_EQ(*parsed, k);
  }
  EXPECT_EQ(finding_kind_name(FindingKind::nondeterminism), "nondeterminism");
  EXPECT_FALSE(parse_finding_kind("Accuracy").has_value());
  EXPECT_FALSE(parse_finding_kind("").has_value());
  EXPECT_FALSE(parse_finding_kind("all").has_value());
}

TEST(Severity, Names) {
  EXPECT_EQ(severity_name(Severity::none), "none");
  EXPECT_EQ(severity_name(Severity::minor), "minor");
  EXPECT_EQ(severity_name(Severity::major), "major");
  EXPECT_EQ(severity_name(Severity::critical), "critical");
}

TEST(KindSet, EmptyAllAndAdd) {
  KindSet s;
  EXPECT_EQ(s.str(), "none");
  for (FindingKind k : kAllFindingKinds) EXPECT_FALSE(s.has(k));
  s.add(FindingKind::hang);
  s.add(FindingKind::accuracy);
  s.add(FindingKind::hang);
  EXPECT_EQ(s.str(), "accuracy,hang");
  EXPECT_EQ(KindSet::all().str(), "accuracy,overflow,nan,underflow,nondeterminism,crash,hang");
}

TEST(KindSet, UnknownKindErrorNamesItAndTheKnownKinds) {
  try {
    KindSet::parse("nan,,crash");
    FAIL() << "an empty kind parsed";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown finding kind '' (kinds: accuracy, overflow, nan, underflow, "
              "nondeterminism, crash, hang, or all, none)");
  }
  EXPECT_THROW(KindSet::parse("nan,"), InputError);     // a trailing comma names an empty kind
  EXPECT_THROW(KindSet::parse("all,nan"), InputError);  // all and none stand alone
}

}  // namespace
}  // namespace stabfuzz
