// Replaying corpus files (harness/corpus/replay.cc): each expectation checked, the kind of a
// finding, malformed files named and skipped, `stabfuzz replay` and its --junit output.
#include "harness/corpus/replay.h"

#include <expat.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/corpus/corpus.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Corpus, ReplayChecksEachExpectation) {
  const std::string dir = testing::temp_dir("corpus");
  const std::string stable_text =
      "family: softmax\nimpl: softmax/cpu/stable\ndtype: f64\nexpect: stable\ntensor 3\n"
      "0x1p+0 0x1p+1 -0x1.8p+1\n";
  const std::string planted_text =
      "family: softmax\nimpl: softmax/injected/no_max_subtract\ndtype: f32\nexpect: detected\n"
      "tensor 2\n0x1.4p+7 0x1p+0\n";  // 160: exp overflows in f32
  write(dir + "/good", "stable.txt", stable_text);
  write(dir + "/good/softmax/regression", "planted.txt", planted_text);
  std::ostringstream out;
  EXPECT_EQ(corpus::replay(default_registry(), {dir + "/good"}, out), 0) << out.str();
  EXPECT_NE(out.str().find("2 files, 2 ok, 0 failed, 0 malformed"), std::string::npos) << out.str();

  // A tampered expectation fails: the stable target is not "detected" on a benign row.
  std::string tampered = stable_text;
  tampered.replace(tampered.find("expect: stable"), 14, "expect: detected");
  write(dir + "/bad", "tampered.txt", tampered);
  std::ostringstream out2;
  EXPECT_EQ(corpus::replay(default_registry(), {dir + "/bad"}, out2), 1);
  EXPECT_NE(out2.str().find("FAIL"), std::string::npos) << out2.str();

  // A malformed file is named with its line and skipped, the others still run, and the run exits
  // 2 (bad input) even where another file failed.
  write(dir + "/bad", "broken.txt",
        "family: softmax\nimpl: softmax/cpu/stable\ndtype: f64\nexpect: stable\ntensor 1\nxyz\n");
  write(dir + "/bad", "unknown_impl.txt",
        "family: softmax\nimpl: softmax/cpu/nope\ndtype: f64\nexpect: stable\ntensor 1\n0x1p+0\n");
  write(dir + "/bad", "ok.txt", stable_text);
  std::ostringstream out3;
  EXPECT_EQ(corpus::replay(default_registry(), {dir + "/bad"}, out3), 2);
  EXPECT_NE(out3.str().find("broken.txt:6:"), std::string::npos) << out3.str();
  EXPECT_NE(out3.str().find("unknown implementation"), std::string::npos) << out3.str();
  EXPECT_NE(out3.str().find("4 files, 1 ok, 1 failed, 2 malformed"), std::string::npos)
      << out3.str();
  EXPECT_THROW(corpus::collect({dir + "/missing"}), InputError);
}

TEST(Corpus, ReplayChecksTheKindOfAFinding) {
  const std::string dir = testing::temp_dir("corpus-kind");
  // 160 in f32: exp overflows, inf / inf is NaN, so the naive softmax's finding is of kind nan.
  const std::string base =
      "family: softmax\nimpl: softmax/injected/no_max_subtract\ndtype: f32\nexpect: detected\n"
      "tensor 2\n0x1.4p+7 0x1p+0\n";
  write(dir + "/right", "nan.txt", "kind: nan\n" + base);
  std::ostringstream out;
  EXPECT_EQ(corpus::replay(default_registry(), {dir + "/right"}, out), 0) << out.str();
  EXPECT_NE(out.str().find("detected (nan"), std::string::npos) << out.str();
  write(dir + "/wrong", "accuracy.txt", "kind: accuracy\n" + base);
  std::ostringstream out2;
  EXPECT_EQ(corpus::replay(default_registry(), {dir + "/wrong"}, out2), 1) << out2.str();
  EXPECT_NE(out2.str().find("detected as nan, not accuracy"), std::string::npos) << out2.str();
  EXPECT_EQ(corpus::format(corpus::parse("kind: nan\n" + base, "k.txt")).find("kind: nan\n") ==
                std::string::npos,
            false);
}

TEST(Corpus, ReplayCommand) {
  const std::string dir = testing::temp_dir("corpus_cli");
  write(dir, "a.txt",
        "family: softmax\nimpl: softmax/cpu/stable\ndtype: f32\nexpect: stable\ntensor 2\n0x1p+0 "
        "0x1p+1\n");
  auto o = testing::run_stabfuzz("replay " + dir);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("1 files, 1 ok"), std::string::npos) << o.out;
  write(dir, "b.txt", "family: softmax\n");
  o = testing::run_stabfuzz("replay " + dir + " " + dir + "/a.txt");
  EXPECT_EQ(o.code, 2);  // a malformed file is bad input
  EXPECT_NE(o.out.find("b.txt:"), std::string::npos) << o.out;
  EXPECT_EQ(testing::run_stabfuzz("replay").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("replay " + dir + "/nothing_here").code, 2);
}

namespace fs = std::filesystem;
using testing::run_stabfuzz;
using testing::slurp;
using testing::temp_dir;

struct Xml {
  bool ok = false;
  std::map<std::string, int> elements;
  std::vector<std::map<std::string, std::string>> cases;
  std::string tests, failures, errors;
};

Xml parse_xml(const std::string& xml) {
  Xml p;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  XML_SetUserData(parser, &p);
  XML_SetElementHandler(
      parser,
      [](void* ud, const XML_Char* name, const XML_Char** attrs) {
        auto* p = static_cast<Xml*>(ud);
        const std::string n = name;
        ++p->elements[n];
        std::map<std::string, std::string> a;
        for (int i = 0; attrs[i]; i += 2) a[attrs[i]] = attrs[i + 1];
        if (n == "testsuites") {
          p->tests = a["tests"];
          p->failures = a["failures"];
          p->errors = a["errors"];
        }
        if (n == "testcase") p->cases.push_back(a);
      },
      [](void*, const XML_Char*) {});
  p.ok = XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_OK;
  XML_ParserFree(parser);
  return p;
}

TEST(ReplayJunit, OneTestcasePerFileWithFailuresAndErrors) {
  const std::string dir = temp_dir("");
  const std::string src = std::string(STABFUZZ_SOURCE_DIR) + "/corpora/softmax/regression/";
  fs::copy_file(src + "injected-no_max_subtract-f64.txt", dir + "/detected.txt");
  fs::copy_file(src + "cpu-stable-f64.txt", dir + "/stable.txt");
  // The stable target's input, now claimed to be detected: a failed expectation.
  std::string text = slurp(src + "cpu-stable-f64.txt");
  text.replace(text.find("expect: stable"), 14, "expect: detected");
  std::ofstream(dir + "/wrong.txt") << text;
  std::ofstream(dir + "/broken.txt") << "family: softmax\nimpl: softmax/cpu/stable\nbogus line\n";
  const std::string junit = dir + "/out.xml";
  const auto r = run_stabfuzz("replay " + dir + " --junit " + junit);
  EXPECT_EQ(r.code, 2) << r.out;  // a malformed file: bad input
  Xml x = parse_xml(slurp(junit));
  ASSERT_TRUE(x.ok) << slurp(junit);
  EXPECT_EQ(x.tests, "4");
  EXPECT_EQ(x.failures, "1");
  EXPECT_EQ(x.errors, "1");
  EXPECT_EQ(x.elements["testcase"], 4);
  EXPECT_EQ(x.elements["failure"], 1);
  EXPECT_EQ(x.elements["error"], 1);
  std::map<std::string, std::string> classes;
  for (auto& c : x.cases) classes[fs::path(c["name"]).filename().string()] = c["classname"];
  EXPECT_EQ(classes["detected.txt"], "softmax/injected/no_max_subtract.f64");
  // All good: exit 0, no failure elements.
  fs::remove(dir + "/wrong.txt");
  fs::remove(dir + "/broken.txt");
  const auto ok = run_stabfuzz("replay " + dir + " --junit " + junit);
  EXPECT_EQ(ok.code, 0) << ok.out;
  Xml y = parse_xml(slurp(junit));
  EXPECT_EQ(y.tests, "2");
  EXPECT_EQ(y.elements["failure"] + y.elements["error"], 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stabfuzz
