// monitor::ModelFile -> ONNX graph and test_data_set.
#include "harness/onnx/export.h"

#include <algorithm>
#include <filesystem>

#include "harness/onnx/eval.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {
namespace {

HostTensor tensor(Elem e, std::vector<int64_t> shape, const std::vector<double>& v) {
  HostTensor t{e, std::move(shape), v};
  if (e == Elem::float32)
    for (double& x : t.values) x = static_cast<float>(x);
  return t;
}

}  // namespace

Model export_model(const monitor::ModelFile& m) {
  const auto& s = m.spec;
  const Elem e = m.f64 ? Elem::float64 : Elem::float32;
  const auto F = static_cast<int64_t>(s.features()), C = static_cast<int64_t>(s.classes);
  const auto L = static_cast<int64_t>(s.layer1_out());
  Model g;
  g.opset = 17;
  g.inputs = {"x"};
  g.input_types["x"] = static_cast<int32_t>(e);
  g.input_shapes["x"] = s.kind == monitor::ModelKind::mlp
                            ? std::vector<int64_t>{-1, F}
                            : std::vector<int64_t>{-1, 1, s.height, s.width};
  g.outputs = {"probabilities"};
  const auto& p = m.params;
  g.initializers["b1"] = tensor(e, {static_cast<int64_t>(p.b1.size())}, p.b1);
  g.initializers["w2"] = tensor(e, {L, C}, p.w2);
  g.initializers["b2"] = tensor(e, {C}, p.b2);
  if (s.kind == monitor::ModelKind::mlp) {
    g.initializers["w1"] = tensor(e, {F, static_cast<int64_t>(s.hidden)}, p.w1);
    g.nodes.push_back({"fc1", "Gemm", {"x", "w1", "b1"}, {"z1"}, {}});
  } else {
    g.initializers["w1"] = tensor(e, {static_cast<int64_t>(s.channels), 1, 3, 3}, p.w1);
    g.nodes.push_back({"conv1", "Conv", {"x", "w1", "b1"}, {"z1"}, {}});
  }
  g.nodes.push_back({"tanh1", "Tanh", {"z1"}, {"a1"}, {}});
  std::string a = "a1";
  if (s.kind == monitor::ModelKind::cnn) {
    g.nodes.push_back({"flatten", "Flatten", {"a1"}, {"a1_flat"}, {{"axis", int_attr(1)}}});
    a = "a1_flat";
  }
  g.nodes.push_back({"fc2", "Gemm", {a, "w2", "b2"}, {"logits"}, {}});
  g.nodes.push_back({"softmax", "Softmax", {"logits"}, {"probabilities"}, {}});
  return g;
}

void write_test_set(const Model& g, const monitor::ModelFile& m, const monitor::Dataset& d,
                    size_t rows, const std::string& dir) {
  rows = std::min(rows, d.rows());
  const auto F = static_cast<size_t>(d.features());
  if (F != static_cast<size_t>(m.spec.features()))
    throw InputError("the dataset's rows do not have the model's " +
                     std::to_string(m.spec.features()) + " features");
  const Elem e = m.f64 ? Elem::float64 : Elem::float32;
  std::vector<int64_t> shape = {static_cast<int64_t>(rows), static_cast<int64_t>(F)};
  if (m.spec.kind == monitor::ModelKind::cnn)
    shape = {static_cast<int64_t>(rows), 1, d.height, d.width};
  const HostTensor x =
      tensor(e, shape, std::vector<double>(d.x.begin(), d.x.begin() + static_cast<long>(rows * F)));
  std::filesystem::create_directories(dir);
  write_tensor(x, "x", dir + "/input_0.pb");
  HostTensor out;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    typename Interpreter<T>::Values v;
    for (const auto& [name, t] : g.initializers) v[name] = Interpreter<T>::convert(t);
    v["x"] = Interpreter<T>::convert(x);
    Interpreter<T>::run(g, v);
    const auto& p = v.at("probabilities");
    out = HostTensor{e, p.shape, std::vector<double>(p.v.begin(), p.v.end())};
  };
  if (m.f64)
    run(0.0);
  else
    run(0.0f);
  write_tensor(out, "probabilities", dir + "/output_0.pb");
}

}  // namespace stabfuzz::onnx
