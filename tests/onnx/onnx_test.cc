// ONNX graphs in the monitor: the reader and writer, the interpreter against hand values, and
// `monitor infer` naming the node where an unstable formulation loses its digits (and none in the
// stable formulations and ONNX's own Softmax on the same inputs).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "reports/json.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/eval.h"
#include "harness/onnx/fuzz.h"
#include "harness/onnx/infer.h"
#include "harness/onnx/model.h"
#include "harness/onnx/npy.h"
#include "harness/onnx/testdata.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
using onnx::Attr;
using onnx::Elem;
using onnx::HostTensor;
using onnx::Model;
using onnx::Node;

Node node(std::string name, std::string op, std::vector<std::string> in, std::string out,
          std::map<std::string, Attr> attrs = {}) {
  return Node{std::move(name), std::move(op), std::move(in), {std::move(out)}, std::move(attrs)};
}
HostTensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  for (double& x : v) x = static_cast<float>(x);
  return HostTensor{Elem::float32, std::move(shape), std::move(v)};
}
Model graph(std::vector<Node> nodes, std::string out, std::map<std::string, HostTensor> init = {}) {
  Model m;
  m.opset = 17;
  m.nodes = std::move(nodes);
  m.inputs = {"x"};
  m.outputs = {std::move(out)};
  m.initializers = std::move(init);
  return m;
}

// 64 values around `offset` (spread 1), as f32.
HostTensor shifted(double offset) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd;
  std::vector<double> v;
  for (int i = 0; i < 64; ++i) v.push_back(offset + nd(g));
  return f32({64}, v);
}

// E[x^2] - E[x]^2, as a graph decomposes it.
Model naive_variance() {
  return graph({node("square", "Mul", {"x", "x"}, "sq"),
                node("mean_square", "ReduceMean", {"sq"}, "m2", {{"keepdims", onnx::int_attr(0)}}),
                node("mean", "ReduceMean", {"x"}, "m", {{"keepdims", onnx::int_attr(0)}}),
                node("square_mean", "Mul", {"m", "m"}, "msq"),
                node("difference", "Sub", {"m2", "msq"}, "var")},
               "var");
}
// mean((x - mean)^2).
Model two_pass_variance() {
  return graph({node("mean", "ReduceMean", {"x"}, "m", {{"keepdims", onnx::int_attr(1)}}),
                node("centre", "Sub", {"x", "m"}, "d"), node("square", "Mul", {"d", "d"}, "d2"),
                node("variance", "ReduceMean", {"d2"}, "var", {{"keepdims", onnx::int_attr(0)}})},
               "var");
}
Model naive_softmax() {
  return graph({node("exp", "Exp", {"x"}, "e"),
                node("sum", "ReduceSum", {"e"}, "s", {{"keepdims", onnx::int_attr(1)}}),
                node("divide", "Div", {"e", "s"}, "y")},
               "y");
}
Model onnx_softmax() { return graph({node("softmax", "Softmax", {"x"}, "y")}, "y"); }
Model log_one_plus() {
  return graph({node("one_plus", "Add", {"x", "one"}, "a"), node("log", "Log", {"a"}, "y")}, "y",
               {{"one", f32({}, {1})}});
}

Model log_of_sigmoid() {
  return graph({node("sigmoid", "Sigmoid", {"x"}, "s"), node("log", "Log", {"s"}, "y")}, "y");
}
// log sigmoid(x) = -softplus(-x).
Model minus_softplus() {
  return graph({node("negate", "Neg", {"x"}, "nx"), node("softplus", "Softplus", {"nx"}, "sp"),
                node("negate_back", "Neg", {"sp"}, "y")},
               "y");
}

onnx::InferReport infer(const Model& m, const HostTensor& x) {
  return onnx::infer(m, {{"x", x}}, false, 1);
}

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

// .npy files as np.save writes them: every dtype read back exactly, versions 1 and 2, scalars.
TEST(OnnxNpy, ReadsWhatNumpyWrites) {
  // np.save(f, np.array([[1.5, -2], [3, 0.25]], dtype=np.float32)), byte for byte.
  std::string v1("\x93NUMPY\x01\x00\x76\x00", 10);
  v1 += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  v1 += std::string(118 - 60, ' ') + "\n";
  ASSERT_EQ(v1.size(), 128u);
  for (float x : {1.5f, -2.0f, 3.0f, 0.25f}) v1.append(reinterpret_cast<const char*>(&x), 4);
  const HostTensor t = onnx::parse_npy(v1, "a.npy");
  EXPECT_EQ(t.elem, Elem::float32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.values, (std::vector<double>{1.5, -2, 3, 0.25}));
  // Version 2 (a 4-byte header length), a 0-d int8 array and a 1-d bool array.
  std::string v2("\x93NUMPY\x02\x00", 8);
  const std::string h = "{'descr': '|i1', 'fortran_order': False, 'shape': (), }\n";
  v2 += std::string{static_cast<char>(h.size()), 0, 0, 0} + h + "\xfe";
  const HostTensor s = onnx::parse_npy(v2, "s.npy");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.values, (std::vector<double>{-2}));
  for (const HostTensor& x :
       {HostTensor{Elem::bool8, {3}, {1, 0, 1}}, HostTensor{Elem::int64, {2}, {-7, 1e15}},
        HostTensor{Elem::uint16, {1, 2}, {65535, 3}}, HostTensor{Elem::float64, {0}, {}}}) {
    const HostTensor back = onnx::parse_npy(onnx::npy_bytes(x), "x.npy");
    EXPECT_EQ(back.elem, x.elem);
    EXPECT_EQ(back.shape, x.shape);
    EXPECT_EQ(back.values, x.values);
  }
}

TEST(OnnxNpy, BadFilesAreOneClearError) {
  const std::string good = onnx::npy_bytes(f32({3}, {1, 2, 3}));
  auto error = [](const std::string& bytes) -> std::string {
    try {
      onnx::parse_npy(bytes, "x.npy");
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(error("PK\x03\x04 a zip").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error(good.substr(0, good.size() - 1)).find("bytes of data"), std::string::npos);
  std::string big = good;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_NE(error(big).find("big-endian"), std::string::npos);
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(error(fortran).find("Fortran"), std::string::npos);
  std::string half = good;
  half.replace(half.find("<f4"), 3, "<f2");
  EXPECT_NE(error(half).find("dtype"), std::string::npos);
  std::string huge = good;
  huge.replace(huge.find("(3,)"), 4, "(99999999999,)");
  EXPECT_NE(error(huge).find("too large"), std::string::npos) << error(huge);
}

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
// --fuzz, from inputs where each unstable graph is fine, finds within 100 trials (seed 1) an
// input that breaks the node the formulation puts the loss in, and its folder replays the break.
TEST(OnnxFuzz, FindsTheBreakingNodeAndItsFolderReplays) {
  struct Case {
    Model m;
    HostTensor start;
    std::string node;
  };
  const std::vector<Case> cases = {{naive_variance(), shifted(0), "difference"},
                                   {naive_softmax(), f32({1, 4}, {1, 2, -1, 0.5}), "exp"},
                                   {log_one_plus(), f32({4}, {0.5, 2, 3.25, 10}), "log"},
                                   {log_of_sigmoid(), f32({4}, {-1, 2, -3, 0.5}), "log"}};
  for (const auto& c : cases) {
    EXPECT_TRUE(infer(c.m, c.start).polluting.empty()) << c.node;
    const std::string dir = temp_dir("");
    const auto f = onnx::fuzz_inputs(c.m, {{"x", c.start}}, false, 1, 60.0, dir, 100);
    const onnx::FuzzBreak* hit = nullptr;
    for (const auto& b : f.breaks)
      if (b.node == c.node) hit = &b;
    ASSERT_NE(hit, nullptr) << c.node << ": " << f.trials << " trials, " << f.breaks.size()
                            << " breaks";
    Model m = c.m;
    m.input_types["x"] = static_cast<int32_t>(Elem::float32);
    const auto replay = onnx::infer(m, onnx::read_inputs(m, hit->dir), false, 1);
    EXPECT_NE(std::find(replay.polluting.begin(), replay.polluting.end(), c.node),
              replay.polluting.end())
        << onnx::infer_text(replay);
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
