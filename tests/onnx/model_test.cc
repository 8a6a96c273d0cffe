// ONNX models (harness/onnx/model.cc): the .onnx and TensorProto reader and writer, bad files, and
// a test_data_set folder read as the graph's inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/model.h"
#include "harness/onnx/npy.h"
#include "stabfuzz/errors.h"
#include "tests/support/onnx_graphs.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
TEST(OnnxModel, WritesAndReadsBack) {
  const std::string dir = temp_dir("");
  Model m = naive_variance();
  m.initializers["w"] = f32({2, 2}, {1, 2, 3, 4});
  onnx::write_model(m, dir + "/m.onnx");
  const Model r = onnx::read_model(dir + "/m.onnx");
  ASSERT_EQ(r.nodes.size(), m.nodes.size());
  EXPECT_EQ(r.nodes[1].name, "mean_square");
  EXPECT_EQ(r.nodes[1].op, "ReduceMean");
  EXPECT_EQ(r.nodes[1].i("keepdims", 1), 0);
  EXPECT_EQ(r.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(r.outputs, std::vector<std::string>{"var"});
  EXPECT_EQ(r.opset, 17);
  EXPECT_EQ(r.initializers.at("w").values, (std::vector<double>{1, 2, 3, 4}));
  onnx::write_tensor(shifted(3), "x", dir + "/x.pb");
  EXPECT_EQ(onnx::read_tensor(dir + "/x.pb").values, shifted(3).values);
}

TEST(OnnxModel, BadFilesAreInputErrors) {
  const std::string dir = temp_dir("");
  std::ofstream(dir + "/junk.onnx") << "not a model";
  EXPECT_THROW(onnx::read_model(dir + "/junk.onnx"), InputError);
  EXPECT_THROW(onnx::read_model(dir + "/missing.onnx"), InputError);
  Model m = graph({node("n", "Relu", {"nowhere"}, "y")}, "y");
  onnx::write_model(m, dir + "/dangling.onnx");
  try {
    onnx::read_model(dir + "/dangling.onnx");
    ADD_FAILURE() << "a node reading an undefined value was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'nowhere'"), std::string::npos) << e.what();
  }
}

// The inputs of a test_data_set folder, or NumPy files named after the graph input; a missing
// input, a declared type the file does not hold, or a file for a folder is one clear error.
TEST(OnnxModel, ReadsInputsFromATestDataSetOrNumpyFiles) {
  const std::string dir = temp_dir("");
  Model m = naive_variance();
  std::filesystem::create_directories(dir + "/pb");
  onnx::write_tensor(shifted(1), "x", dir + "/pb/input_0.pb");
  EXPECT_EQ(onnx::read_inputs(m, dir + "/pb").at("x").values, shifted(1).values);
  std::filesystem::create_directories(dir + "/npy");
  onnx::write_npy(dir + "/npy/x.npy", shifted(2));
  EXPECT_EQ(onnx::read_inputs(m, dir + "/npy").at("x").values, shifted(2).values);
  auto error = [&](const std::string& inputs) -> std::string {
    try {
      onnx::read_inputs(m, inputs);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  std::filesystem::create_directories(dir + "/empty");
  EXPECT_NE(error(dir + "/empty").find("for the graph input 'x'"), std::string::npos)
      << error(dir + "/empty");
  EXPECT_NE(error(dir + "/pb/input_0.pb").find("is not a folder"), std::string::npos);
  m.input_types["x"] = static_cast<int32_t>(Elem::float64);
  EXPECT_NE(error(dir + "/pb").find("declared with element type 11"), std::string::npos)
      << error(dir + "/pb");
}

// A node's attributes, with the fallback when absent; a model from bytes names its source.
TEST(OnnxModel, AttributesFallBackAndBytesNameTheirSource) {
  const Node n = node("n", "Gemm", {"a", "b"}, "y",
                      {{"transB", onnx::int_attr(1)}, {"perm", onnx::ints_attr({1, 0})}});
  EXPECT_EQ(n.i("transB", 0), 1);
  EXPECT_EQ(n.i("transA", 7), 7);
  EXPECT_EQ(n.ints("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(n.ints("axes").empty());
  EXPECT_DOUBLE_EQ(n.f("alpha", 2.5), 2.5);
  try {
    onnx::parse_model("\xff\xff\xff garbage", "bytes.onnx");
    ADD_FAILURE() << "garbage parsed as a model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes.onnx"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
