// Every bad input a user can give (docs/robustness.md's table, one case per row): exit code 2 and
// one clear line naming the file or flag and what is wrong. Rows the table marks as tested
// elsewhere (plugins: plugin_test; a second campaign on one directory: campaign_test) are not
// repeated here.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;

constexpr const char* kValid =
    "family: softmax\nimpl: softmax/cpu/stable\ndtype: f64\nexpect: stable\ntensor 3\n"
    "0x1p+0 0x1p+1 0x1.8p+1\n";

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("bad_input");
    std::filesystem::create_directories(dir_);
  }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // A command-line or file error: exit 2, nothing on stdout, one stderr line naming it.
  void expect_error_line(const std::string& args, const std::string& what) {
    const auto o = run_stabfuzz(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_EQ(testing::count_lines(o.err), 1) << args << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("stabfuzz: error: ", 0), 0u) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(what), std::string::npos) << args << "\n" << o.err;
    EXPECT_EQ(o.out, "") << args;
  }
  // A corpus file: replay runs every other file, names this one with its line, and exits 2.
  void expect_malformed_corpus(const std::string& text, const std::string& what) {
    const std::string bad = write("corpus/bad.txt", text);
    write("corpus/good.txt", kValid);
    const auto o = run_stabfuzz("replay " + dir_ + "/corpus");
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_NE(o.out.find("ERROR " + bad + ":"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find(what), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("2 files, 1 ok, 0 failed, 1 malformed"), std::string::npos) << o.out;
  }
  std::string dir_;
};

TEST_F(BadInput, CorpusFileTruncated) {
  expect_malformed_corpus(std::string(kValid).substr(0, std::string(kValid).size() - 10),
                          "the tensor declared here lacks 1 values");
}
TEST_F(BadInput, CorpusFileWrongDtype) {
  std::string text = kValid;
  text.replace(text.find("f64"), 3, "f99");
  expect_malformed_corpus(text, "unknown dtype 'f99'");
}
TEST_F(BadInput, CorpusFileNonNumeric) {
  std::string text = kValid;
  text.replace(text.find("0x1p+1"), 6, "abc");
  expect_malformed_corpus(text, "'abc' is not a float");
}
TEST_F(BadInput, CorpusFileNaNTextTheFamilyRejects) {
  std::string text = kValid;
  text.replace(text.find("0x1p+1"), 6, "nan");
  expect_malformed_corpus(text, "softmax logits must be finite");
}
TEST_F(BadInput, CorpusFileHugeShape) {
  std::string text = kValid;
  text.replace(text.find("tensor 3"), 8, "tensor 100000000000");
  expect_malformed_corpus(text, "bad dimension '100000000000'");
}
TEST_F(BadInput, CorpusFileBinaryGarbageIsQuotedPrintably) {
  expect_malformed_corpus(std::string("\x7f\x01\xfe\xff garbage\n", 13),
                          "got '\\x7f\\x01\\xfe\\xff garbage'");
}

TEST_F(BadInput, FlagUnknown) { expect_error_line("--bogus", "unknown option --bogus"); }
TEST_F(BadInput, FlagNotANumber) {
  expect_error_line("--runs abc", "the argument ('abc') for option '--runs' is invalid");
}
TEST_F(BadInput, FlagOutOfRange) {
  expect_error_line("--target softmax --runs -5", "--runs must be positive");
  expect_error_line("--target softmax --seed -1", "--seed 18446744073709551615 is out of range");
  expect_error_line("--target softmax --cancel-digits 99", "--cancel-digits must be in 1..15");
  expect_error_line("campaign --jobs 100000", "at most 512");
  expect_error_line("campaign --time 5x", "--time '5x' is not a duration");
}
// Boost.Program_options looped forever filling its message with such a word (found by ci/selffuzz).
TEST_F(BadInput, FlagValueHoldingABoostPlaceholder) {
  expect_error_line("--target softmax --time %value%x",
                    "'%value%x': a command-line word may not hold a %name% token");
}
TEST_F(BadInput, FlagsConflicting) {
  expect_error_line("campaign --resume", "--resume needs --out DIR");
}
TEST_F(BadInput, UnknownTarget) {
  expect_error_line("--target nosuch", "unknown target 'nosuch' in --target");
}

TEST_F(BadInput, OutputDirectoryUncreatable) {
  expect_error_line("--target softmax --runs 1 --out /proc/stabfuzz/out",
                    "cannot create directory /proc/stabfuzz");
}

// A full disk while findings are written. The test cannot fill a disk, so it gives stabfuzz a
// file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored): its writes then fail as on a full disk, with
// EFBIG instead of ENOSPC, through the same code. The run stops with one line and exit 2, and
// findings.jsonl keeps every whole finding written before, no half line.
TEST_F(BadInput, OutputDiskFull) {
  const std::string args = " --target softmax/injected/no_max_subtract --runs 60 --seed 1 --out ";
  const auto full = run_stabfuzz(args + dir_ + "/whole");
  ASSERT_EQ(full.code, 0) << full.err;  // an injected target that is detected passes
  const std::string all = testing::slurp(dir_ + "/whole/findings.jsonl");
  ASSERT_GT(testing::count_lines(all), 3) << all;

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = all.size() / 2;                         // room for some of the findings, not all
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // ignored stays ignored across exec
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto o = run_stabfuzz(args + dir_ + "/cut");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  // Progress lines on stderr, then the one error line, last.
  EXPECT_EQ(o.code, 2) << o.err;
  const std::string line = "stabfuzz: error: cannot write " + dir_ +
                           "/cut/findings.jsonl: File too large (the findings written before are "
                           "kept)\n";
  EXPECT_EQ(o.err.find("error"), o.err.size() - line.size() + 10) << o.err;
  EXPECT_EQ(o.err.substr(o.err.size() - std::min(o.err.size(), line.size())), line) << o.err;
  const std::string kept = testing::slurp(dir_ + "/cut/findings.jsonl");
  EXPECT_GT(testing::count_lines(kept), 0);
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back(), '\n');
  EXPECT_EQ(all.compare(0, kept.size(), kept), 0) << "the kept findings are the run's first ones";
}

// A path the file system refuses (a name over 255 bytes): found by ci/selffuzz's cli target, where
// std::filesystem::exists threw and stabfuzz ended with "internal error" (exit 3).
TEST_F(BadInput, PathNameTooLong) {
  const std::string longname = dir_ + "/" + std::string(300, 'x');
  expect_error_line("campaign --targets softmax --baseline " + longname + " --out " + dir_ + "/c",
                    "--baseline " + longname + " holds no summary.json (File name too long)");
  expect_error_line("campaign --resume --out " + longname,
                    "--resume: " + longname + " holds no campaign.json (File name too long)");
}

TEST_F(BadInput, CheckpointTruncatedOrGarbage) {
  write("c1/campaign.json", "{\"version\": 1, \"seed\": 1");
  expect_error_line("campaign --resume --out " + dir_ + "/c1",
                    dir_ + "/c1/campaign.json: not a stabfuzz campaign checkpoint");
  write("c2/campaign.json", std::string("\x01\x02garbage", 9));
  expect_error_line("campaign --resume --out " + dir_ + "/c2",
                    dir_ + "/c2/campaign.json: not a stabfuzz campaign checkpoint");
  // Well-formed JSON, but a seed no 64-bit integer holds (a cast was undefined behavior).
  write("c3/campaign.json", "{\"version\": 1, \"seed\": 1e30}");
  expect_error_line("campaign --resume --out " + dir_ + "/c3", "expected an integer");
}

TEST_F(BadInput, ModelFileTruncatedGarbageOrMissing) {
  const std::string trunc = write("trunc.txt", "stabfuzz-monitor-model 1\nmodel mlp\n");
  expect_error_line("monitor infer --model " + trunc, "model file " + trunc);
  const std::string junk = write("junk.txt", std::string("\x89PNG\r\n\x1a\n", 8));
  expect_error_line("monitor infer --model " + junk, "not a stabfuzz monitor model");
  expect_error_line("monitor infer --model " + dir_ + "/none.txt",
                    "cannot read model file " + dir_ + "/none.txt");
}

TEST_F(BadInput, RunDirectoryMissingOrCorrupt) {
  expect_error_line("report " + dir_ + "/none", "no run directory " + dir_ + "/none");
  write("r/summary.json", "{\"target\": ");
  expect_error_line("report " + dir_ + "/r", dir_ + "/r/summary.json: ");
}

}  // namespace
}  // namespace stabfuzz
