// The catalog of known instability patterns and their fixes (reports/catalog.cc).
#include "reports/catalog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/run_data.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using testing::fixture_dir;

TEST(Catalog, MatchesByFamilyAndInstabilityKind) {
  const auto* p = reports::match_pattern("softmax", {"overflow"}, false);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->stable.find("max"), std::string::npos);
  EXPECT_EQ(reports::match_pattern("softmax", {"cancellation"}, false), nullptr);
  EXPECT_NE(reports::match_pattern("softmax", {}, true), nullptr);  // non-finite output
  const auto* var = reports::match_pattern("var", {"cancellation"}, false);
  ASSERT_NE(var, nullptr);
  EXPECT_NE(var->stable.find("Welford"), std::string::npos);
  const auto* ln = reports::match_pattern("layer_norm", {"cancellation"}, false);
  ASSERT_NE(ln, nullptr);
  EXPECT_NE(ln->stable.find("Welford"), std::string::npos);
  const auto* l1p = reports::match_pattern("log1p", {"cancellation"}, false);
  ASSERT_NE(l1p, nullptr);
  EXPECT_EQ(l1p->stable, "log1p(x)");
  EXPECT_NE(reports::match_pattern("sum", {}, false), nullptr);  // kind-free rows match any finding
  EXPECT_EQ(reports::match_pattern("tanh", {"cancellation"}, true), nullptr);
  for (const auto& row : reports::known_patterns()) {
    EXPECT_FALSE(row.families.empty());
    EXPECT_FALSE(row.stable.empty());
    EXPECT_FALSE(row.seen_in.empty());
  }
}

// The fix fits the finding's dtype: "statistics in f32" is no remedy for an f64 layer_norm, and an
// eps that rounds to 0 is an f16/bf16 pattern only.
TEST(Catalog, SuggestionsFitTheDtype) {
  reports::Finding f;
  f.target = "layer_norm";
  f.instabilities.push_back({"cancellation", "ln.cc:3", 1});
  for (const char* dt : {"f16", "bf16"}) {
    f.dtype = dt;
    EXPECT_NE(reports::suggest(f).fix.find("statistics in f32"), std::string::npos) << dt;
  }
  for (const char* dt : {"f32", "f64"}) {
    f.dtype = dt;
    const std::string fix = reports::suggest(f).fix;
    EXPECT_EQ(fix.find("in f32"), std::string::npos) << dt << ": " << fix;
    EXPECT_NE(fix.find("Welford"), std::string::npos) << dt << ": " << fix;
  }
  EXPECT_NE(reports::match_pattern("adam", {"unstable_division"}, false, "f16"), nullptr);
  EXPECT_EQ(reports::match_pattern("adam", {"unstable_division"}, false, "f64"), nullptr);
  for (const auto& row : reports::known_patterns()) {  // what f32/f64 findings get never says
    if (row.low_precision_only) continue;              // "compute it in f32"
    const std::string& fix = row.stable_wide.empty() ? row.stable : row.stable_wide;
    EXPECT_EQ(fix.find(" in f32"), std::string::npos) << row.unstable << ": " << fix;
  }
}

TEST(Catalog, InjectedFindingsQuoteTheirOwnFix) {
  const reports::RunData run = reports::load_run(fixture_dir());
  EXPECT_EQ(reports::suggest(run.findings[2]).fix, "subtract the row max before exp (planted fix)");
  EXPECT_NE(reports::suggest(run.findings[1]).source.find("FasterTransformer"), std::string::npos);
  EXPECT_TRUE(reports::suggest(run.findings[0]).fix.empty());
}

}  // namespace
}  // namespace stabfuzz
