// End to end: stabfuzz --target softmax finds the planted bug, not the stable kernel, and every
// finding replays from its own command line.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::slurp;

std::vector<json::Value> read_findings(const std::string& path) {
  std::vector<json::Value> out;
  std::istringstream in(slurp(path));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

class SoftmaxRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::temp_dir("run"));
    result_ = new testing::Output(
        run_stabfuzz("--target softmax --seed 1 --runs 150 --quiet --out " + *dir_));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete result_;
  }
  static std::string* dir_;
  static testing::Output* result_;
};
std::string* SoftmaxRun::dir_ = nullptr;
testing::Output* SoftmaxRun::result_ = nullptr;

TEST_F(SoftmaxRun, StableHasNoFindingAndTheRunSucceeds) {
  const json::Value summary = json::parse(slurp(*dir_ + "/summary.json"));
  // Exit 1 exactly when a library target (oneDNN, libtorch, when built in) has a finding of a
  // kind that fails the run (not underflow, a policy): library findings count like reference
  // ones, injected ones never fail the run.
  bool library_failed = false;
  for (const auto& r : summary.at("results").as_array()) {
    const bool library = r.at("impl_kind").as_string() == "library";
    int64_t failing = 0;
    for (const auto& [kind, n] : r.at("failing_by_kind").as_object()) {
      failing += static_cast<int64_t>(n.as_number());
      if (library && kind != "underflow") EXPECT_TRUE(r.at("failed").as_bool()) << kind;
    }
    EXPECT_EQ(failing, r.at("failing_inputs").as_number()) << r.at("impl").as_string();
    library_failed |= library && r.at("failed").as_bool();
  }
  EXPECT_EQ(result_->code, library_failed ? 1 : 0) << result_->out << result_->err;
  EXPECT_EQ(summary.at("target").as_string(), "softmax");
  EXPECT_EQ(summary.at("seed").as_number(), 1);
  std::map<std::string, double> findings;
  for (const auto& r : summary.at("results").as_array()) {
    findings[r.at("impl").as_string() + " " + r.at("dtype").as_string()] =
        r.at("findings").as_number();
    EXPECT_EQ(r.at("inputs").as_number(), 150);
    EXPECT_TRUE(r.at("impl_kind").is_string());
    EXPECT_TRUE(r.at("max_ulp").is_number() || r.at("max_ulp").is_string());
    if (r.at("impl").as_string().find("/fault/") == std::string::npos &&
        r.at("impl_kind").as_string() != "library")  // faults and black-box libraries: oracle only
      EXPECT_TRUE(r.at("min_digits").is_number());
  }
  for (const char* d : {"f64", "f32", "f16", "bf16"}) {
    EXPECT_EQ(findings.at(std::string("softmax/cpu/stable ") + d), 0) << d;
    EXPECT_GE(findings.at(std::string("softmax/injected/no_max_subtract ") + d), 1) << d;
  }
}

TEST_F(SoftmaxRun, FindingsAreCompleteRecords) {
  const auto fs = read_findings(*dir_ + "/findings.jsonl");
  ASSERT_FALSE(fs.empty());
  for (const auto& f : fs) {
    const std::string impl = f.at("impl").as_string();
    const bool fault = impl.rfind("softmax/fault/", 0) == 0;          // fault mutants: oracle only
    const bool library = f.at("impl_kind").as_string() == "library";  // black boxes: oracle only
    const std::string kind = f.at("kind").as_string();
    EXPECT_TRUE(kind == "accuracy" || kind == "overflow" || kind == "nan" || kind == "underflow" ||
                kind == "nondeterminism" || kind == "crash" || kind == "hang")
        << kind;
    if (!fault && !library) EXPECT_EQ(impl, "softmax/injected/no_max_subtract");
    for (const char* key :
         {"dtype", "seed", "detectors", "max_ulp", "digits", "cond", "input", "replay",
          "suggested_fix", "exact", "computed", "severity", "fault_site"})
      if ((std::string(key) != "digits" || !(fault || library)) &&
          (std::string(key) != "fault_site" || fault) &&
          (std::string(key) != "suggested_fix" || !library))
        EXPECT_NE(f.get(key), nullptr) << impl << " " << key;
    EXPECT_FALSE(f.at("input").as_array().at(0).at("values").as_array().empty());
  }
}

TEST_F(SoftmaxRun, EveryFindingReplaysFromItsCommandLine) {
  const auto fs = read_findings(*dir_ + "/findings.jsonl");
  ASSERT_FALSE(fs.empty());
  // Replay the first finding of each dtype (a replay costs one input plus its shrink).
  std::map<std::string, bool> done;
  for (const auto& f : fs) {
    const std::string dtype = f.at("dtype").as_string();
    if (done[dtype]) continue;
    done[dtype] = true;
    const std::string replay = f.at("replay").as_string();
    ASSERT_EQ(replay.rfind("stabfuzz ", 0), 0u) << replay;
    const std::string out = testing::temp_dir("replay");
    const auto r = run_stabfuzz(replay.substr(9) + " --quiet --out " + out);
    // An injected finding does not fail the run; a library finding does, unless its kind is the
    // underflow policy.
    EXPECT_EQ(r.code,
              f.at("impl_kind").as_string() == "library" && f.at("kind").as_string() != "underflow"
                  ? 1
                  : 0)
        << r.err;
    const auto again = read_findings(out + "/findings.jsonl");
    ASSERT_EQ(again.size(), 1u) << replay;
    EXPECT_EQ(json::dump(again[0].at("input")), json::dump(f.at("input"))) << replay;
    EXPECT_EQ(again[0].at("detectors").as_string(), f.at("detectors").as_string());
    EXPECT_EQ(json::dump(again[0].at("max_ulp")), json::dump(f.at("max_ulp")));
    EXPECT_EQ(again[0].at("computed").as_string(), f.at("computed").as_string());
  }
  EXPECT_EQ(done.size(), 4u);  // f64, f32, f16, bf16
}

TEST(SoftmaxE2E, AStableOnlyRunExitsZeroWithNoFindings) {
  const std::string dir = testing::temp_dir("stable");
  const auto r = run_stabfuzz(
      "--target softmax --impl softmax/cpu/stable --seed 3 --runs 40 --quiet --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(slurp(dir + "/findings.jsonl").empty());
}

}  // namespace
}  // namespace stabfuzz
