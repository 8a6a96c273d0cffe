// The built-in models as ONNX graphs (harness/onnx/export.cc): the MLP's and CNN's nodes, weights
// and input shapes, and a test_data_set of dataset rows that the ONNX backend-test runner passes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/monitor/train.h"
#include "harness/onnx/export.h"
#include "harness/onnx/model.h"
#include "harness/onnx/testdata.h"
#include "stabfuzz/errors.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
// Six 4 x 4 rows of two classes.
monitor::Dataset tiny_data() {
  monitor::Dataset d;
  d.name = "tiny";
  d.height = d.width = 4;
  d.classes = 2;
  for (int r = 0; r < 6; ++r) {
    for (int k = 0; k < 16; ++k) d.x.push_back((r * 16 + k) % 7 / 7.0);
    d.y.push_back(r % 2);
  }
  return d;
}

monitor::ModelFile model(monitor::ModelKind kind, bool f64) {
  monitor::ModelFile m;
  m.spec = monitor::spec_for(kind, tiny_data());
  m.spec.hidden = 5;
  m.f64 = f64;
  m.params = monitor::init_params(m.spec, 1, !f64);
  return m;
}

std::vector<std::string> ops(const onnx::Model& g) {
  std::vector<std::string> v;
  for (const auto& n : g.nodes) v.push_back(n.op);
  return v;
}

TEST(OnnxExport, MlpAndCnnGraphsCarryTheirWeights) {
  const monitor::ModelFile mlp = model(monitor::ModelKind::mlp, false);
  const onnx::Model g = onnx::export_model(mlp);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Gemm", "Tanh", "Gemm", "Softmax"}));
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"probabilities"});
  EXPECT_EQ(g.input_shapes.at("x"), (std::vector<int64_t>{-1, 16}));
  EXPECT_EQ(g.input_types.at("x"), static_cast<int32_t>(onnx::Elem::float32));
  EXPECT_EQ(g.initializers.at("w1").shape, (std::vector<int64_t>{16, 5}));
  EXPECT_EQ(g.initializers.at("w2").shape, (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(g.initializers.at("b2").shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.initializers.at("w1").values, mlp.params.w1);  // f32 weights: exact floats

  const monitor::ModelFile cnn = model(monitor::ModelKind::cnn, true);
  const onnx::Model c = onnx::export_model(cnn);
  EXPECT_EQ(ops(c), (std::vector<std::string>{"Conv", "Tanh", "Flatten", "Gemm", "Softmax"}));
  EXPECT_EQ(c.input_shapes.at("x"), (std::vector<int64_t>{-1, 1, 4, 4}));
  EXPECT_EQ(c.input_types.at("x"), static_cast<int32_t>(onnx::Elem::float64));
  EXPECT_EQ(c.initializers.at("w1").shape,
            (std::vector<int64_t>{static_cast<int64_t>(cnn.spec.channels), 1, 3, 3}));
  EXPECT_EQ(c.initializers.at("w2").values, cnn.params.w2);
}

// The graph and its test set written as a backend test: the interpreter reproduces the outputs
// natively and under CESTAC; rows of the wrong width are an InputError.
TEST(OnnxExport, TestSetReplaysAsABackendTest) {
  const std::string root = temp_dir("");
  for (const auto kind : {monitor::ModelKind::mlp, monitor::ModelKind::cnn}) {
    const monitor::ModelFile m = model(kind, false);
    const onnx::Model g = onnx::export_model(m);
    const std::string dir = root + "/test_" + monitor::model_name(kind);
    onnx::write_test_set(g, m, tiny_data(), 100, dir + "/test_data_set_0");
    onnx::write_model(g, dir + "/model.onnx");
    const onnx::HostTensor x = onnx::read_tensor(dir + "/test_data_set_0/input_0.pb");
    EXPECT_EQ(x.shape[0], 6);  // every row: there are fewer than asked for
    EXPECT_EQ(onnx::read_tensor(dir + "/test_data_set_0/output_0.pb").shape,
              (std::vector<int64_t>{6, 2}));
  }
  const auto r = onnx::run_testdata({root});
  EXPECT_EQ(r.passed, 2) << onnx::testdata_markdown(r);
  monitor::Dataset wide = tiny_data();
  wide.width = 5;
  const monitor::ModelFile m = model(monitor::ModelKind::mlp, false);
  EXPECT_THROW(onnx::write_test_set(onnx::export_model(m), m, wide, 2, root + "/wide"), InputError);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
