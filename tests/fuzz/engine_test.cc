// The libFuzzer engine (harness/fuzz/engine.cc) through `stabfuzz fuzz` (libFuzzer is
// process-global): findings that replay, the same first finding from the same seed, the summary at
// libFuzzer's limits and after an interruption, merge.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::count_lines;
using testing::run_stabfuzz;
using testing::slurp;
using testing::temp_dir;
namespace fs = std::filesystem;

[[maybe_unused]] size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

#ifdef STABFUZZ_HAVE_LIBFUZZER

TEST(FuzzCli, FindsTheSoftmaxMutantWithAReplayableInput) {
  const std::string out = temp_dir("fuzz");
  const auto r = run_stabfuzz(
      "fuzz --target softmax --impl softmax/injected/no_max_subtract --time 60 "
      "--seed 3 --quiet --out " +
      out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("detected (planted)"), std::string::npos) << r.out;
  const std::string findings = slurp(out + "/findings.jsonl");
  ASSERT_EQ(count_lines(findings), 1) << findings;  // stops at the first finding
  const json::Value f = json::parse(findings.substr(0, findings.find('\n')));
  EXPECT_EQ(f.at("engine").as_string(), "fuzz");
  EXPECT_EQ(f.at("impl").as_string(), "softmax/injected/no_max_subtract");
  const std::string replay = f.at("replay").as_string();
  ASSERT_EQ(replay.rfind("stabfuzz replay ", 0), 0u) << replay;
  // The replay line reproduces the finding: the crash file is still detected.
  const auto rr = run_stabfuzz(replay.substr(std::string("stabfuzz ").size()));
  EXPECT_EQ(rr.code, 0) << rr.out << rr.err;
  EXPECT_NE(rr.out.find("ok    "), std::string::npos) << rr.out;
  EXPECT_NE(rr.out.find("detected ("), std::string::npos) << rr.out;
  const json::Value s = json::parse(slurp(out + "/summary.json"));
  EXPECT_EQ(s.at("engine").as_string(), "fuzz");
  EXPECT_GE(s.at("first_finding_execution").as_number(), 1);
  // The raw bytes beside the crash file replay through libFuzzer too (a file argument runs once).
  const std::string bin =
      f.at("crash_file").as_string().substr(0, f.at("crash_file").as_string().size() - 4) + ".bin";
  ASSERT_TRUE(fs::exists(bin)) << bin;
  const auto again = run_stabfuzz(
      "fuzz --target softmax --impl softmax/injected/no_max_subtract --seed 3 --quiet "
      "--out " +
      out + "-again -- " + bin);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(count_lines(slurp(out + "-again/findings.jsonl")), 1);
  fs::remove_all(fs::path(out).parent_path());
}

TEST(FuzzCli, SameSeedSameFirstFinding) {
  // kl_div's mutant takes a few dozen mutations: enough for libFuzzer's choices to matter (with
  // comparison tracing on, ASLR made this run differ between processes).
  const std::string cmd =
      "fuzz --target kl_div --impl kl_div/injected/ratio_of_exp --feedback coverage "
      "--runs 3000 --seed 1 --shrink-evals 0 --quiet --out ";
  std::vector<double> first;
  for (int k = 0; k < 3; ++k) {
    const std::string out = temp_dir("s");
    ASSERT_EQ(run_stabfuzz(cmd + out).code, 0);
    first.push_back(
        json::parse(slurp(out + "/summary.json")).at("first_finding_execution").as_number());
    fs::remove_all(fs::path(out).parent_path());
  }
  EXPECT_GT(first[0], 2);  // found by mutation, not by the first inputs
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(first[0], first[2]);
}

TEST(FuzzCli, LibFuzzerLimitsStillWriteTheSummary) {
  const std::string out = temp_dir("lim");
  const auto r = run_stabfuzz(
      "fuzz --target softmax --impl softmax/cpu/stable --dtype f32 --seed 5 --quiet "
      "--feedback coverage --out " +
      out + " -- -runs=40");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("softmax/cpu/stable"), std::string::npos) << r.out;
  const json::Value s = json::parse(slurp(out + "/summary.json"));
  EXPECT_EQ(s.at("feedback").as_string(), "coverage");
  EXPECT_GE(s.at("executions").as_number(), 40);
  EXPECT_LE(s.at("executions").as_number(), 42);  // libFuzzer's -runs plus its initial inputs
  fs::remove_all(fs::path(out).parent_path());
}

// A run stopped from outside (timeout's SIGTERM to the stabfuzz process) ends like one at its own
// limits: summary and reports written, the run's exit code returned by stabfuzz itself.
TEST(FuzzCli, AnInterruptedRunStillWritesItsSummary) {
  const std::string out = temp_dir("int");
  const std::string cmd = std::string(STABFUZZ_BINARY) +
                          " fuzz --target softmax --impl softmax/cpu/stable --dtype f32 --seed 5 "
                          "--quiet --time 120 --out " +
                          out + " 2> " + out + ".err & pid=$!; sleep 3; kill -TERM $pid; wait $pid";
  const int status = std::system(cmd.c_str());
  const std::string err = slurp(out + ".err");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << err;
  EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
  const json::Value s = json::parse(slurp(out + "/summary.json"));
  EXPECT_GT(s.at("executions").as_number(), 0);
  EXPECT_LT(s.at("seconds").as_number(), 60);
  EXPECT_TRUE(fs::exists(out + "/report.md"));
  fs::remove_all(fs::path(out).parent_path());
}

TEST(FuzzCli, MergeKeepsASmallerCorpusWithTheSameFeatures) {
  const std::string dir = temp_dir("");
  const std::string grown = dir + "/grown", merged = dir + "/merged";
  // Grow a corpus on the stable target (no finding expected, so it runs all executions).
  const auto g = run_stabfuzz(
      "fuzz --target softmax --impl softmax/cpu/stable --dtype f32 --runs 400 "
      "--seed 2 --quiet --corpus " +
      grown + " --out " + dir + "/run");
  ASSERT_EQ(g.code, 0) << g.err;
  const size_t before = files_in(grown);
  ASSERT_GT(before, 3u);
  fs::create_directories(merged);
  const auto m = run_stabfuzz(
      "fuzz --target softmax --impl softmax/cpu/stable --dtype f32 --seed 2 -- "
      "-merge=1 " +
      merged + " " + grown);
  ASSERT_EQ(m.code, 0) << m.err;
  const size_t after = files_in(merged);
  EXPECT_GT(after, 0u);
  EXPECT_LE(after, before);
  EXPECT_NE(m.err.find("MERGE-OUTER"), std::string::npos) << m.err;
  fs::remove_all(dir);
}

#endif  // STABFUZZ_HAVE_LIBFUZZER

}  // namespace
}  // namespace stabfuzz
