// End to end: a softmax run writes report.md, report.html and junit.xml; headless chromium renders
// report.html (DOM dump and screenshot) with its plots and sortable tables, and its layout is
// measured at two window widths.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "harness/campaign/runner.h"
#include "tests/reports/run_fixture.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::slurp;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The chromium binary, or "" when none is installed.
std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const std::string cmd = std::string("command -v ") + name + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return "";
}

// Runs headless chromium on `url` with the flags the issue names; `what` is --dump-dom or
// --screenshot=PATH. Returns stdout.
std::string headless(const std::string& browser, const std::string& what, const std::string& url,
                     const std::string& scratch, int width = 1400) {
  const std::string out = scratch + "/chromium.out";
  const std::string cmd =
      "timeout 90 " + browser +
      " --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-background-networking --disable-dev-shm-usage --user-data-dir=" +
      scratch + "/profile --window-size=" + std::to_string(width) + ",2000 --hide-scrollbars " +
      what + " '" + url + "' > " + out + " 2> " + scratch + "/chromium.err";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd << "\n" << slurp(scratch + "/chromium.err");
  return slurp(out);
}

class ReportRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::temp_dir("run"));
    result_ = new testing::Output(
        testing::run_stabfuzz("--target softmax --seed 1 --runs 60 --quiet --out " + *dir_));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete result_;
  }
  static std::string* dir_;
  static testing::Output* result_;
};
std::string* ReportRun::dir_ = nullptr;
testing::Output* ReportRun::result_ = nullptr;

TEST_F(ReportRun, WritesTheThreeReportsNextToTheJson) {
  ASSERT_EQ(result_->code, 0) << result_->out << result_->err;
  for (const char* f : {"report.md", "report.html", "junit.xml"}) {
    EXPECT_FALSE(slurp(*dir_ + "/" + f).empty()) << f;
    EXPECT_NE(result_->out.find("report:   " + *dir_ + "/" + f), std::string::npos) << result_->out;
  }
  const std::string md = slurp(*dir_ + "/report.md");
  const size_t injected = md.find("### softmax/injected/no_max_subtract");
  ASSERT_NE(injected, std::string::npos) << md;
  // The injected finding quotes the planted bug's stable rewrite.
  EXPECT_NE(md.find("**suggested fix**: ", injected), std::string::npos);
  EXPECT_NE(md.find("(planted bug's stable rewrite)", injected), std::string::npos);
  EXPECT_NE(md.find("- replay: `stabfuzz --target softmax --impl softmax/injected/no_max_subtract",
                    injected),
            std::string::npos);
  // `report DIR` re-renders the same text from the JSON alone.
  std::ofstream(*dir_ + "/report.md", std::ios::trunc) << "stale\n";
  const auto again = testing::run_stabfuzz("report " + *dir_);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(slurp(*dir_ + "/report.md"), md);
}

TEST_F(ReportRun, ASecondRunIntoTheSameDirectoryKeepsTheFirst) {
  ASSERT_EQ(result_->code, 0);
  const std::string dir = testing::temp_dir("twice");
  const std::string args =
      "--target softmax --impl softmax/injected/no_max_subtract --dtype f32 --seed 3 --runs 20 "
      "--quiet --out " +
      dir;
  ASSERT_EQ(testing::run_stabfuzz(args).code, 0);
  const std::string first = slurp(dir + "/findings.jsonl");
  const auto second = testing::run_stabfuzz(args);
  EXPECT_EQ(second.code, 0);
  EXPECT_NE(second.err.find("held an earlier run; moved its files to " + dir + "/previous-1"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(slurp(dir + "/previous-1/findings.jsonl"), first);
  EXPECT_EQ(slurp(dir + "/findings.jsonl"), first);  // same seed: the same findings, not twice
}

TEST_F(ReportRun, ChromiumRendersThePlotsAndSortableTables) {
  ASSERT_EQ(result_->code, 0);
  const std::string browser = chromium();
  if (browser.empty())
    STABFUZZ_SKIP_UNLESS_REQUIRED(
        "chromium",
        "chromium is not installed (ci/bootstrap installs it: apt-get install chromium); "
        "report.html was not rendered in a browser");
  const std::string scratch = testing::temp_dir("chromium");
  std::system(("mkdir -p " + scratch).c_str());
  const std::string html = slurp(*dir_ + "/report.html");
  // This run's findings are all the planted bug's: the planted table holds them.
  EXPECT_EQ(html.find("id=\"findings\""), std::string::npos);
  const size_t findings =
      count(html.substr(html.find("id=\"planted\"")), "<tr>") - 1;  // minus the header
  ASSERT_GT(findings, 0u);
  // Opened sorted by the findings table's first column (#), descending: the script ran and sorted.
  const std::string dom = headless(browser, "--dump-dom",
                                   "file://" + *dir_ + "/report.html#sort=planted:0:desc", scratch);
  ASSERT_FALSE(dom.empty());
  EXPECT_EQ(count(dom, "data-sortable=\"ready\""), 3u);  // summary, planted summary, findings
  EXPECT_GE(count(dom, "<svg class=\"plot\""), 2u);
  EXPECT_EQ(count(dom, "<svg class=\"plot histogram\""), 1u);
  EXPECT_EQ(count(dom, "class=\"pt\""), count(html, "class=\"pt\""));
  const size_t body = dom.find("<tbody>", dom.find("id=\"planted\""));
  ASSERT_NE(body, std::string::npos);
  const std::string first_row =
      "<tbody><tr><td data-label=\"#\" class=\"n\" data-v=\"" + std::to_string(findings) + "\"";
  EXPECT_EQ(dom.compare(body, first_row.size(), first_row), 0) << dom.substr(body, 200);
  EXPECT_NE(dom.find("<th class=\"desc\">#</th>"), std::string::npos);
  // The screenshot: a PNG of the window's size, and far from blank.
  const std::string png = scratch + "/report.png";
  headless(browser, "--screenshot=" + png, "file://" + *dir_ + "/report.html", scratch);
  const std::string img = slurp(png);
  ASSERT_GT(img.size(), 24u);
  EXPECT_EQ(img.substr(0, 8), "\x89PNG\r\n\x1a\n");
  auto be32 = [&](size_t at) {
    return uint32_t(uint8_t(img[at])) << 24 | uint32_t(uint8_t(img[at + 1])) << 16 |
           uint32_t(uint8_t(img[at + 2])) << 8 | uint32_t(uint8_t(img[at + 3]));
  };
  EXPECT_EQ(be32(16), 1400u);
  EXPECT_EQ(be32(20), 2000u);
  EXPECT_GT(img.size(), 60000u) << "a nearly blank page compresses far smaller";
  // An inject run's directory: the page gains the mutant x detector matrix.
  const std::string inj = scratch + "/inject-run";
  ASSERT_EQ(std::system(("cp -r " + *dir_ + " " + inj).c_str()), 0);
  std::ofstream(inj + "/inject.json") << R"({"mutants": [
      {"id": "softmax/no_max", "family": "softmax", "detected": true, "detector": "both", "inputs_to_detect": 1},
      {"id": "var/one_pass", "family": "var", "detected": true, "detector": "cestac", "inputs_to_detect": 4},
      {"id": "log1p/naive", "family": "log1p", "detected": false, "detector": ""}],
      "recall": 0.667, "recall_cestac": 0.667, "recall_oracle": 0.333, "false_positive_targets": []})";
  ASSERT_EQ(testing::run_stabfuzz("report " + inj).code, 0);
  const std::string idom =
      headless(browser, "--dump-dom", "file://" + inj + "/report.html", scratch);
  EXPECT_EQ(count(idom, "<svg class=\"plot matrix\""), 1u);
  EXPECT_EQ(count(idom, "class=\"cell on\""), 3u);
  EXPECT_EQ(count(idom, "class=\"cell off\""), 3u);
  EXPECT_EQ(count(idom, "data-sortable=\"ready\""), 4u);  // and the mutants table
  if (const char* keep = std::getenv("STABFUZZ_KEEP_SCREENSHOT"))
    std::system(("cp " + png + " '" + keep + "'").c_str());
}

// The page a maintainer opens: the reference and library findings first, grouped by kind; planted
// bugs and plots collapsed below; no horizontal scrolling at 1,400 and at 800 px (measured in the
// rendered page, not read from the CSS).
TEST(ReportLayout, LibraryFindingsFirstAndNoHorizontalScrollAt1400And800) {
  const std::string browser = chromium();
  if (browser.empty())
    STABFUZZ_SKIP_UNLESS_REQUIRED("chromium",
                                  "chromium is not installed (ci/bootstrap installs it)");
  const std::string dir = testing::temp_dir("layout");
  std::vector<testing::FixtureFinding> fs;
  std::vector<testing::FixtureResult> rs = {
      {"softmax/onednn/softmax", "library", "f32", 300, 4, 4},
      {"softmax/cpu/stable", "reference", "f32", 300, 0, 0},
      {"softmax/injected/no_max_subtract", "injected", "f32", 300, 40, 40}};
  for (int i = 0; i < 40; ++i) {  // the planted bug's findings come first in the file
    testing::FixtureFinding f;
    f.impl = "softmax/injected/no_max_subtract";
    f.impl_kind = "injected";
    f.case_index = i;
    f.kinds = {"overflow", "nonfinite_divergence"};
    f.fix = "subtract the row max before exp";
    f.input.assign(64, 1e4 + i);
    fs.push_back(f);
  }
  for (int i = 0; i < 4; ++i) {
    testing::FixtureFinding f;
    f.impl = "softmax/onednn/softmax";
    f.impl_kind = "library";
    f.kind = i < 3 ? "underflow" : "accuracy";  // the accuracy one is listed first
    f.digits = -1;
    f.case_index = 100 + i;
    f.seed = 1681421553;
    f.max_ulp = 1e7;
    f.ratio = 1e4;
    fs.push_back(f);
  }
  testing::write_run(dir, rs, fs);
  ASSERT_EQ(testing::run_stabfuzz("report " + dir).code, 0);
  const std::string html = slurp(dir + "/report.html");

  // The page's own script is followed by one that writes the layout into the DOM.
  const std::string probe =
      "<script>document.body.setAttribute('data-layout', [document.documentElement.scrollWidth, "
      "window.innerWidth, Math.round(document.getElementById('findings').getBoundingClientRect()"
      ".top)].join(' '));</script></body>";
  std::string measured = html;
  measured.replace(measured.rfind("</body>"), 7, probe);
  std::ofstream(dir + "/measured.html") << measured;
  const std::string scratch = testing::temp_dir("layout_chromium");
  std::system(("mkdir -p " + scratch).c_str());
  for (const int width : {1400, 800}) {
    SCOPED_TRACE("window width " + std::to_string(width));
    std::string what = "--dump-dom";
    const std::string dom =
        headless(browser, what, "file://" + dir + "/measured.html", scratch, width);
    const size_t at = dom.find("data-layout=\"");
    ASSERT_NE(at, std::string::npos) << dom.substr(0, 300);
    std::istringstream layout(dom.substr(at + 13));
    int scroll_width = 0, inner_width = 0, findings_top = 0;
    layout >> scroll_width >> inner_width >> findings_top;
    EXPECT_EQ(inner_width, width);
    EXPECT_LE(scroll_width, inner_width) << "the page scrolls sideways";
    EXPECT_LT(findings_top, 400) << "the library findings table starts below the first screen";
    // Library findings before the planted ones, the accuracy finding before the underflow ones.
    const size_t act = dom.find("id=\"act\""), planted = dom.find("id=\"planted-bugs\"");
    ASSERT_NE(act, std::string::npos);
    ASSERT_NE(planted, std::string::npos);
    EXPECT_LT(act, planted);
    const size_t first = dom.find("<tbody>", dom.find("id=\"findings\""));
    EXPECT_LT(dom.find("accuracy", first), dom.find("underflow", first));
    EXPECT_EQ(count(dom.substr(first, planted - first), "no_max_subtract"), 0u);
    // The planted bugs and the plots are collapsed: the page starts with the answer.
    EXPECT_EQ(count(dom, "<details"), 2u);
    EXPECT_EQ(count(dom, "<details open"), 0u);
    EXPECT_EQ(count(dom, "<button class=\"copy\""), 44u);  // a copy button per replay line
  }
}

TEST(Progress, ATerminalGetsOneRefreshingStatusLine) {
  campaign::RunOptions o;
  o.family = "softmax";
  o.impl = "softmax/cpu/stable";
  o.dtypes = {DType::f64};
  o.runs = 1000000;
  o.budget_s = 1.5;  // several 250 ms ticks even on a loaded machine
  o.seed = 5;
  o.max_findings = 1;
  o.shrink_evals = 10;
  o.out_dir = testing::temp_dir("progress");
  o.progress_tty = true;
  o.write_reports = false;
  std::ostringstream progress;
  campaign::run_family(default_registry(), o, progress);
  const std::string s = progress.str();
  EXPECT_GE(count(s, "\r\033[K"), 2u) << s;  // rewritten in place (and cleared at the end)
  EXPECT_NE(s.find("pair 1/1 softmax/cpu/stable f64: "), std::string::npos) << s;
  EXPECT_NE(s.find(" findings, "), std::string::npos);
  EXPECT_NE(s.find(" s left"), std::string::npos);
}

}  // namespace
}  // namespace stabfuzz
