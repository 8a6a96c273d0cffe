// Triage reports from a hand-written run: loading (corrupt lines skipped), catalog fixes,
// report.md ordering and content, report.html self-containment, moving an earlier run aside.
#include "reports/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "reports/catalog.h"
#include "reports/findings.h"
#include "reports/html.h"
#include "reports/markdown.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"
#include "tests/reports/run_fixture.h"

namespace stabfuzz {
namespace {

using testing::FixtureFinding;
using testing::FixtureResult;

const std::vector<FixtureResult> kResults = {
    {"softmax/cpu/stable", "reference", "f32", 100, 2, 2},
    {"softmax/cpu/stable", "reference", "f64", 100, 0, 0},
    {"softmax/injected/no_max_subtract", "injected", "f32", 100, 40, 2},
    {"softmax/injected/no_max_subtract", "injected", "f16", 100, 0, 0},
};

std::vector<FixtureFinding> fixture_findings() {
  FixtureFinding minor;  // reference, cancellation only: no catalog row for softmax matches it
  minor.case_index = 3;
  minor.severity = "minor";
  minor.max_ulp = 9;
  minor.ratio = 2;
  minor.kinds = {"cancellation"};
  FixtureFinding major = minor;  // reference, overflow: the catalog's max-shift row
  major.case_index = 7;
  major.severity = "critical";
  major.max_ulp = 4e6;
  major.ratio = 1e6;
  major.digits = 0;
  major.kinds = {"overflow"};
  major.input = {100.0, 0x1.8p+6, -3.0};
  FixtureFinding planted;
  planted.impl = "softmax/injected/no_max_subtract";
  planted.impl_kind = "injected";
  planted.case_index = 11;
  planted.severity = "critical";
  planted.max_ulp = INFINITY;
  planted.ratio = INFINITY;
  planted.digits = 0;
  planted.kinds = {"overflow", "invalid_operation"};
  planted.fix = "subtract the row max before exp (planted fix)";
  FixtureFinding planted2 = planted;
  planted2.case_index = 12;
  planted2.severity = "major";
  planted2.max_ulp = 300;
  planted2.ratio = 50;
  planted2.digits = -1;  // no CESTAC fields
  return {minor, major, planted, planted2};
}

std::string fixture_dir(const std::string& extra = "") {
  return testing::write_run(testing::temp_dir("run"), kResults, fixture_findings(), extra);
}

TEST(RunData, LoadsEveryFindingAndTheSummary) {
  const reports::RunData run = reports::load_run(fixture_dir());
  EXPECT_EQ(run.target, "softmax");
  EXPECT_EQ(run.seed, 1u);
  ASSERT_EQ(run.results.size(), 4u);
  ASSERT_EQ(run.findings.size(), 4u);
  EXPECT_TRUE(run.problems.empty());
  const reports::Finding& f = run.findings[1];
  EXPECT_EQ(f.line, 2);
  EXPECT_EQ(f.case_index, 7);
  EXPECT_EQ(f.detectors, (std::vector<std::string>{"oracle", "cestac"}));
  EXPECT_EQ(f.magnitude, 100.0);  // max |x| over the input, parsed from hex floats
  EXPECT_EQ(f.input.size(), 3u);
  EXPECT_DOUBLE_EQ(f.digits_lost(), 6.5);
  EXPECT_TRUE(std::isinf(run.findings[2].max_ulp));  // "inf" strings read back as numbers
  EXPECT_FALSE(run.findings[3].has_cestac);
  EXPECT_EQ(run.impls(),
            (std::vector<std::string>{"softmax/cpu/stable", "softmax/injected/no_max_subtract"}));
}

TEST(RunData, CorruptAndTruncatedLinesAreReportedAndSkipped) {
  const std::string line = json::dump(testing::finding_json(FixtureFinding{}));
  std::string huge = line;  // an integer field no cast may take
  huge.replace(huge.find("\"n\":"), 4, "\"n\":1e300,\"x\":");
  const std::string extra = "{not json}\n" + std::string("{\"dtype\": \"f32\"}\n") + huge + "\n" +
                            line.substr(0, line.size() / 2);
  const std::string dir = fixture_dir(extra);
  const reports::RunData run = reports::load_run(dir);
  EXPECT_EQ(run.findings.size(), 4u);  // the four good lines survive
  ASSERT_EQ(run.problems.size(), 4u);
  EXPECT_NE(run.problems[0].find("findings.jsonl:5: skipped"), std::string::npos)
      << run.problems[0];
  EXPECT_NE(run.problems[1].find("findings.jsonl:6: skipped: missing key 'impl'"),
            std::string::npos)
      << run.problems[1];
  EXPECT_NE(run.problems[2].find("findings.jsonl:7: skipped: 'n' is not an integer"),
            std::string::npos)
      << run.problems[2];
  EXPECT_NE(run.problems[3].find("findings.jsonl:8:"), std::string::npos) << run.problems[3];
  // The reports still render, and name the skipped lines.
  std::ostringstream log;
  const auto paths = reports::write_reports(dir, log);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_NE(log.str().find("findings.jsonl:8:"), std::string::npos);
  const std::string md = testing::slurp(dir + "/report.md");
  EXPECT_NE(md.find("4 unreadable line(s) skipped"), std::string::npos);
  EXPECT_NE(md.find("case 7"), std::string::npos);
  EXPECT_NE(testing::slurp(dir + "/report.html").find("id=\"problems\""), std::string::npos);
}

TEST(RunData, MissingOrMalformedRunIsAnInputError) {
  EXPECT_THROW(reports::load_run("/nonexistent/stabfuzz-run"), InputError);
  const std::string dir = testing::temp_dir("");
  EXPECT_THROW(reports::load_run(dir), InputError);  // no summary.json
  std::ofstream(dir + "/summary.json") << "{\"target\": \"softmax\", \"results\": [";
  EXPECT_THROW(reports::load_run(dir), InputError);
}

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

TEST(PreviousRun, ASecondRunIntoTheSameDirectoryMovesTheFirstAside) {
  const std::string dir = fixture_dir();
  std::ofstream(dir + "/report.md") << "old report\n";
  EXPECT_EQ(reports::move_previous_run(dir), dir + "/previous-1");
  EXPECT_EQ(testing::slurp(dir + "/previous-1/report.md"), "old report\n");
  EXPECT_EQ(testing::count_lines(testing::slurp(dir + "/previous-1/findings.jsonl")), 4);
  EXPECT_TRUE(testing::slurp(dir + "/findings.jsonl").empty());
  EXPECT_EQ(reports::move_previous_run(dir), "");  // nothing left to move
  testing::write_run(dir, kResults, {});
  EXPECT_EQ(reports::move_previous_run(dir), dir + "/previous-2");
  EXPECT_EQ(reports::load_run(dir + "/previous-1").findings.size(), 4u);
}

}  // namespace
}  // namespace stabfuzz
