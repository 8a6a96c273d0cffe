// End to end: a softmax run writes report.md, report.html and junit.xml; headless chromium renders
// report.html (DOM dump and screenshot) with its plots and sortable tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "harness/campaign/runner.h"
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
                     const std::string& scratch) {
  const std::string out = scratch + "/chromium.out";
  const std::string cmd =
      "timeout 90 " + browser +
      " --headless --no-sandbox --disable-gpu --no-first-run "
      "--disable-background-networking --disable-dev-shm-usage --user-data-dir=" +
      scratch + "/profile --window-size=1400,2000 --hide-scrollbars " + what + " '" + url + "' > " +
      out + " 2> " + scratch + "/chromium.err";
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
    GTEST_SKIP()
        << "chromium is not installed (ci/bootstrap installs it: apt-get install chromium); "
           "report.html was not rendered in a browser";
  const std::string scratch = testing::temp_dir("chromium");
  std::system(("mkdir -p " + scratch).c_str());
  const std::string html = slurp(*dir_ + "/report.html");
  const size_t findings =
      count(html.substr(html.find("id=\"findings\"")), "<tr>") - 1;  // minus the header
  ASSERT_GT(findings, 0u);
  // Opened sorted by the findings table's first column (#), descending: the script ran and sorted.
  const std::string dom = headless(
      browser, "--dump-dom", "file://" + *dir_ + "/report.html#sort=findings:0:desc", scratch);
  ASSERT_FALSE(dom.empty());
  EXPECT_EQ(count(dom, "data-sortable=\"ready\""), 2u);  // summary and findings tables
  EXPECT_GE(count(dom, "<svg class=\"plot\""), 2u);
  EXPECT_EQ(count(dom, "<svg class=\"plot histogram\""), 1u);
  EXPECT_EQ(count(dom, "class=\"pt\""), count(html, "class=\"pt\""));
  const size_t body = dom.find("<tbody>", dom.find("id=\"findings\""));
  ASSERT_NE(body, std::string::npos);
  const std::string first_row =
      "<tbody><tr><td class=\"n\" data-v=\"" + std::to_string(findings) + "\"";
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
  EXPECT_EQ(count(idom, "data-sortable=\"ready\""), 3u);  // and the mutants table
  if (const char* keep = std::getenv("STABFUZZ_KEEP_SCREENSHOT"))
    std::system(("cp " + png + " '" + keep + "'").c_str());
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
