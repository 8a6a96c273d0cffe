// The ONNX interpreter: a graph run node by node with the project's own templated operators, for
// any scalar T with + - * / and the elementary functions found by ADL (float, double, Stoch<F, 3>,
// Big): one source for the native run, the CESTAC run and the high-precision truth.
//
// The operators follow the ONNX operator specification (opsets 13-17) for the subset listed in
// supported_ops(); numpy broadcasting for the elementwise ones. An operator, attribute or shape
// outside it is an InputError that names the node, never a wrong result. This file dispatches the
// nodes and holds the scalar ones; tensor.h the shapes and broadcasting, ops.h the numerical
// operators (softmax, products, normalizations, convolution, pooling).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "harness/onnx/layout.h"
#include "harness/onnx/model.h"
#include "harness/onnx/ops.h"
#include "harness/onnx/tensor.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {

inline const std::vector<std::string>& supported_ops() {
  // clang-format off
  static const std::vector<std::string> ops = {
      "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Reciprocal", "Relu", "LeakyRelu", "Elu",
      "HardSigmoid", "Tanh", "Sigmoid", "Softplus", "Exp", "Log", "Sqrt", "Erf", "Pow", "Floor",
      "Ceil", "Max", "Min", "Sum", "Mean", "Clip", "Where", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "MatMul", "Gemm", "Softmax", "LogSoftmax",
      "LayerNormalization", "BatchNormalization", "Conv", "MaxPool", "AveragePool",
      "GlobalAveragePool", "ReduceSum", "ReduceMean", "ReduceMax", "Reshape", "Flatten",
      "Transpose", "Squeeze", "Unsqueeze", "Concat", "Gather", "Slice", "Expand", "Shape", "Cast",
      "Identity", "Constant", "Split", "Pad", "Tile", "ArgMax", "ArgMin"};
  // clang-format on
  return ops;
}

template <class T>
class Interpreter {
 public:
  using Values = onnx::Values<T>;

  // Runs every node of `m` on `values` (the graph's inputs and initializers, already converted),
  // adding each node's outputs to it.
  static void run(const Model& m, Values& values) {
    for (const Node& n : m.nodes) run_node(n, values);
  }

  static Tensor<T> convert(const HostTensor& h) {
    if (count(h.shape) != h.values.size())
      throw InputError("ONNX: a tensor holds " + std::to_string(h.values.size()) +
                       " values for its shape's " + std::to_string(count(h.shape)));
    Tensor<T> t;
    t.shape = h.shape;
    t.elem = h.elem;
    t.v.reserve(h.values.size());
    for (double x : h.values) t.v.push_back(T(x));
    return t;
  }

  // One-input elementwise operators (activations, elementary functions); nullopt when `n` is none
  // of them.
  static std::optional<Tensor<T>> run_unary(const Node& n, Values& vals) {
    using std::erf;
    using std::exp;
    using std::log;
    using std::sqrt;
    using std::tanh;
    const std::string& op = n.op;
    auto un = [&](auto f) { return unary(in(n, vals, 0), f); };
    const T zero = T(0.0), one = T(1.0);
    if (op == "Neg") return un([](const T& x) { return -x; });
    if (op == "Relu") return un([&](const T& x) { return x < zero ? zero : x; });
    if (op == "Tanh") return un([](const T& x) { return tanh(x); });
    if (op == "Sigmoid")  // e^x / (1 + e^x) below 0: no e^-x overflowing to a flushed 0
      return un([&](const T& x) {
        if (x < zero) {
          const T e = exp(x);
          return e / (one + e);
        }
        return one / (one + exp(-x));
      });
    if (op ==
        "Softplus")  // log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow, no log(1 + tiny)
      return un([&](const T& x) {
        using std::log1p;
        const T ax = x < zero ? -x : x;
        return (x < zero ? zero : x) + log1p(exp(-ax));
      });
    if (op == "Exp") return un([](const T& x) { return exp(x); });
    if (op == "Log") return un([](const T& x) { return log(x); });
    if (op == "Sqrt") return un([](const T& x) { return sqrt(x); });
    if (op == "Erf") return un([](const T& x) { return erf(x); });
    if (op == "Identity") return in(n, vals, 0);
    if (op == "Abs") return un([&](const T& x) { return x < zero ? -x : x; });
    if (op == "Reciprocal") return un([&](const T& x) { return one / x; });
    if (op == "Floor" || op == "Ceil") {
      using std::ceil;
      using std::floor;
      const bool fl = op == "Floor";
      return un([fl](const T& x) { return fl ? floor(x) : ceil(x); });
    }
    if (op == "LeakyRelu") {
      const T alpha = T(n.f("alpha", 0.01));
      return un([&](const T& x) { return x < zero ? alpha * x : x; });
    }
    if (op == "Elu") {  // alpha (e^x - 1) below 0
      const T alpha = T(n.f("alpha", 1.0));
      return un([&](const T& x) {
        using std::expm1;
        return x < zero ? alpha * expm1(x) : x;
      });
    }
    if (op == "HardSigmoid") {
      const T alpha = T(n.f("alpha", 0.2)), beta = T(n.f("beta", 0.5));
      return un([&](const T& x) {
        const T y = alpha * x + beta;
        return y < zero ? zero : one < y ? one : y;
      });
    }
    return std::nullopt;
  }

  // Broadcasting arithmetic, n-ary and comparison operators; nullopt when `n` is none of them.
  static std::optional<Tensor<T>> run_broadcasting(const Node& n, Values& vals) {
    using std::pow;
    const std::string& op = n.op;
    auto bin = [&](auto f) { return binary(n, in(n, vals, 0), in(n, vals, 1), f); };
    if (op == "Add") return bin([](const T& a, const T& b) { return a + b; });
    if (op == "Sub") return bin([](const T& a, const T& b) { return a - b; });
    if (op == "Mul") return bin([](const T& a, const T& b) { return a * b; });
    if (op == "Div") {
      const bool ints = is_integer(in(n, vals, 0).elem) && is_integer(in(n, vals, 1).elem);
      if (ints)  // integer division truncates; the values are exact integers
        return bin([](const T& a, const T& b) { return T(std::trunc(value_of(a) / value_of(b))); });
      return bin([](const T& a, const T& b) { return a / b; });
    }
    if (op == "Pow") {
      using std::pow;
      return bin([](const T& a, const T& b) { return pow(a, b); });
    }
    if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
      Tensor<T> r = in(n, vals, 0);
      for (size_t k = 1; k < n.in.size(); ++k)
        r = binary(n, r, in(n, vals, k), [&](const T& a, const T& b) {
          if (op == "Max") return a < b ? b : a;
          if (op == "Min") return b < a ? b : a;
          return a + b;
        });
      if (op == "Mean") {
        const T count_in = T(static_cast<double>(n.in.size()));
        r = unary(r, [&](const T& x) { return x / count_in; });
      }
      return r;
    }
    if (op == "Clip") {
      Tensor<T> r = in(n, vals, 0);
      if (has_in(n, 1))
        r = binary(n, r, in(n, vals, 1), [](const T& x, const T& lo) { return x < lo ? lo : x; });
      if (has_in(n, 2))
        r = binary(n, r, in(n, vals, 2), [](const T& x, const T& hi) { return hi < x ? hi : x; });
      // Opsets before 11: the bounds are attributes.
      if (n.has("min")) {
        const T lo = T(n.f("min", 0));
        r = unary(r, [&](const T& x) { return x < lo ? lo : x; });
      }
      if (n.has("max")) {
        const T hi = T(n.f("max", 0));
        r = unary(r, [&](const T& x) { return hi < x ? hi : x; });
      }
      return r;
    }
    if (op == "Where") return where(n, in(n, vals, 0), in(n, vals, 1), in(n, vals, 2));
    if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
        op == "GreaterOrEqual") {
      Tensor<T> r = binary(n, in(n, vals, 0), in(n, vals, 1), [&](const T& a, const T& b) {
        const bool v = op == "Equal"         ? !(a < b) && !(b < a)
                       : op == "Less"        ? a < b
                       : op == "Greater"     ? b < a
                       : op == "LessOrEqual" ? !(b < a)
                                             : !(a < b);
        return T(v ? 1.0 : 0.0);
      });
      r.elem = Elem::bool8;
      return r;
    }
    return std::nullopt;
  }

  // Operators that change a tensor's shape or layout only; nullopt when `n` is none of them.
  static std::optional<Tensor<T>> run_shape(const Node& n, Values& vals) {
    const std::string& op = n.op;
    const T zero = T(0.0);
    if (op == "Expand") {
      const Tensor<T>& x = in(n, vals, 0);
      Tensor<T> shape_ones;
      shape_ones.shape = ints_of(in(n, vals, 1));
      for (int64_t d : shape_ones.shape)
        if (d < 0) fail(n, "a negative dimension");
      shape_ones.v.assign(count(shape_ones.shape), zero);
      Tensor<T> r = binary(n, x, shape_ones, [](const T& a, const T&) { return a; });
      r.elem = x.elem;
      return r;
    }
    if (op == "Shape") {
      const Tensor<T>& x = in(n, vals, 0);
      const auto rank = static_cast<int64_t>(x.shape.size());
      auto clamp_end = [&](int64_t e) {
        return std::clamp<int64_t>(e < 0 ? e + rank : e, 0, rank);
      };
      const int64_t start = clamp_end(n.i("start", 0)), end = clamp_end(n.i("end", rank));
      Tensor<T> r{{std::max<int64_t>(0, end - start)}, {}, Elem::int64};
      for (int64_t d = start; d < end; ++d)
        r.v.push_back(T(static_cast<double>(x.shape[static_cast<size_t>(d)])));
      return r;
    }
    if (op == "Reshape") return reshape(n, in(n, vals, 0), ints_of(in(n, vals, 1)));
    if (op == "Flatten") {
      const Tensor<T>& a = in(n, vals, 0);
      const auto rank = static_cast<int64_t>(a.shape.size());
      int64_t ax = n.i("axis", 1);
      if (ax < 0) ax += rank;
      if (ax < 0 || ax > rank) fail(n, "axis out of range");
      int64_t rows = 1;
      for (int64_t d = 0; d < ax; ++d) rows *= a.shape[static_cast<size_t>(d)];
      return reshape(n, a, {rows, rows ? static_cast<int64_t>(a.size()) / rows : 0});
    }
    if (op == "Transpose") return transpose(n, in(n, vals, 0));
    if (op == "Squeeze" || op == "Unsqueeze") {
      Tensor<T> a = in(n, vals, 0);
      std::vector<int64_t> axes = has_in(n, 1) ? ints_of(in(n, vals, 1)) : n.ints("axes");
      if (op == "Unsqueeze") {
        const size_t rank = a.shape.size() + axes.size();
        for (int64_t& ax : axes) ax = axis(n, ax, rank);
        std::sort(axes.begin(), axes.end());
        for (int64_t ax : axes) a.shape.insert(a.shape.begin() + ax, 1);
      } else {
        std::vector<int64_t> s;
        for (size_t d = 0; d < a.shape.size(); ++d) {
          bool drop = axes.empty() ? a.shape[d] == 1 : false;
          for (int64_t ax : axes) drop |= axis(n, ax, a.shape.size()) == static_cast<int64_t>(d);
          if (drop && a.shape[d] != 1) fail(n, "squeezes a dimension that is not 1");
          if (!drop) s.push_back(a.shape[d]);
        }
        a.shape = s;
      }
      return a;
    }
    return std::nullopt;
  }

  // Operators that select, join, convert or create values; nullopt when `n` is none of them.
  static std::optional<Tensor<T>> run_data(const Node& n, Values& vals) {
    const std::string& op = n.op;
    if (op == "Slice") return slice(n, vals);
    if (op == "Pad") return pad(n, vals);
    if (op == "Tile") return tile(n, vals);
    if (op == "ArgMax" || op == "ArgMin") return arg_extreme(n, vals, op == "ArgMax");
    if (op == "Concat") return concat(n, vals);
    if (op == "Gather") return gather(n, vals);
    if (op == "Cast") {
      const auto to = static_cast<Elem>(n.i("to", 0));
      const bool known = to == Elem::float32 || to == Elem::float64 || to == Elem::bool8 ||
                         to == Elem::int8 || to == Elem::int16 || to == Elem::int32 ||
                         to == Elem::int64 || to == Elem::uint8 || to == Elem::uint16 ||
                         to == Elem::uint32 || to == Elem::uint64;
      if (!known)
        fail(n, "casts to element type " + std::to_string(n.i("to", 0)) + " are not supported");
      Tensor<T> r = in(n, vals, 0);
      if (is_integer(to) && !is_integer(r.elem))  // float to integer truncates
        for (T& x : r.v) x = T(std::trunc(value_of(x)));
      if (to == Elem::bool8)
        for (T& x : r.v) x = T(value_of(x) != 0 ? 1.0 : 0.0);
      r.elem = to;
      return r;
    }
    if (op == "Constant") {
      const auto it = n.attrs.find("value");
      if (it == n.attrs.end() || !it->second.t) fail(n, "only the 'value' attribute is supported");
      return convert(*it->second.t);
    }
    return std::nullopt;
  }

  // Products, normalizations, convolution, pooling, softmax and reductions; nullopt when `n` is
  // none of them.
  static std::optional<Tensor<T>> run_network(const Node& n, Values& vals) {
    const std::string& op = n.op;
    if (op == "BatchNormalization") return batch_norm(n, vals);
    if (op == "Conv") return conv(n, vals);
    if (op == "MaxPool" || op == "AveragePool") return pool(n, vals, op == "MaxPool");
    if (op == "GlobalAveragePool") {
      const Tensor<T>& x = in(n, vals, 0);
      if (x.shape.size() < 3) fail(n, "needs spatial axes");
      std::vector<int64_t> axes;
      for (size_t d = 2; d < x.shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      return reduce(
          n, x, axes, true, [](const T& a, const T& b) { return a + b; }, true);
    }
    if (op == "MatMul") return matmul(n, in(n, vals, 0), in(n, vals, 1));
    if (op == "Gemm") {
      Tensor<T> r =
          matmul2(n, in(n, vals, 0), in(n, vals, 1), n.i("transA", 0) != 0, n.i("transB", 0) != 0);
      const double alpha = n.f("alpha", 1), beta = n.f("beta", 1);
      if (alpha != 1) r = unary(r, [&](const T& x) { return T(alpha) * x; });
      if (has_in(n, 2)) {
        const Tensor<T>& c = in(n, vals, 2);
        r = binary(n, r, c,
                   [&](const T& x, const T& y) { return beta == 1 ? x + y : x + T(beta) * y; });
      }
      return r;
    }
    if (op == "Softmax" || op == "LogSoftmax")
      return softmax(n, in(n, vals, 0), op == "LogSoftmax");
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
      const bool keep = n.i("keepdims", 1) != 0;
      const auto axes = reduce_axes(n, vals);
      if (axes.empty() && n.i("noop_with_empty_axes", 0)) return in(n, vals, 0);
      if (op == "ReduceMax")
        return reduce(
            n, in(n, vals, 0), axes, keep, [](const T& a, const T& b) { return a < b ? b : a; },
            false);
      return reduce(
          n, in(n, vals, 0), axes, keep, [](const T& a, const T& b) { return a + b; },
          op == "ReduceMean");
    }
    return std::nullopt;
  }

  static void run_node(const Node& n, Values& vals) {
    auto out = [&](Tensor<T> t) {
      if (n.out.empty()) fail(n, "has no output");
      for (size_t k = 1; k < n.out.size(); ++k)
        if (!n.out[k].empty()) fail(n, "only the first output is supported");
      vals[n.out[0]] = std::move(t);
    };
    const std::string& op = n.op;
    if (op == "Split") {
      auto outs = split(n, vals);
      for (size_t k = 0; k < n.out.size(); ++k)
        if (!n.out[k].empty()) vals[n.out[k]] = std::move(outs[k]);
      return;
    }
    if (op == "LayerNormalization") {
      auto outs = layer_norm(n, vals);
      for (size_t k = 0; k < n.out.size() && k < 3; ++k)
        if (!n.out[k].empty()) vals[n.out[k]] = std::move(outs[k]);
      return;
    }
    if (auto r = run_unary(n, vals)) return out(std::move(*r));
    if (auto r = run_broadcasting(n, vals)) return out(std::move(*r));
    if (auto r = run_shape(n, vals)) return out(std::move(*r));
    if (auto r = run_data(n, vals)) return out(std::move(*r));
    if (auto r = run_network(n, vals)) return out(std::move(*r));
    fail(
        n, "operator not supported by stabfuzz's ONNX interpreter (supported: " + [] {
          std::string s;
          for (const auto& o : supported_ops()) s += (s.empty() ? "" : ", ") + o;
          return s;
        }() + ")");
  }
};

}  // namespace stabfuzz::onnx
