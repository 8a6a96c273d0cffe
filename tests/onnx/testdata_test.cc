// ONNX backend tests as ground truth (harness/onnx/testdata.cc): pass, fail and skip, and the
// markdown summary.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/model.h"
#include "harness/onnx/testdata.h"
#include "stabfuzz/errors.h"
#include "tests/support/onnx_graphs.h"
#include "tests/support/require.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
// ONNX's own backend tests: every one whose operators the interpreter supports agrees with its
// reference outputs, natively and as the CESTAC samples' mean.
TEST(OnnxTestdata, SupportedTestsAgreeWithTheReferenceOutputs) {
#ifndef STABFUZZ_ONNX_TESTDATA_DIR
  STABFUZZ_SKIP_UNLESS_REQUIRED("onnx", "libonnx-testdata is not installed (ci/bootstrap)");
#else
  const std::string root = STABFUZZ_ONNX_TESTDATA_DIR;
  const auto r = onnx::run_testdata(
      {root + "/node", root + "/simple", root + "/pytorch-operator", root + "/pytorch-converted"});
  std::printf("%s", onnx::testdata_markdown(r).c_str());
  EXPECT_EQ(r.failed, 0) << onnx::testdata_markdown(r);
  EXPECT_GE(r.passed, 100);
#endif
}

// A test folder as libonnx-testdata lays it out: model.onnx and test_data_set_0.
void write_case(const std::string& dir, const Model& m, const HostTensor& in,
                const HostTensor& out) {
  std::filesystem::create_directories(dir + "/test_data_set_0");
  onnx::write_model(m, dir + "/model.onnx");
  onnx::write_tensor(in, "x", dir + "/test_data_set_0/input_0.pb");
  onnx::write_tensor(out, "y", dir + "/test_data_set_0/output_0.pb");
}

// The right output passes, a wrong one fails naming the set, an unsupported operator is skipped,
// and the markdown counts each.
TEST(OnnxTestdata, PassFailAndSkipAreCountedAndListed) {
  const std::string root = temp_dir("");
  const Model relu = graph({node("r", "Relu", {"x"}, "y")}, "y");
  const HostTensor x = f32({4}, {-1, 2, -3, 4});
  write_case(root + "/test_relu", relu, x, f32({4}, {0, 2, 0, 4}));
  write_case(root + "/test_relu_wrong", relu, x, f32({4}, {0, 2, 0, 5}));
  write_case(root + "/test_fly", graph({node("f", "Fly", {"x"}, "y")}, "y"), x, x);
  const auto r = onnx::run_testdata({root});
  EXPECT_EQ(r.run, 2);  // the skipped one is not run
  EXPECT_EQ(r.passed, 1);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.skipped, 1);
  // In folder order, each named after its root.
  const std::string base = std::filesystem::path(root).filename().string() + "/";
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].name, base + "test_fly");
  EXPECT_EQ(r.cases[0].status, "skip");
  EXPECT_EQ(r.cases[0].reason, "operator Fly not supported");
  EXPECT_EQ(r.cases[1].name, base + "test_relu");
  EXPECT_EQ(r.cases[1].status, "pass") << r.cases[1].reason;
  EXPECT_EQ(r.cases[1].ops, std::vector<std::string>{"Relu"});
  EXPECT_EQ(r.cases[2].name, base + "test_relu_wrong");
  EXPECT_EQ(r.cases[2].status, "fail");
  EXPECT_NE(
      r.cases[2].reason.find("test_data_set_0: native: output 'y' element 3 is 4, reference 5"),
      std::string::npos)
      << r.cases[2].reason;
  EXPECT_THROW(onnx::run_testdata({root + "/missing"}), InputError);
  const std::string md = onnx::testdata_markdown(r);
  EXPECT_EQ(md.rfind("3 tests: 2 run, 1 passed, 1 failed, 1 skipped", 0), 0u) << md;
  EXPECT_NE(md.find("| Relu | 2 | 1 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `" + base + "test_relu_wrong`: test_data_set_0"), std::string::npos) << md;
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
