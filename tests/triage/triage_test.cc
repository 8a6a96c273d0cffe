// stabfuzz triage: the standalone reproducers of the committed library corpus files compile
// against the library alone and say what the file says: a `detected` file's reproducer exits 1,
// a `stable` file's 0. Also the report's contents and a finding line as the input.
#include "harness/triage/triage.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "stabfuzz/errors.h"
#include "tests/support/asan.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every corpus file of a library target that has a standalone call for its input.
std::vector<std::pair<std::string, corpus::Entry>> library_files() {
  std::vector<std::pair<std::string, corpus::Entry>> out;
  for (const auto& f :
       fs::recursive_directory_iterator(std::string(STABFUZZ_SOURCE_DIR) + "/corpora")) {
    if (f.path().extension() != ".txt" || f.path().filename() == "README.txt") continue;
    corpus::Entry e;
    try {
      e = corpus::read_file(f.path().string());
    } catch (const InputError&) {
      continue;
    }
    const auto [fam, t] = default_registry().find_target(e.impl);
    if (t && t->kind == TargetKind::library && t->standalone && t->standalone(e.input))
      out.emplace_back(f.path().string(), e);
  }
  return out;
}

// Builds and runs the reproducer of each file: exit status 1 exactly where the file expects a
// finding, no stabfuzz header included.
void expect_reproducers_agree(const std::vector<std::pair<std::string, corpus::Entry>>& files) {
  for (const auto& [path, e] : files) {
    triage::Options o;
    o.out_dir = testing::temp_dir("triage");
    o.run = true;
    const triage::Result r = triage::triage(default_registry(), e, o);
    EXPECT_EQ(r.repro_exit, e.expect == corpus::Expect::detected ? 1 : 0) << path << "\n"
                                                                          << r.repro_output;
    EXPECT_EQ(r.finding_now, e.expect == corpus::Expect::detected) << path;
    const std::string src = slurp(r.source_path);
    EXPECT_EQ(src.find("stabfuzz/"), std::string::npos) << "includes a stabfuzz header: " << path;
  }
}

bool is_torch(const corpus::Entry& e) { return e.impl.find("/torch/") != std::string::npos; }

TEST(Triage, ReproducersOfTheLibraryCorpusFilesBuildAndAgreeWithTheirExpectation) {
  auto all = library_files();
  if (all.empty())
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "no library with standalone reproducers in this build");
  // libtorch's reproducers take 6 s each to build: the first of each dtype here, every one in
  // the slow test below.
  std::vector<std::pair<std::string, corpus::Entry>> files;
  std::set<DType> torch_dtypes;
  for (auto& f : all)
    if (!is_torch(f.second) || torch_dtypes.insert(f.second.input.dtype).second)
      files.push_back(std::move(f));
#ifdef STABFUZZ_TEST_ASAN
  // The reproducers are compiled without sanitizers: under them, three files check the triage
  // code's memory safety; the plain build runs them all.
  files.resize(std::min<size_t>(files.size(), 3));
#endif
  expect_reproducers_agree(files);
}

TEST(Triage, EveryTorchCorpusReproducerBuildsAndAgreesWithItsExpectation) {
  std::vector<std::pair<std::string, corpus::Entry>> files;
  for (auto& f : library_files())
    if (is_torch(f.second)) files.push_back(std::move(f));
  if (files.empty()) STABFUZZ_SKIP_UNLESS_REQUIRED("torch", "built without libtorch");
  expect_reproducers_agree(files);
}

// One reproducer source builds against oneDNN 2 (Debian's) and oneDNN 3 (ci/bootstrap
// --with-onednn3): the normal-range exp flush, still in oneDNN 3.2, reproduces on both, and the
// layer normalization (a C function oneDNN 3.2 has, not the header's _v2 one) builds against 3.
TEST(Triage, OneReproducerBuildsAgainstOnednn2AndOnednn3) {
  if (!default_registry().find_target("exp/onednn/eltwise_exp").second)
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "built without oneDNN");
  const std::string prefix = std::string(STABFUZZ_SOURCE_DIR) + "/.deps/onednn3";
  if (!fs::exists(prefix + "/lib/libdnnl.so.3"))
    STABFUZZ_SKIP_UNLESS_REQUIRED("onednn3", "no oneDNN 3 in .deps (ci/bootstrap --with-onednn3)");
  const std::string corpora = std::string(STABFUZZ_SOURCE_DIR) + "/corpora/";
  for (const char* file : {"exp/regression/onednn-eltwise_exp-f32-normal-range.txt",
                           "layer_norm/regression/onednn-layer_normalization-f32.txt"}) {
    const corpus::Entry e = corpus::read_file(corpora + file);
    for (const std::string& p : {std::string(), prefix}) {
      triage::Options o;
      o.out_dir = testing::temp_dir("triage-v");
      o.run = true;
      o.library_prefix = p;
      const triage::Result r = triage::triage(default_registry(), e, o);
      EXPECT_EQ(r.repro_exit, 1) << file << " " << p << "\n" << r.repro_output;
      EXPECT_NE(r.repro_output.find(p.empty() ? "oneDNN 2." : "oneDNN 3."), std::string::npos)
          << r.repro_output;
      EXPECT_NE(slurp(r.report_path).find(p.empty() ? "Its output here (exit" : "built against"),
                std::string::npos);
    }
  }
}

TEST(Triage, ReportNamesTheLibraryTheErrorAndTheAllowance) {
  const std::string file =
      std::string(STABFUZZ_SOURCE_DIR) + "/corpora/log/regression/onednn-eltwise_log-f32.txt";
  const auto [fam, t] = default_registry().find_target("log/onednn/eltwise_log");
  if (!t) STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "built without oneDNN");
  triage::Options o;
  o.out_dir = testing::temp_dir("triage-log");
  const triage::Result r = triage::triage(default_registry(), corpus::read_file(file), o);
  EXPECT_EQ(r.title.rfind("[oneDNN ", 0), 0u) << r.title;
  EXPECT_NE(r.title.find("accuracy"), std::string::npos) << r.title;
  const std::string md = slurp(r.report_path);
  for (const char* s : {"## Input", "## Computed vs correctly rounded", "## Expected accuracy",
                        "condition number", "repro.cc", "-ldnnl"})
    EXPECT_NE(md.find(s), std::string::npos) << s << "\n" << md;
}

TEST(Triage, AFindingLineBecomesTheSameEntry) {
  const json::Value f = json::parse(
      R"({"target":"dot","impl":"dot/blas/dot","dtype":"f32","seed":3,)"
      R"("input":[{"shape":[2],"values":["0x1p+0","-0x1.8p+1"]},{"shape":[2],"values":["0x1p-2","inf"]}],)"
      R"("params":{"eps":0.5}})");
  const corpus::Entry e = triage::entry_from_finding(f);
  EXPECT_EQ(e.impl, "dot/blas/dot");
  EXPECT_EQ(e.family, "dot");
  EXPECT_EQ(e.input.dtype, DType::f32);
  ASSERT_EQ(e.input.args.size(), 2u);
  EXPECT_EQ(e.input.args[0].values, (std::vector<double>{1.0, -3.0}));
  EXPECT_TRUE(std::isinf(e.input.args[1].values[1]));
  EXPECT_EQ(e.input.param("eps", 0), 0.5);
  EXPECT_EQ(e.seed, 3u);
}

TEST(Triage, ReferenceTargetsAreRefused) {
  corpus::Entry e;
  e.impl = "softmax/cpu/stable";
  e.input.args.push_back({{1}, {1.0}});
  triage::Options o;
  o.out_dir = testing::temp_dir("triage-ref");
  EXPECT_THROW(triage::triage(default_registry(), e, o), InputError);
}

// Every `defect` row of the committed triage table (implementation x dtype x kind) is pinned by a
// corpus file of that implementation, dtype and kind: CI replays it, and the slow tests above
// build and run its standalone reproducer where the library has one. A docs check: it needs no
// library in the build.
TEST(TriageTable, EveryDefectRowHasACorpusFileOfItsKind) {
  std::set<std::string> pinned;
  for (const auto& f :
       fs::recursive_directory_iterator(std::string(STABFUZZ_SOURCE_DIR) + "/corpora")) {
    if (f.path().extension() != ".txt") continue;
    const corpus::Entry e = corpus::read_file(f.path().string());
    if (e.expect == corpus::Expect::detected && e.kind)
      pinned.insert(e.impl + " " + std::string(dtype_name(e.input.dtype)) + " " +
                    std::string(finding_kind_name(*e.kind)));
  }
  std::ifstream md(std::string(STABFUZZ_SOURCE_DIR) + "/docs/results/library-triage.md");
  std::string line;
  int defects = 0;
  while (std::getline(md, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    for (size_t at = 1, bar; (bar = line.find(" | ", at)) != std::string::npos; at = bar + 2)
      cells.push_back(line.substr(at + 1, bar - at - 1));
    if (cells.size() < 11 || cells[10] != "defect") continue;
    ++defects;
    std::string impl = cells[1];
    impl.erase(std::remove(impl.begin(), impl.end(), '`'), impl.end());
    const std::string key = impl + " " + cells[2] + " " + cells[3];
    EXPECT_TRUE(pinned.count(key))
        << "no corpus file (expect: detected, kind: " << cells[3] << ") for the defect row " << key;
  }
  EXPECT_GT(defects, 0) << "no defect row read from docs/results/library-triage.md";
}

}  // namespace
}  // namespace stabfuzz
