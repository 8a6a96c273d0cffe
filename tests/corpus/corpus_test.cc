// Corpus files (harness/corpus/corpus.cc): exact round trip, malformed files rejected with
// file:line, every pinned planted bug failing for its planted change.
#include "harness/corpus/corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/pipeline/evaluate.h"
#include "stabfuzz/errors.h"

namespace stabfuzz {
namespace {

corpus::Entry sample_entry() {
  corpus::Entry e;
  e.family = "attention";
  e.impl = "attention/cpu/stable";
  e.input.dtype = DType::f32;
  e.input.args.push_back(Tensor{{2, 3}, {1.5, -0.0, 0x1p-149, -INFINITY, 3.0e38f, 0.1f}});
  e.input.args.push_back(Tensor{{}, {7}});
  e.input.args.push_back(Tensor{{0}, {}});
  e.input.set_param("scale", 0.125);
  e.input.set_param("causal", 1);
  e.expect = corpus::Expect::detected;
  e.seed = 42;
  e.note = "a note\nover two lines";
  return e;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  // Empty vectors may hold null data, which memcmp must not see.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

TEST(Corpus, RoundTripIsExact) {
  const corpus::Entry e = sample_entry();
  const std::string text = corpus::format(e);
  const corpus::Entry p = corpus::parse(text, "mem.txt");
  EXPECT_EQ(p.family, e.family);
  EXPECT_EQ(p.impl, e.impl);
  EXPECT_EQ(p.input.dtype, e.input.dtype);
  EXPECT_EQ(p.expect, e.expect);
  EXPECT_EQ(p.seed, e.seed);
  EXPECT_EQ(p.note, "a note over two lines");
  ASSERT_EQ(p.input.args.size(), e.input.args.size());
  for (size_t k = 0; k < e.input.args.size(); ++k) {
    EXPECT_EQ(p.input.args[k].shape, e.input.args[k].shape);
    EXPECT_TRUE(same_bits(p.input.args[k].values, e.input.args[k].values)) << k;
  }
  EXPECT_EQ(p.input.params, e.input.params);
  EXPECT_EQ(corpus::format(p), text);  // stable under a second round trip
  EXPECT_NE(text.find("tensor 2x3\n"), std::string::npos);
  EXPECT_NE(text.find("-0x0p+0"), std::string::npos);  // the sign of zero survives
}

// The error names the file and the line of the problem.
std::string error_of(const std::string& text) {
  try {
    corpus::parse(text, "bad.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Corpus, MalformedFilesAreRejectedWithFileAndLine) {
  const std::string head =
      "family: softmax\nimpl: softmax/cpu/stable\ndtype: f32\nexpect: stable\n";
  EXPECT_EQ(error_of(head + "tensor 2\n0x1p+0 zebra\n").rfind("bad.txt:6:", 0), 0u)
      << error_of(head + "tensor 2\n0x1p+0 zebra\n");
  EXPECT_EQ(error_of(head + "tensor 2\n0x1p+0 0x1p+1 0x1p+2\n").rfind("bad.txt:6:", 0), 0u);
  EXPECT_EQ(error_of(head + "tensor 3\n0x1p+0\n").rfind("bad.txt:5:", 0), 0u);  // lacks values
  EXPECT_EQ(error_of(head + "tensor 1\n0x1.0000001p+0\n").rfind("bad.txt:6:", 0), 0u);  // not f32
  EXPECT_EQ(error_of(head + "colour: blue\ntensor 1\n0x1p+0\n").rfind("bad.txt:5:", 0), 0u);
  EXPECT_EQ(error_of(head + "tensor 2y3\n").rfind("bad.txt:5:", 0), 0u);
  const std::string no_expect = error_of("family: softmax\nimpl: x\ndtype: f32\ntensor 1\n1\n");
  EXPECT_EQ(no_expect.rfind("bad.txt:", 0), 0u);
  EXPECT_NE(no_expect.find("no 'expect:' line"), std::string::npos) << no_expect;
  EXPECT_EQ(error_of("family: softmax\ndtype: f99\n").rfind("bad.txt:2:", 0), 0u);
  EXPECT_EQ(error_of("family: softmax\nexpect: maybe\n").rfind("bad.txt:2:", 0), 0u);
  EXPECT_EQ(error_of(head + "params: eps\ntensor 1\n1\n").rfind("bad.txt:5:", 0), 0u);
  EXPECT_EQ(error_of(head + "tensor 1\n1\nseed: 3\n").rfind("bad.txt:7:", 0), 0u);
  EXPECT_EQ(error_of(head + "kind: sloppy\ntensor 1\n1\n").rfind("bad.txt:5:", 0), 0u);
  EXPECT_NE(error_of(head + "kind: nan\ntensor 1\n1\n").find("needs 'expect: detected'"),
            std::string::npos);
}

// Every pinned planted bug (expect: detected on an injected target) fails there because of what
// it plants: the reference target passes the input and the mutant's outputs differ from it. A file
// shrunk to an input where both compute the same (log(1 / x) at x = 0) would stay "detected" for
// another reason and stop guarding the bug.
TEST(Corpus, PinnedPlantedBugsFailForThePlantedChange) {
  namespace fs = std::filesystem;
  const Registry& reg = default_registry();
  int checked = 0;
  for (const auto& p :
       fs::recursive_directory_iterator(std::string(STABFUZZ_SOURCE_DIR) + "/corpora")) {
    if (!p.is_regular_file() || p.path().extension() != ".txt" ||
        p.path().parent_path().filename() != "regression")
      continue;
    std::ifstream in(p.path());
    std::stringstream text;
    text << in.rdbuf();
    const corpus::Entry e = corpus::parse(text.str(), p.path().string());
    if (e.expect != corpus::Expect::detected) continue;
    const auto [family, target] = reg.find_target(e.impl);
    if (!target || target->kind != TargetKind::injected) continue;
    const Target* reference = pipeline::reference_target(*family);
    ASSERT_NE(reference, nullptr) << e.family;
    CestacRequest req;
    req.seed = e.seed.value_or(0);
    req.stream = hash_str(e.impl) ^ (static_cast<uint64_t>(e.input.dtype) << 56);
    EXPECT_TRUE(pipeline::pins_planted_change(*family, *target, *reference, e.input, req))
        << p.path().string();
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

}  // namespace
}  // namespace stabfuzz
