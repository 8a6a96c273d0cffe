// The ONNX backward (harness/onnx/grad.h) against central finite differences at 256 bits, operator
// by operator, and the first-order error bounds of harness/onnx/prop.h.
#include <gtest/gtest.h>

#ifdef STABFUZZ_HAVE_ONNX
#include <cmath>
#include <random>

#include "harness/onnx/big.h"
#include "harness/onnx/grad.h"
#include "harness/onnx/prop.h"
#include "stabfuzz/errors.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
using onnx::Big;
using onnx::Elem;
using onnx::HostTensor;
using onnx::Node;
using onnx::Tensor;
using BigValues = onnx::Values<Big>;

struct Case {
  std::string label;
  Node node;
  std::map<std::string, HostTensor> inputs;  // in the node's input order
};

// Values in [lo, hi] away from 0 (no kinks of Relu, Abs, MaxPool ties).
HostTensor random(std::vector<int64_t> shape, std::mt19937_64& g, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> u(lo, hi);
  HostTensor t{Elem::float64, shape, {}};
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  for (size_t k = 0; k < n; ++k) {
    double v = u(g);
    if (std::fabs(v) < 0.05) v += v < 0 ? -0.1 : 0.1;
    t.values.push_back(v);
  }
  return t;
}
HostTensor ints(std::vector<double> v) {
  return HostTensor{Elem::int64, {static_cast<int64_t>(v.size())}, std::move(v)};
}

Node node(const std::string& op, std::vector<std::string> in,
          std::map<std::string, onnx::Attr> attrs = {}) {
  return Node{op, op, std::move(in), {"y"}, std::move(attrs)};
}
onnx::Attr f_attr(double v) {
  onnx::Attr a;
  a.type = 1;
  a.f = v;
  return a;
}

// sum_k r_k y_k: its gradient with respect to y is r.
Big weighted(const BigValues& v, const Tensor<Big>& r) {
  Big s = 0.0;
  const auto& y = v.at("y");
  for (size_t k = 0; k < y.size(); ++k) s = s + y.v[k] * r.v[k];
  return s;
}

std::vector<Case> cases() {
  std::mt19937_64 g(11);
  std::vector<Case> cs;
  auto un = [&](const std::string& op, double lo = -2, double hi = 2,
                std::map<std::string, onnx::Attr> attrs = {}) {
    cs.push_back({op, node(op, {"a"}, std::move(attrs)), {{"a", random({2, 3}, g, lo, hi)}}});
  };
  for (const char* op : {"Neg", "Abs", "Relu", "Tanh", "Sigmoid", "Softplus", "Exp", "Erf",
                         "Reciprocal", "Identity"})
    un(op);
  un("LeakyRelu", -2, 2, {{"alpha", f_attr(0.1)}});
  un("Log", 0.2, 3);
  un("Sqrt", 0.2, 3);
  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    cs.push_back({std::string(op) + " broadcast",
                  node(op, {"a", "b"}),
                  {{"a", random({2, 3}, g)}, {"b", random({3}, g, 0.5, 2)}}});
  cs.push_back(
      {"MatMul", node("MatMul", {"a", "b"}), {{"a", random({2, 3}, g)}, {"b", random({3, 4}, g)}}});
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      cs.push_back({"Gemm transA " + std::to_string(ta) + " transB " + std::to_string(tb),
                    node("Gemm", {"a", "b", "c"},
                         {{"transA", onnx::int_attr(ta)},
                          {"transB", onnx::int_attr(tb)},
                          {"alpha", f_attr(0.75)},
                          {"beta", f_attr(1.5)}}),
                    {{"a", random(ta ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{2, 3}, g)},
                     {"b", random(tb ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, g)},
                     {"c", random({4}, g)}}});
  for (int ax : {-1, 0}) {
    cs.push_back({"Softmax axis " + std::to_string(ax),
                  node("Softmax", {"a"}, {{"axis", onnx::int_attr(ax)}}),
                  {{"a", random({3, 4}, g)}}});
    cs.push_back({"LogSoftmax axis " + std::to_string(ax),
                  node("LogSoftmax", {"a"}, {{"axis", onnx::int_attr(ax)}}),
                  {{"a", random({3, 4}, g)}}});
  }
  cs.push_back(
      {"Conv strides pads",
       node("Conv", {"a", "w", "bias"},
            {{"strides", onnx::ints_attr({2, 1})}, {"pads", onnx::ints_attr({1, 0, 1, 1})}}),
       {{"a", random({2, 2, 5, 4}, g)}, {"w", random({3, 2, 3, 2}, g)}, {"bias", random({3}, g)}}});
  cs.push_back({"Conv group 2",
                node("Conv", {"a", "w"}, {{"group", onnx::int_attr(2)}}),
                {{"a", random({1, 4, 4, 4}, g)}, {"w", random({2, 2, 2, 2}, g)}}});
  cs.push_back({"MaxPool",
                node("MaxPool", {"a"}, {{"kernel_shape", onnx::ints_attr({2, 2})}}),
                {{"a", random({1, 2, 4, 4}, g)}}});
  cs.push_back({"AveragePool pads",
                node("AveragePool", {"a"},
                     {{"kernel_shape", onnx::ints_attr({3, 3})},
                      {"strides", onnx::ints_attr({2, 2})},
                      {"pads", onnx::ints_attr({1, 1, 1, 1})}}),
                {{"a", random({1, 2, 5, 5}, g)}}});
  cs.push_back(
      {"GlobalAveragePool", node("GlobalAveragePool", {"a"}), {{"a", random({2, 3, 2, 2}, g)}}});
  cs.push_back({"ReduceSum",
                node("ReduceSum", {"a", "axes"}, {{"keepdims", onnx::int_attr(0)}}),
                {{"a", random({2, 3, 2}, g)}, {"axes", ints({1})}}});
  cs.push_back({"ReduceMean",
                node("ReduceMean", {"a"}, {{"axes", onnx::ints_attr({0, 2})}}),
                {{"a", random({2, 3, 2}, g)}}});
  cs.push_back({"Reshape",
                node("Reshape", {"a", "shape"}),
                {{"a", random({2, 3, 2}, g)}, {"shape", ints({3, -1})}}});
  cs.push_back({"Flatten",
                node("Flatten", {"a"}, {{"axis", onnx::int_attr(1)}}),
                {{"a", random({2, 3, 2}, g)}}});
  cs.push_back({"Transpose",
                node("Transpose", {"a"}, {{"perm", onnx::ints_attr({2, 0, 1})}}),
                {{"a", random({2, 3, 4}, g)}}});
  cs.push_back({"Unsqueeze",
                node("Unsqueeze", {"a", "axes"}),
                {{"a", random({2, 3}, g)}, {"axes", ints({1})}}});
  cs.push_back({"Squeeze",
                node("Squeeze", {"a", "axes"}),
                {{"a", random({2, 1, 3}, g)}, {"axes", ints({1})}}});
  return cs;
}

BigValues start(const Case& c) {
  BigValues v;
  for (const auto& [name, t] : c.inputs) v[name] = onnx::Interpreter<Big>::convert(t);
  return v;
}

TEST(OnnxGrad, EveryBackwardAgreesWithFiniteDifferencesAt256Bits) {
  std::mt19937_64 g(5);
  std::set<std::string> covered;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.label);
    covered.insert(c.node.op);
    BigValues base = start(c);
    onnx::Interpreter<Big>::run_node(c.node, base);
    const HostTensor r = random(base.at("y").shape, g);
    const Tensor<Big> gy = onnx::Interpreter<Big>::convert(r);
    const auto grads = onnx::Grad<Big>::backward(c.node, base, gy);
    for (size_t k = 0; k < c.node.in.size(); ++k) {
      const std::string& name = c.node.in[k];
      const bool is_float = c.inputs.at(name).elem == Elem::float64;
      ASSERT_EQ(k < grads.size() && grads[k].has_value(), is_float) << "input " << name;
      if (!is_float) continue;
      const auto& gk = *grads[k];
      ASSERT_EQ(gk.shape, base.at(name).shape) << "input " << name;
      for (size_t j = 0; j < gk.size(); ++j) {
        const Big h = std::ldexp(1.0, -80);
        auto at = [&](const Big& d) {
          BigValues v = start(c);
          v[name].v[j] = v[name].v[j] + d;
          onnx::Interpreter<Big>::run_node(c.node, v);
          return weighted(v, gy);
        };
        const double fd = ((at(h) - at(-h)) / (h + h)).to_double();
        const double an = gk.v[j].to_double();
        EXPECT_NEAR(an, fd, 1e-15 * std::max(1.0, std::fabs(fd))) << name << "[" << j << "]";
      }
    }
  }
  // Every operator the trainer differentiates has a case.
  for (const auto& op : onnx::differentiable_ops()) EXPECT_TRUE(covered.count(op)) << op;
}

TEST(OnnxGrad, UnbroadcastSumsTheStretchedAxes) {
  Tensor<double> g{{2, 3}, {1, 2, 3, 4, 5, 6}, Elem::float64};
  EXPECT_EQ(onnx::Grad<double>::unbroadcast(g, {3}).v, (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(onnx::Grad<double>::unbroadcast(g, {2, 1}).v, (std::vector<double>{6, 15}));
  EXPECT_EQ(onnx::Grad<double>::unbroadcast(g, {}).v, (std::vector<double>{21}));
}

TEST(OnnxGrad, AnOperatorWithoutBackwardNamesTheNode) {
  const Node n{"pick", "Gather", {"a", "i"}, {"y"}, {}};
  onnx::Values<double> v;
  v["a"] = Tensor<double>{{3}, {1, 2, 3}, Elem::float64};
  v["y"] = v["a"];
  try {
    onnx::Grad<double>::backward(n, v, v["a"]);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX node 'pick' (Gather)"), std::string::npos)
        << e.what();
  }
}

TEST(OnnxProp, BoundsTheFirstOrderErrorOfEachOperation) {
  using onnx::Prop;
  const Prop a = Prop::seeded(3, 1e-8), b = Prop::seeded(-2, 1e-6);
  EXPECT_DOUBLE_EQ((a * b).rel(), 1e-8 + 1e-6);  // products add relative errors
  EXPECT_DOUBLE_EQ((a / b).rel(), 1e-8 + 1e-6);
  EXPECT_DOUBLE_EQ((a + b).rel(), (3e-8 + 2e-6) / 1.0);              // sums add absolute errors
  EXPECT_DOUBLE_EQ((a - a).rel(), INFINITY);                         // x - x: all error, no value
  EXPECT_DOUBLE_EQ((a + b).w, 1e-6);                                 // the worst input reached it
  EXPECT_DOUBLE_EQ(Prop(5).rel(), 0);                                // constants are exact
  EXPECT_NEAR(exp(Prop::seeded(10, 1e-9)).rel(), 1e-8, 1e-20);       // |x| e for exp
  EXPECT_NEAR(log(Prop::seeded(1 + 1e-6, 1e-9)).rel(), 1e-3, 1e-6);  // log near 1 amplifies
  EXPECT_NEAR(tanh(Prop::seeded(0.5, 1e-9)).a, (1 - std::tanh(0.5) * std::tanh(0.5)) * 0.5e-9,
              1e-20);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
