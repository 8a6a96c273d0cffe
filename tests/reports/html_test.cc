// report.html (reports/html.cc): self-contained, with plots, sortable tables, the detection matrix
// and a reason for every verdict.
#include "reports/html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "reports/run_data.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using testing::fixture_dir;

// A reference row that passed with a huge ULP error (an ill-conditioned input) says why it is ok.
TEST(Html, AnOkVerdictWithALargeUlpErrorNamesTheConditioning) {
  reports::RunData run = reports::load_run(fixture_dir());
  reports::ImplSummary& r = run.results.at(1);  // softmax/cpu/stable f64: no failing input
  ASSERT_FALSE(r.failed());
  r.max_ulp = 8.46e39;
  r.max_error_over_tolerance = 0.31;
  const std::string html = reports::render_html(run);
  EXPECT_NE(html.find("<small class=\"why\">max ULP 8.46e+39 is explained by the conditioning: "
                      "every error is within tolerance x condition number (worst "
                      "error/tolerance 0.31)</small>"),
            std::string::npos);
}

TEST(Html, SelfContainedWithPlotsTablesAndDetectionMatrix) {
  const std::string dir = fixture_dir();
  std::ofstream(dir + "/inject.json") << R"({"mutants": [
    {"id": "softmax/no_max", "family": "softmax", "detected": true, "detector": "both", "inputs_to_detect": 3, "seconds_to_detect": 0.01},
    {"id": "var/one_pass", "family": "var", "detected": true, "detector": "cestac", "inputs_to_detect": 9, "seconds_to_detect": 0.2},
    {"id": "log1p/naive", "family": "log1p", "detected": false, "detector": "", "inputs_to_detect": null, "seconds_to_detect": null}],
    "recall": 0.667, "recall_cestac": 0.667, "recall_oracle": 0.333, "false_positive_targets": []})";
  const std::string html = reports::render_html(reports::load_run(dir));
  for (const char* external : {"src=", "href=", "<link", "url(", "@import"})
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  EXPECT_NE(html.find("<table class=\"sortable cards\" id=\"summary\">"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"sortable wide\" id=\"findings\">"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"sortable wide\" id=\"planted\">"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"sortable\" id=\"mutants\">"), std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = html.find(what); p != std::string::npos; p = html.find(what, p + 1)) ++n;
    return n;
  };
  // Two implementations with findings: 4 scatter plots each (the injected one has CESTAC data in
  // one of its two findings), plus the histogram and the matrix.
  EXPECT_EQ(count("<svg class=\"plot\""), 8u);
  EXPECT_EQ(count("<svg class=\"plot histogram\""), 1u);
  EXPECT_EQ(count("<svg class=\"plot matrix\""), 1u);
  // Matrix cells: softmax/no_max detected by both, var/one_pass by CESTAC only, log1p by none.
  EXPECT_EQ(count("class=\"cell on\""), 3u);
  EXPECT_EQ(count("class=\"cell off\""), 3u);
  EXPECT_NE(html.find("recall 0.667, CESTAC 0.667, oracle 0.333"), std::string::npos);
  // Every verdict says why: the ok reference row has a small error, the failing rows their count.
  EXPECT_NE(html.find("<small class=\"why\">every input within tolerance"), std::string::npos);
  EXPECT_NE(html.find(" inputs failed; worst error/tolerance "), std::string::npos);
  // The scatter points: 4 ULP points per implementation pair of plots (2 + 2) twice, 3 digits
  // points twice.
  EXPECT_EQ(count("class=\"pt\""), 2u * 4u + 2u * 3u);
}

}  // namespace
}  // namespace stabfuzz
