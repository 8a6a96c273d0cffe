// Small ONNX graphs built in code for the onnx tests: nodes, float tensors, and the unstable
// formulations (naive variance, softmax, log(1 + x), log sigmoid) next to their stable ones.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "harness/onnx/infer.h"
#include "harness/onnx/model.h"

namespace stabfuzz::testing {

using onnx::Attr;
using onnx::Elem;
using onnx::HostTensor;
using onnx::Model;
using onnx::Node;

inline Node node(std::string name, std::string op, std::vector<std::string> in, std::string out,
                 std::map<std::string, Attr> attrs = {}) {
  return Node{std::move(name), std::move(op), std::move(in), {std::move(out)}, std::move(attrs)};
}
inline HostTensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  for (double& x : v) x = static_cast<float>(x);
  return HostTensor{Elem::float32, std::move(shape), std::move(v)};
}
inline Model graph(std::vector<Node> nodes, std::string out,
                   std::map<std::string, HostTensor> init = {}) {
  Model m;
  m.opset = 17;
  m.nodes = std::move(nodes);
  m.inputs = {"x"};
  m.outputs = {std::move(out)};
  m.initializers = std::move(init);
  return m;
}

// 64 values around `offset` (spread 1), as f32.
inline HostTensor shifted(double offset) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd;
  std::vector<double> v;
  for (int i = 0; i < 64; ++i) v.push_back(offset + nd(g));
  return f32({64}, v);
}

// E[x^2] - E[x]^2, as a graph decomposes it.
inline Model naive_variance() {
  return graph({node("square", "Mul", {"x", "x"}, "sq"),
                node("mean_square", "ReduceMean", {"sq"}, "m2", {{"keepdims", onnx::int_attr(0)}}),
                node("mean", "ReduceMean", {"x"}, "m", {{"keepdims", onnx::int_attr(0)}}),
                node("square_mean", "Mul", {"m", "m"}, "msq"),
                node("difference", "Sub", {"m2", "msq"}, "var")},
               "var");
}
// mean((x - mean)^2).
inline Model two_pass_variance() {
  return graph({node("mean", "ReduceMean", {"x"}, "m", {{"keepdims", onnx::int_attr(1)}}),
                node("centre", "Sub", {"x", "m"}, "d"), node("square", "Mul", {"d", "d"}, "d2"),
                node("variance", "ReduceMean", {"d2"}, "var", {{"keepdims", onnx::int_attr(0)}})},
               "var");
}
inline Model naive_softmax() {
  return graph({node("exp", "Exp", {"x"}, "e"),
                node("sum", "ReduceSum", {"e"}, "s", {{"keepdims", onnx::int_attr(1)}}),
                node("divide", "Div", {"e", "s"}, "y")},
               "y");
}
inline Model onnx_softmax() { return graph({node("softmax", "Softmax", {"x"}, "y")}, "y"); }
inline Model log_one_plus() {
  return graph({node("one_plus", "Add", {"x", "one"}, "a"), node("log", "Log", {"a"}, "y")}, "y",
               {{"one", f32({}, {1})}});
}

inline Model log_of_sigmoid() {
  return graph({node("sigmoid", "Sigmoid", {"x"}, "s"), node("log", "Log", {"s"}, "y")}, "y");
}
// log sigmoid(x) = -softplus(-x).
inline Model minus_softplus() {
  return graph({node("negate", "Neg", {"x"}, "nx"), node("softplus", "Softplus", {"nx"}, "sp"),
                node("negate_back", "Neg", {"sp"}, "y")},
               "y");
}

inline onnx::InferReport infer(const Model& m, const HostTensor& x) {
  return onnx::infer(m, {{"x", x}}, false, 1);
}
}  // namespace stabfuzz::testing
