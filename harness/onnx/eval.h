// The ONNX interpreter: a graph run node by node with the project's own templated operators, for
// any scalar T with + - * / and the elementary functions found by ADL (float, double, Stoch<F, 3>,
// Big): one source for the native run, the CESTAC run and the high-precision truth.
//
// The operators follow the ONNX operator specification (opsets 13-17) for the subset listed in
// kSupported; numpy broadcasting for the elementwise ones. An operator, attribute or shape outside
// it is an InputError that names the node, never a wrong result.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "harness/onnx/model.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {

inline const std::vector<std::string>& supported_ops() {
  static const std::vector<std::string> ops = {
      "Add",     "Sub",      "Mul",       "Div",        "Neg",       "Relu",       "Tanh",
      "Sigmoid", "Softplus", "Exp",       "Log",        "Sqrt",      "Erf",        "Pow",
      "MatMul",  "Gemm",     "Softmax",   "LogSoftmax", "ReduceSum", "ReduceMean", "ReduceMax",
      "Reshape", "Flatten",  "Transpose", "Squeeze",    "Unsqueeze", "Identity",   "Constant"};
  return ops;
}

template <class T>
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<T> v;
  size_t size() const { return v.size(); }
};

inline size_t count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

// The value a scalar holds, as a double (axes, shapes, exponents: exact small integers).
inline double value_of(double x) { return x; }
inline double value_of(float x) { return x; }
template <class S>
double value_of(const S& x) requires requires {
  x.mean();
}
{ return x.mean(); }

template <class T>
class Interpreter {
 public:
  using Values = std::map<std::string, Tensor<T>>;

  // Runs every node of `m` on `values` (the graph's inputs and initializers, already converted),
  // adding each node's outputs to it.
  static void run(const Model& m, Values& values) {
    for (const Node& n : m.nodes) run_node(n, values);
  }

  static Tensor<T> convert(const HostTensor& h) {
    Tensor<T> t;
    t.shape = h.shape;
    t.v.reserve(h.values.size());
    for (double x : h.values) t.v.push_back(T(x));
    return t;
  }

 private:
  [[noreturn]] static void fail(const Node& n, const std::string& why) {
    throw InputError("ONNX node '" + n.name + "' (" + n.op + "): " + why);
  }
  static const Tensor<T>& in(const Node& n, const Values& vals, size_t k) {
    if (k >= n.in.size() || n.in[k].empty()) fail(n, "input " + std::to_string(k) + " is missing");
    const auto it = vals.find(n.in[k]);
    if (it == vals.end()) fail(n, "input '" + n.in[k] + "' has no value");
    return it->second;
  }
  static bool has_in(const Node& n, size_t k) { return k < n.in.size() && !n.in[k].empty(); }
  static std::vector<int64_t> ints_of(const Tensor<T>& t) {
    std::vector<int64_t> out;
    for (const T& x : t.v) out.push_back(static_cast<int64_t>(std::llround(value_of(x))));
    return out;
  }
  static int64_t axis(const Node& n, int64_t a, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    if (a < -r || a >= std::max<int64_t>(r, 1))
      fail(n, "axis " + std::to_string(a) + " out of range");
    return a < 0 ? a + r : a;
  }

  // The row-major successor of the multi-index `idx` within `shape`.
  static void next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) return;
      idx[d] = 0;
    }
  }

  // ---- elementwise with numpy broadcasting -----------------------------------------------------
  template <class F>
  static Tensor<T> unary(const Tensor<T>& a, F f) {
    Tensor<T> r{a.shape, {}};
    r.v.reserve(a.size());
    for (const T& x : a.v) r.v.push_back(f(x));
    return r;
  }
  template <class F>
  static Tensor<T> binary(const Node& n, const Tensor<T>& a, const Tensor<T>& b, F f) {
    const size_t rank = std::max(a.shape.size(), b.shape.size());
    std::vector<int64_t> sa(rank, 1), sb(rank, 1), s(rank);
    std::copy(a.shape.begin(), a.shape.end(),
              sa.begin() + static_cast<long>(rank - a.shape.size()));
    std::copy(b.shape.begin(), b.shape.end(),
              sb.begin() + static_cast<long>(rank - b.shape.size()));
    for (size_t d = 0; d < rank; ++d) {
      if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1) fail(n, "shapes do not broadcast");
      s[d] = sa[d] == 1 ? sb[d] : sa[d];
    }
    Tensor<T> r{s, {}};
    const size_t total = count(s);
    r.v.reserve(total);
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < total; ++k) {
      size_t ia = 0, ib = 0;
      for (size_t d = 0; d < rank; ++d) {
        ia = ia * static_cast<size_t>(sa[d]) + static_cast<size_t>(sa[d] == 1 ? 0 : idx[d]);
        ib = ib * static_cast<size_t>(sb[d]) + static_cast<size_t>(sb[d] == 1 ? 0 : idx[d]);
      }
      r.v.push_back(f(a.v[ia], b.v[ib]));
      next_index(idx, s);
    }
    return r;
  }

  // ---- reductions over axes --------------------------------------------------------------------
  // Calls f(init, x) over each kept position's reduced elements, in index order.
  template <class F>
  static Tensor<T> reduce(const Node& n, const Tensor<T>& a, std::vector<int64_t> axes,
                          bool keepdims, F f, bool mean) {
    const size_t rank = a.shape.size();
    std::vector<bool> red(rank, axes.empty());
    for (int64_t& ax : axes) red[static_cast<size_t>(axis(n, ax, rank))] = true;
    std::vector<int64_t> out_shape, kept_shape;
    for (size_t d = 0; d < rank; ++d) {
      if (!red[d])
        out_shape.push_back(a.shape[d]);
      else if (keepdims)
        out_shape.push_back(1);
      kept_shape.push_back(red[d] ? 1 : a.shape[d]);
    }
    const size_t outn = count(kept_shape);
    std::vector<std::vector<const T*>> groups(outn);
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < a.size(); ++k) {
      size_t o = 0;
      for (size_t d = 0; d < rank; ++d)
        o = o * static_cast<size_t>(kept_shape[d]) + static_cast<size_t>(red[d] ? 0 : idx[d]);
      groups[o].push_back(&a.v[k]);
      next_index(idx, a.shape);
    }
    Tensor<T> r{out_shape, {}};
    for (const auto& g : groups) {
      if (g.empty()) fail(n, "reduces an empty axis");
      T acc = *g[0];
      for (size_t k = 1; k < g.size(); ++k) acc = f(acc, *g[k]);
      if (mean) acc = acc / T(static_cast<double>(g.size()));
      r.v.push_back(acc);
    }
    return r;
  }
  static std::vector<int64_t> reduce_axes(const Node& n, const Values& vals) {
    if (has_in(n, 1)) return ints_of(in(n, vals, 1));
    return n.ints("axes");
  }

  // ---- softmax along one axis (opset 13: the axis alone) ---------------------------------------
  static Tensor<T> softmax(const Node& n, const Tensor<T>& a, bool log_form) {
    const size_t rank = a.shape.size();
    const auto ax = static_cast<size_t>(axis(n, n.i("axis", -1), rank));
    size_t inner = 1;
    for (size_t d = ax + 1; d < rank; ++d) inner *= static_cast<size_t>(a.shape[d]);
    const auto len = static_cast<size_t>(a.shape[ax]);
    const size_t outer = a.size() / std::max<size_t>(len * inner, 1);
    Tensor<T> r{a.shape, a.v};
    using std::exp;
    using std::log;
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        auto at = [&](size_t k) -> T& { return r.v[(o * len + k) * inner + i]; };
        T m = at(0);
        for (size_t k = 1; k < len; ++k)
          if (m < at(k)) m = at(k);
        T s = T(0.0);
        for (size_t k = 0; k < len; ++k) s = s + exp(at(k) - m);
        const T ls = log(s);
        for (size_t k = 0; k < len; ++k) at(k) = log_form ? at(k) - m - ls : exp(at(k) - m) / s;
      }
    return r;
  }

  // ---- matrix products -------------------------------------------------------------------------
  static Tensor<T> matmul2(const Node& n, const Tensor<T>& a, const Tensor<T>& b, bool ta,
                           bool tb) {
    if (a.shape.size() != 2 || b.shape.size() != 2) fail(n, "only 2-D operands are supported");
    const auto m = static_cast<size_t>(a.shape[ta ? 1 : 0]),
               k = static_cast<size_t>(a.shape[ta ? 0 : 1]);
    const auto k2 = static_cast<size_t>(b.shape[tb ? 1 : 0]),
               p = static_cast<size_t>(b.shape[tb ? 0 : 1]);
    if (k != k2) fail(n, "inner dimensions differ");
    Tensor<T> r{{static_cast<int64_t>(m), static_cast<int64_t>(p)}, {}};
    r.v.reserve(m * p);
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < p; ++j) {
        T s = T(0.0);
        for (size_t q = 0; q < k; ++q)
          s = s + a.v[ta ? q * m + i : i * k + q] * b.v[tb ? j * k + q : q * p + j];
        r.v.push_back(s);
      }
    return r;
  }
  static Tensor<T> matmul(const Node& n, Tensor<T> a, Tensor<T> b) {
    const bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
    if (va) a.shape = {1, a.shape[0]};
    if (vb) b.shape = {b.shape[0], 1};
    Tensor<T> r = matmul2(n, a, b, false, false);
    if (va && vb)
      r.shape = {};
    else if (va)
      r.shape = {r.shape[1]};
    else if (vb)
      r.shape = {r.shape[0]};
    return r;
  }

  static Tensor<T> reshape(const Node& n, Tensor<T> a, std::vector<int64_t> shape) {
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0) shape[d] = d < a.shape.size() ? a.shape[d] : fail_i(n, "0 beyond rank");
      if (shape[d] == -1) {
        if (infer >= 0) fail(n, "two -1 dimensions");
        infer = static_cast<int64_t>(d);
      } else {
        known *= shape[d];
      }
    }
    if (infer >= 0)
      shape[static_cast<size_t>(infer)] = known ? static_cast<int64_t>(a.size()) / known : 0;
    if (count(shape) != a.size()) fail(n, "the new shape holds a different number of elements");
    a.shape = shape;
    return a;
  }
  static int64_t fail_i(const Node& n, const std::string& why) { fail(n, why); }

  static Tensor<T> transpose(const Node& n, const Tensor<T>& a) {
    const size_t rank = a.shape.size();
    std::vector<int64_t> perm = n.ints("perm");
    if (perm.empty())
      for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    if (perm.size() != rank) fail(n, "perm has the wrong length");
    std::vector<int64_t> s(rank), stride(rank, 1);
    for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * a.shape[d];
    for (size_t d = 0; d < rank; ++d) s[d] = a.shape[static_cast<size_t>(perm[d])];
    Tensor<T> r{s, {}};
    r.v.reserve(a.size());
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < a.size(); ++k) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += idx[d] * stride[static_cast<size_t>(perm[d])];
      r.v.push_back(a.v[static_cast<size_t>(src)]);
      next_index(idx, s);
    }
    return r;
  }

  static void run_node(const Node& n, Values& vals) {
    using std::erf;
    using std::exp;
    using std::log;
    using std::sqrt;
    using std::tanh;
    auto out = [&](Tensor<T> t) {
      if (n.out.empty()) fail(n, "has no output");
      vals[n.out[0]] = std::move(t);
    };
    const std::string& op = n.op;
    auto bin = [&](auto f) { out(binary(n, in(n, vals, 0), in(n, vals, 1), f)); };
    auto un = [&](auto f) { out(unary(in(n, vals, 0), f)); };
    const T zero = T(0.0), one = T(1.0);
    if (op == "Add") return bin([](const T& a, const T& b) { return a + b; });
    if (op == "Sub") return bin([](const T& a, const T& b) { return a - b; });
    if (op == "Mul") return bin([](const T& a, const T& b) { return a * b; });
    if (op == "Div") return bin([](const T& a, const T& b) { return a / b; });
    if (op == "Pow") {
      const Tensor<T>& e = in(n, vals, 1);
      if (e.size() == 1 && value_of(e.v[0]) == 2) return un([](const T& x) { return x * x; });
      if (e.size() == 1 && value_of(e.v[0]) == 0.5) return un([](const T& x) { return sqrt(x); });
      fail(n, "only the exponents 2 and 0.5 are supported");
    }
    if (op == "Neg") return un([](const T& x) { return -x; });
    if (op == "Relu") return un([&](const T& x) { return x < zero ? zero : x; });
    if (op == "Tanh") return un([](const T& x) { return tanh(x); });
    if (op == "Sigmoid") return un([&](const T& x) { return one / (one + exp(-x)); });
    if (op == "Softplus") return un([&](const T& x) { return log(exp(x) + one); });
    if (op == "Exp") return un([](const T& x) { return exp(x); });
    if (op == "Log") return un([](const T& x) { return log(x); });
    if (op == "Sqrt") return un([](const T& x) { return sqrt(x); });
    if (op == "Erf") return un([](const T& x) { return erf(x); });
    if (op == "Identity") return out(in(n, vals, 0));
    if (op == "Constant") {
      const auto it = n.attrs.find("value");
      if (it == n.attrs.end() || !it->second.t) fail(n, "only the 'value' attribute is supported");
      return out(convert(*it->second.t));
    }
    if (op == "MatMul") return out(matmul(n, in(n, vals, 0), in(n, vals, 1)));
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
      return out(std::move(r));
    }
    if (op == "Softmax" || op == "LogSoftmax")
      return out(softmax(n, in(n, vals, 0), op == "LogSoftmax"));
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
      const bool keep = n.i("keepdims", 1) != 0;
      const auto axes = reduce_axes(n, vals);
      if (axes.empty() && n.i("noop_with_empty_axes", 0)) return out(in(n, vals, 0));
      if (op == "ReduceMax")
        return out(reduce(
            n, in(n, vals, 0), axes, keep, [](const T& a, const T& b) { return a < b ? b : a; },
            false));
      return out(reduce(
          n, in(n, vals, 0), axes, keep, [](const T& a, const T& b) { return a + b; },
          op == "ReduceMean"));
    }
    if (op == "Reshape") return out(reshape(n, in(n, vals, 0), ints_of(in(n, vals, 1))));
    if (op == "Flatten") {
      const Tensor<T>& a = in(n, vals, 0);
      const auto ax = static_cast<size_t>(axis(n, n.i("axis", 1), a.shape.size() + 1));
      int64_t rows = 1;
      for (size_t d = 0; d < ax; ++d) rows *= a.shape[d];
      return out(reshape(n, a, {rows, rows ? static_cast<int64_t>(a.size()) / rows : 0}));
    }
    if (op == "Transpose") return out(transpose(n, in(n, vals, 0)));
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
      return out(std::move(a));
    }
    fail(
        n, "operator not supported by stabfuzz's ONNX interpreter (supported: " + [] {
          std::string s;
          for (const auto& o : supported_ops()) s += (s.empty() ? "" : ", ") + o;
          return s;
        }() + ")");
  }
};

}  // namespace stabfuzz::onnx
