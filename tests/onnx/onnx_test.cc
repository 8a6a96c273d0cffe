// ONNX graphs in the monitor: the interpreter (harness/onnx/eval.h) against hand values, the
// example models run end to end, and the message of a build without ONNX.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reports/json.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/eval.h"
#include "harness/onnx/model.h"
#include "harness/onnx/testdata.h"
#include "tests/support/onnx_graphs.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
TEST(OnnxInterpreter, OperatorsAgainstHandValues) {
  using I = onnx::Interpreter<double>;
  Model m =
      graph({node("gemm", "Gemm", {"x", "w", "b"}, "g", {{"transB", onnx::int_attr(1)}}),
             node("t", "Transpose", {"g"}, "gt"), node("r", "Reshape", {"gt", "shape"}, "flat"),
             node("add", "Add", {"g", "b"}, "gb"),  // [2, 2] + [2]: broadcast over rows
             node("sm", "Softmax", {"g"}, "p"),
             node("rm", "ReduceMean", {"g", "axes"}, "mean", {{"keepdims", onnx::int_attr(0)}}),
             node("mx", "ReduceMax", {"g"}, "max",
                  {{"axes", onnx::ints_attr({1})}, {"keepdims", onnx::int_attr(0)}})},
            "p",
            {{"w", f32({2, 2}, {1, 0, 1, 1})},  // transposed: [[1, 1], [0, 1]]
             {"b", f32({2}, {10, 20})},
             {"shape", HostTensor{Elem::int64, {1}, {4}}},
             {"axes", HostTensor{Elem::int64, {1}, {0}}}});
  I::Values v;
  for (const auto& [k, t] : m.initializers) v[k] = I::convert(t);
  v["x"] = I::convert(f32({2, 2}, {1, 2, 3, 4}));
  I::run(m, v);
  // x W^T + b = [[1, 3], [3, 7]] + [10, 20] = [[11, 23], [13, 27]]
  EXPECT_EQ(v["g"].v, (std::vector<double>{11, 23, 13, 27}));
  EXPECT_EQ(v["flat"].v, (std::vector<double>{11, 13, 23, 27}));
  EXPECT_EQ(v["flat"].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(v["gb"].v, (std::vector<double>{21, 43, 23, 47}));
  EXPECT_EQ(v["mean"].v, (std::vector<double>{12, 25}));
  EXPECT_EQ(v["max"].v, (std::vector<double>{23, 27}));
  EXPECT_NEAR(v["p"].v[0], 1 / (1 + std::exp(12.0)), 1e-15);
  EXPECT_NEAR(v["p"].v[0] + v["p"].v[1], 1, 1e-15);
}

TEST(OnnxInterpreter, UnsupportedOperatorNamesTheNode) {
  Model m = graph({node("my_conv", "Conv", {"x", "x"}, "y")}, "y");
  onnx::Interpreter<double>::Values v;
  v["x"] = onnx::Interpreter<double>::convert(f32({1}, {1}));
  try {
    onnx::Interpreter<double>::run(m, v);
    ADD_FAILURE() << "Conv ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'my_conv' (Conv)"), std::string::npos) << e.what();
  }
}

// The built-in MLP and CNN as ONNX files (examples/models/make-models): they run, agree with the
// outputs stored beside them, and, trained with a stable loss, have no polluting node.
TEST(OnnxExamples, BuiltInModelsRunAndNameNoNode) {
  const std::string root = std::string(STABFUZZ_SOURCE_DIR) + "/examples/models";
  const auto r = onnx::run_testdata({root});
  EXPECT_EQ(r.passed, 2) << onnx::testdata_markdown(r);
  for (const char* model : {"mlp", "cnn"}) {
    const std::string dir = temp_dir("");
    const auto o =
        run_stabfuzz("monitor infer --model " + root + "/" + model + "/model.onnx --inputs " +
                     root + "/" + model + "/test_data_set_0 --out " + dir);
    ASSERT_EQ(o.code, 0) << o.err;
    const json::Value s = json::parse(slurp(dir + "/summary.json"));
    EXPECT_TRUE(s.at("polluting").as_array().empty()) << o.out;
    EXPECT_GE(s.at("nodes").as_array().size(), 4u);
  }
}
#else
TEST(OnnxModel, BuiltWithoutOnnx) {
  const auto o = run_stabfuzz("monitor infer --model m.onnx --inputs d");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("libonnx-dev"), std::string::npos) << o.err;
  STABFUZZ_SKIP_UNLESS_REQUIRED("onnx", "built without ONNX (libonnx-dev)");
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
