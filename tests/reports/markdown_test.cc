// report.md (reports/markdown.cc): library findings first, worst first, with replay lines, exact
// values, instability sites and fixes.
#include "reports/markdown.h"

#include <gtest/gtest.h>

#include <string>

#include "reports/run_data.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using testing::fixture_dir;
using testing::FixtureFinding;

// Library findings before the planted bugs', whatever order the run listed them in.
TEST(Markdown, LibraryFindingsBeforePlantedOnes) {
  FixtureFinding planted;
  planted.impl = "softmax/injected/no_max_subtract";
  planted.impl_kind = "injected";
  FixtureFinding lib;
  lib.impl = "softmax/onednn/softmax";
  lib.impl_kind = "library";
  const std::string dir =
      testing::write_run(testing::temp_dir("order"),
                         {{"softmax/injected/no_max_subtract", "injected", "f32", 10, 1, 1},
                          {"softmax/onednn/softmax", "library", "f32", 10, 1, 1}},
                         {planted, lib});
  const std::string md = reports::render_markdown(reports::load_run(dir));
  const size_t l = md.find("### softmax/onednn/softmax"), p = md.find("### softmax/injected/");
  ASSERT_NE(l, std::string::npos);
  ASSERT_NE(p, std::string::npos);
  EXPECT_LT(l, p);
}

TEST(Markdown, WorstFirstWithReplayExactValuesSitesAndFix) {
  const std::string md = reports::render_markdown(reports::load_run(fixture_dir()));
  // Per implementation, worst first: the critical case 7 before the minor case 3.
  const size_t stable = md.find("### softmax/cpu/stable");
  const size_t injected = md.find("### softmax/injected/no_max_subtract");
  ASSERT_NE(stable, std::string::npos);
  ASSERT_NE(injected, std::string::npos);
  const size_t c7 = md.find("case 7", stable), c3 = md.find("case 3", stable);
  EXPECT_LT(c7, c3);
  EXPECT_LT(c3, injected);
  // The non-finite-ULP planted finding (case 11) before the finite one (case 12).
  EXPECT_LT(md.find("case 11", injected), md.find("case 12", injected));
  EXPECT_NE(md.find("replay: `stabfuzz --target softmax --impl softmax/cpu/stable --dtype f32 "
                    "--seed 1 --case 7`"),
            std::string::npos);
  EXPECT_NE(md.find("computed `0x1p-2` (0.25), exact `0x1p-1` (0.5)"), std::string::npos);
  EXPECT_NE(md.find("ULP error 4e+06"), std::string::npos);
  EXPECT_NE(md.find("condition number 1.5"), std::string::npos);
  EXPECT_NE(md.find("CESTAC digits 0, expected 6.5"), std::string::npos);
  EXPECT_NE(md.find("detectors fired: oracle, cestac"), std::string::npos);
  EXPECT_NE(md.find("| `targets/cpu/softmax.h:42` | overflow | 3 |"), std::string::npos);
  EXPECT_NE(md.find("**suggested fix**: subtract the row max before exp (planted fix)"),
            std::string::npos);
  EXPECT_NE(md.find("**suggested fix**: subtract the row max before exp: e^(xi-m)"),
            std::string::npos);
  EXPECT_NE(md.find("shrunk from 64 in 5 steps"), std::string::npos);
  EXPECT_NE(md.find("| softmax/injected/no_max_subtract | injected | f16 | 100 | 0 | 0 |"),
            std::string::npos);
  EXPECT_NE(md.find("**NOT DETECTED** (planted)"), std::string::npos);
}

}  // namespace
}  // namespace stabfuzz
