// `monitor infer --model M.onnx` (harness/onnx/infer.cc): the node where an unstable formulation
// loses its digits is named, none in the stable formulations on the same inputs; the command's
// files and errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/infer.h"
#include "harness/onnx/model.h"
#include "harness/onnx/npy.h"
#include "reports/json.h"
#include "tests/support/onnx_graphs.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
TEST(OnnxInfer, NaiveVarianceNamesTheSubtraction) {
  const auto r = infer(naive_variance(), shifted(3000));
  EXPECT_EQ(r.polluting, std::vector<std::string>{"difference"}) << onnx::infer_text(r);
  EXPECT_EQ(r.nodes.back().kind, "accuracy");
  const auto s = infer(two_pass_variance(), shifted(3000));
  EXPECT_TRUE(s.polluting.empty()) << onnx::infer_text(s);
  EXPECT_GT(s.outputs[0].true_min, 5) << onnx::infer_text(s);
  // ONNX's LayerNormalization on the same values (one row of 64): nothing named.
  HostTensor row = shifted(3000);
  row.shape = {1, 64};
  const auto ln = infer(graph({node("layer_norm", "LayerNormalization", {"x", "scale"}, "y")}, "y",
                              {{"scale", f32({64}, std::vector<double>(64, 1.0))}}),
                        row);
  EXPECT_TRUE(ln.polluting.empty()) << onnx::infer_text(ln);
}

TEST(OnnxInfer, NaiveSoftmaxOverflowsInItsExp) {
  const HostTensor x = f32({1, 4}, {100, 1, -2, 50});
  const auto r = infer(naive_softmax(), x);
  EXPECT_EQ(r.polluting, std::vector<std::string>{"exp"}) << onnx::infer_text(r);
  EXPECT_EQ(r.nodes[0].kind, "overflow");
  const auto s = infer(onnx_softmax(), x);
  EXPECT_TRUE(s.polluting.empty()) << onnx::infer_text(s);
}

TEST(OnnxInfer, LogOfOnePlusTinyNamesTheLog) {
  const HostTensor x = f32({4}, {1e-6, 3e-7, -2e-6, 5e-5});
  const auto r = infer(log_one_plus(), x);
  EXPECT_EQ(r.polluting, std::vector<std::string>{"log"}) << onnx::infer_text(r);
  // Moderate x: log(1 + x) is accurate there.
  const auto s = infer(log_one_plus(), f32({4}, {0.5, 2, 3.25, 10}));
  EXPECT_TRUE(s.polluting.empty()) << onnx::infer_text(s);
}

TEST(OnnxInfer, LogOfSigmoidNamesTheLog) {
  const HostTensor x = f32({4}, {-120, -200, -90, 3});  // sigmoid underflows to 0 in f32
  const auto r = infer(log_of_sigmoid(), x);
  EXPECT_EQ(r.polluting, std::vector<std::string>{"log"}) << onnx::infer_text(r);
  EXPECT_EQ(r.nodes[0].kind, "underflow");
  EXPECT_EQ(r.nodes[1].kind, "overflow");  // -inf where the exact value is -200
  const auto s = infer(minus_softplus(), x);
  EXPECT_TRUE(s.polluting.empty()) << onnx::infer_text(s);
  EXPECT_GT(s.outputs[0].true_min, 6) << onnx::infer_text(s);
}

TEST(OnnxInfer, CommandWritesNodesAndPolluting) {
  const std::string dir = temp_dir("");
  onnx::write_model(naive_variance(), dir + "/var.onnx");
  std::filesystem::create_directories(dir + "/test_data_set_0");
  onnx::write_tensor(shifted(3000), "x", dir + "/test_data_set_0/input_0.pb");
  const auto o = run_stabfuzz("monitor infer --model " + dir + "/var.onnx --inputs " + dir +
                              "/test_data_set_0 --out " + dir + "/out");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("difference"), std::string::npos) << o.out;
  // The same input as a .npy file named after the graph input: the same report.
  std::filesystem::create_directories(dir + "/npy");
  onnx::write_npy(dir + "/npy/x.npy", shifted(3000));
  const auto o2 = run_stabfuzz("monitor infer --model " + dir + "/var.onnx --inputs " + dir +
                               "/npy --out " + dir + "/out-npy");
  ASSERT_EQ(o2.code, 0) << o2.err;
  const json::Value s2 = json::parse(slurp(dir + "/out-npy/summary.json"));
  EXPECT_EQ(json::dump(s2.at("nodes")),
            json::dump(json::parse(slurp(dir + "/out/summary.json")).at("nodes")));
  const json::Value s = json::parse(slurp(dir + "/out/summary.json"));
  ASSERT_EQ(s.at("nodes").as_array().size(), 5u);
  EXPECT_EQ(s.at("nodes").as_array()[4].at("op_type").as_string(), "Sub");
  ASSERT_EQ(s.at("polluting").as_array().size(), 1u);
  EXPECT_EQ(s.at("polluting").as_array()[0].as_string(), "difference");
  const std::string html = slurp(dir + "/out/report.html");
  EXPECT_NE(html.find("Digits per node"), std::string::npos);
  EXPECT_NE(html.find("class=\"polluting\"><td>difference"), std::string::npos);
  // Bad input: one line, exit 2.
  const auto missing = run_stabfuzz("monitor infer --model " + dir + "/var.onnx");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(count_lines(missing.err), 1) << missing.err;
  onnx::write_model(graph({node("my_conv", "Conv", {"x", "x"}, "y")}, "y"), dir + "/conv.onnx");
  const auto conv = run_stabfuzz("monitor infer --model " + dir + "/conv.onnx --inputs " + dir +
                                 "/test_data_set_0 --out " + dir + "/out2");
  EXPECT_EQ(conv.code, 2);
  EXPECT_NE(conv.err.find("'my_conv' (Conv)"), std::string::npos) << conv.err;
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
