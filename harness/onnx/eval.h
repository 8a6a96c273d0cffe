// The ONNX interpreter: a graph run node by node with the project's own templated operators, for
// any scalar T with + - * / and the elementary functions found by ADL (float, double, Stoch<F, 3>,
// Big): one source for the native run, the CESTAC run and the high-precision truth.
//
// The operators follow the ONNX operator specification (opsets 13-17) for the subset listed in
// kSupported; numpy broadcasting for the elementwise ones. An operator, attribute or shape outside
// it is an InputError that names the node, never a wrong result.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "harness/onnx/model.h"
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
      "Identity", "Constant"};
  // clang-format on
  return ops;
}

template <class T>
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<T> v;
  Elem elem = Elem::float32;  // the ONNX element type the values stand for
  size_t size() const { return v.size(); }
};

// Elements of `shape`; a negative dimension or more than kMaxElements is an InputError.
inline size_t count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw InputError("ONNX: a tensor shape has a negative dimension");
    if (d > 0 && n > kMaxElements / static_cast<size_t>(d))
      throw InputError("ONNX: a tensor shape holds more than 2^24 elements");
    n *= static_cast<size_t>(d);
  }
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
    if (a < -r || a >= r) fail(n, "axis " + std::to_string(a) + " out of range");
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
    Tensor<T> r{a.shape, {}, a.elem};
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
    Tensor<T> r{s, {}, a.elem};
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
    Tensor<T> r{out_shape, {}, a.elem};
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
    if (len == 0) return a;
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
  // numpy matmul: 1-D operands promoted and their axis removed after; batch axes broadcast.
  static Tensor<T> matmul(const Node& n, Tensor<T> a, Tensor<T> b) {
    const bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
    if (va) a.shape.insert(a.shape.begin(), 1);
    if (vb) b.shape.push_back(1);
    const size_t ra = a.shape.size(), rb = b.shape.size(), rank = std::max(ra, rb);
    const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], k2 = b.shape[rb - 2],
                  p = b.shape[rb - 1];
    if (k != k2) fail(n, "inner dimensions differ");
    std::vector<int64_t> ba(rank - 2, 1), bb(rank - 2, 1), batch(rank - 2);
    std::copy(a.shape.begin(), a.shape.end() - 2, ba.begin() + static_cast<long>(rank - ra));
    std::copy(b.shape.begin(), b.shape.end() - 2, bb.begin() + static_cast<long>(rank - rb));
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (ba[d] != bb[d] && ba[d] != 1 && bb[d] != 1) fail(n, "batch axes do not broadcast");
      batch[d] = ba[d] == 1 ? bb[d] : ba[d];
    }
    Tensor<T> r;
    r.shape = batch;
    r.shape.push_back(m);
    r.shape.push_back(p);
    r.v.reserve(count(r.shape));
    std::vector<int64_t> idx(batch.size(), 0);
    const auto mk = static_cast<size_t>(m * k), kp = static_cast<size_t>(k * p);
    for (size_t q = 0; q < count(batch); ++q) {
      size_t ia = 0, ib = 0;
      for (size_t d = 0; d < batch.size(); ++d) {
        ia = ia * static_cast<size_t>(ba[d]) + static_cast<size_t>(ba[d] == 1 ? 0 : idx[d]);
        ib = ib * static_cast<size_t>(bb[d]) + static_cast<size_t>(bb[d] == 1 ? 0 : idx[d]);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < p; ++j) {
          T s = T(0.0);
          for (int64_t c = 0; c < k; ++c)
            s = s + a.v[ia * mk + static_cast<size_t>(i * k + c)] *
                        b.v[ib * kp + static_cast<size_t>(c * p + j)];
          r.v.push_back(s);
        }
      next_index(idx, batch);
    }
    if (vb) r.shape.pop_back();
    if (va) r.shape.erase(r.shape.end() - (vb ? 1 : 2));
    return r;
  }

  static Tensor<T> reshape(const Node& n, Tensor<T> a, std::vector<int64_t> shape) {
    int64_t known = 1, infer = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0) shape[d] = d < a.shape.size() ? a.shape[d] : fail_i(n, "0 beyond rank");
      if (shape[d] < -1) fail(n, "a negative dimension other than -1");
      if (shape[d] == -1) {
        if (infer >= 0) fail(n, "two -1 dimensions");
        infer = static_cast<int64_t>(d);
      } else {
        if (shape[d] > 0 && known > static_cast<int64_t>(kMaxElements) / shape[d])
          fail(n, "the new shape is too large");
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
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
        fail(n, "perm is not a permutation of the axes");
      seen[static_cast<size_t>(p)] = true;
    }
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

  // ---- normalization
  // -----------------------------------------------------------------------------
  // LayerNormalization: over the axes from `axis` on, y = (x - mean) / sqrt(var + eps) * scale + b
  // (biased variance of the centred values, as the operator's function body computes it).
  // Y, and the Mean and InvStdDev outputs (the statistics' shape: the reduced axes kept as 1).
  static std::array<Tensor<T>, 3> layer_norm(const Node& n, const Values& vals) {
    using std::sqrt;
    const Tensor<T>& x = in(n, vals, 0);
    const auto ax = static_cast<size_t>(axis(n, n.i("axis", -1), x.shape.size()));
    const T eps = T(n.f("epsilon", 1e-5));
    size_t inner = 1;
    for (size_t d = ax; d < x.shape.size(); ++d) inner *= static_cast<size_t>(x.shape[d]);
    const size_t outer = inner ? x.size() / inner : 0;
    std::vector<int64_t> stat_shape(x.shape.begin(), x.shape.begin() + static_cast<long>(ax));
    stat_shape.resize(x.shape.size(), 1);
    Tensor<T> y{x.shape, {}}, mean_t{stat_shape, {}}, inv_t{stat_shape, {}};
    y.v.reserve(x.size());
    for (size_t o = 0; o < outer; ++o) {
      T sum = T(0.0);
      for (size_t k = 0; k < inner; ++k) sum = sum + x.v[o * inner + k];
      const T mean = sum / T(static_cast<double>(inner));
      T ss = T(0.0);
      for (size_t k = 0; k < inner; ++k) {
        const T d = x.v[o * inner + k] - mean;
        ss = ss + d * d;
      }
      const T denom = sqrt(ss / T(static_cast<double>(inner)) + eps);
      for (size_t k = 0; k < inner; ++k) y.v.push_back((x.v[o * inner + k] - mean) / denom);
      mean_t.v.push_back(mean);
      inv_t.v.push_back(T(1.0) / denom);
    }
    y = binary(n, y, in(n, vals, 1), [](const T& a, const T& b) { return a * b; });
    if (has_in(n, 2))
      y = binary(n, y, in(n, vals, 2), [](const T& a, const T& b) { return a + b; });
    return {std::move(y), std::move(mean_t), std::move(inv_t)};
  }
  // BatchNormalization in inference mode: per channel (axis 1), (x - mean) / sqrt(var + eps) *
  // scale + b with the given statistics.
  static Tensor<T> batch_norm(const Node& n, const Values& vals) {
    using std::sqrt;
    if (n.i("training_mode", 0) != 0) fail(n, "only inference mode (training_mode 0) is supported");
    const Tensor<T>& x = in(n, vals, 0);
    if (x.shape.size() < 2) fail(n, "the input needs a channel axis");
    const auto c = static_cast<size_t>(x.shape[1]);
    const Tensor<T>&scale = in(n, vals, 1), &b = in(n, vals, 2), &mean = in(n, vals, 3),
          &var = in(n, vals, 4);
    if (scale.size() != c || b.size() != c || mean.size() != c || var.size() != c)
      fail(n, "the per-channel tensors do not match the channels");
    const T eps = T(n.f("epsilon", 1e-5));
    size_t inner = 1;
    for (size_t d = 2; d < x.shape.size(); ++d) inner *= static_cast<size_t>(x.shape[d]);
    Tensor<T> y{x.shape, {}};
    y.v.reserve(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
      const size_t ch = (k / inner) % c;
      y.v.push_back((x.v[k] - mean.v[ch]) / sqrt(var.v[ch] + eps) * scale.v[ch] + b.v[ch]);
    }
    return y;
  }

  // ---- joins and gathers -----------------------------------------------------------------------
  static Tensor<T> concat(const Node& n, const Values& vals) {
    const Tensor<T>& first = in(n, vals, 0);
    const auto ax = static_cast<size_t>(axis(n, n.i("axis", 0), first.shape.size()));
    std::vector<int64_t> shape = first.shape;
    shape[ax] = 0;
    size_t outer = 1;
    for (size_t d = 0; d < ax; ++d) outer *= static_cast<size_t>(first.shape[d]);
    std::vector<const Tensor<T>*> parts;
    for (size_t k = 0; k < n.in.size(); ++k) {
      const Tensor<T>& p = in(n, vals, k);
      if (p.shape.size() != first.shape.size()) fail(n, "inputs of different ranks");
      for (size_t d = 0; d < shape.size(); ++d)
        if (d != ax && p.shape[d] != first.shape[d]) fail(n, "inputs differ off the axis");
      shape[ax] += p.shape[ax];
      parts.push_back(&p);
    }
    Tensor<T> r{shape, {}};
    r.v.reserve(count(shape));
    for (size_t o = 0; o < outer; ++o)
      for (const Tensor<T>* p : parts) {
        const size_t chunk = outer ? p->size() / outer : 0;
        r.v.insert(r.v.end(), p->v.begin() + static_cast<long>(o * chunk),
                   p->v.begin() + static_cast<long>((o + 1) * chunk));
      }
    return r;
  }
  static Tensor<T> gather(const Node& n, const Values& vals) {
    const Tensor<T>& data = in(n, vals, 0);
    const std::vector<int64_t> idx = ints_of(in(n, vals, 1));
    const auto ax = static_cast<size_t>(axis(n, n.i("axis", 0), data.shape.size()));
    const int64_t len = data.shape[ax];
    size_t outer = 1, inner = 1;
    for (size_t d = 0; d < ax; ++d) outer *= static_cast<size_t>(data.shape[d]);
    for (size_t d = ax + 1; d < data.shape.size(); ++d) inner *= static_cast<size_t>(data.shape[d]);
    std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + static_cast<long>(ax));
    const auto& ishape = in(n, vals, 1).shape;
    shape.insert(shape.end(), ishape.begin(), ishape.end());
    shape.insert(shape.end(), data.shape.begin() + static_cast<long>(ax) + 1, data.shape.end());
    Tensor<T> r{shape, {}};
    for (size_t o = 0; o < outer; ++o)
      for (int64_t i : idx) {
        if (i < -len || i >= len) fail(n, "index " + std::to_string(i) + " out of range");
        const auto j = static_cast<size_t>(i < 0 ? i + len : i);
        for (size_t k = 0; k < inner; ++k)
          r.v.push_back(data.v[(o * static_cast<size_t>(len) + j) * inner + k]);
      }
    return r;
  }

  // ---- 2-D convolution and pooling (NCHW, explicit pads, auto_pad NOTSET) ----------------------
  struct Window {
    int64_t kh, kw, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1;
    int64_t oh(int64_t h) const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
    int64_t ow(int64_t w) const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
  };
  static Window window(const Node& n, int64_t kh, int64_t kw) {
    const auto& ap = n.attrs.count("auto_pad") ? n.attrs.at("auto_pad").s : std::string("NOTSET");
    if (!ap.empty() && ap != "NOTSET") fail(n, "auto_pad " + ap + " is not supported");
    if (n.i("ceil_mode", 0)) fail(n, "ceil_mode 1 is not supported");
    Window w{kh, kw};
    const auto st = n.ints("strides"), pads = n.ints("pads"), dil = n.ints("dilations");
    if (st.size() == 2) w.sh = st[0], w.sw = st[1];
    if (pads.size() == 4) w.pt = pads[0], w.pl = pads[1], w.pb = pads[2], w.pr = pads[3];
    if (dil.size() == 2) w.dh = dil[0], w.dw = dil[1];
    if ((!st.empty() && st.size() != 2) || (!pads.empty() && pads.size() != 4) ||
        (!dil.empty() && dil.size() != 2))
      fail(n, "only 2-D windows are supported");
    if (w.kh < 1 || w.kw < 1 || w.sh < 1 || w.sw < 1 || w.dh < 1 || w.dw < 1 || w.pt < 0 ||
        w.pl < 0 || w.pb < 0 || w.pr < 0)
      fail(n, "kernel, strides and dilations must be positive and pads not negative");
    return w;
  }
  static Tensor<T> conv(const Node& n, const Values& vals) {
    const Tensor<T>&x = in(n, vals, 0), &wt = in(n, vals, 1);
    if (x.shape.size() != 4 || wt.shape.size() != 4)
      fail(n, "only 2-D convolution (NCHW) is supported");
    const int64_t group = n.i("group", 1);
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t M = wt.shape[0], CG = wt.shape[1];
    if (group < 1 || C != CG * group || M % group) fail(n, "channels do not match the groups");
    const Window w = window(n, wt.shape[2], wt.shape[3]);
    const int64_t OH = w.oh(H), OW = w.ow(W);
    if (OH <= 0 || OW <= 0) fail(n, "the window is larger than the padded input");
    const Tensor<T>* bias = has_in(n, 2) ? &in(n, vals, 2) : nullptr;
    Tensor<T> r{{N, M, OH, OW}, {}};
    r.v.reserve(count(r.shape));
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t g = m / (M / group);
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            T s = bias ? bias->v[static_cast<size_t>(m)] : T(0.0);
            for (int64_t c = 0; c < CG; ++c)
              for (int64_t ky = 0; ky < w.kh; ++ky)
                for (int64_t kx = 0; kx < w.kw; ++kx) {
                  const int64_t iy = oy * w.sh - w.pt + ky * w.dh,
                                ix = ox * w.sw - w.pl + kx * w.dw;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  s = s + x.v[static_cast<size_t>(((b * C + g * CG + c) * H + iy) * W + ix)] *
                              wt.v[static_cast<size_t>(((m * CG + c) * w.kh + ky) * w.kw + kx)];
                }
            r.v.push_back(s);
          }
      }
    return r;
  }
  static Tensor<T> pool(const Node& n, const Values& vals, bool max) {
    const Tensor<T>& x = in(n, vals, 0);
    if (x.shape.size() != 4) fail(n, "only 2-D pooling (NCHW) is supported");
    const auto k = n.ints("kernel_shape");
    if (k.size() != 2) fail(n, "only 2-D kernels are supported");
    if (n.out.size() > 1 && !n.out[1].empty()) fail(n, "the Indices output is not supported");
    const Window w = window(n, k[0], k[1]);
    const bool include_pad = n.i("count_include_pad", 0) != 0;
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t OH = w.oh(H), OW = w.ow(W);
    if (OH <= 0 || OW <= 0) fail(n, "the window is larger than the padded input");
    Tensor<T> r{{N, C, OH, OW}, {}};
    for (int64_t p = 0; p < N * C; ++p)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          T acc = T(0.0);
          int64_t used = 0;
          for (int64_t ky = 0; ky < w.kh; ++ky)
            for (int64_t kx = 0; kx < w.kw; ++kx) {
              const int64_t iy = oy * w.sh - w.pt + ky * w.dh, ix = ox * w.sw - w.pl + kx * w.dw;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              const T& v = x.v[static_cast<size_t>((p * H + iy) * W + ix)];
              acc = used == 0 && max ? v : max ? (acc < v ? v : acc) : acc + v;
              ++used;
            }
          if (!max) acc = acc / T(static_cast<double>(include_pad ? w.kh * w.kw : used));
          r.v.push_back(acc);
        }
    return r;
  }

  // ---- three-way broadcasting (Where)
  // ------------------------------------------------------------
  static Tensor<T> where(const Node& n, const Tensor<T>& c, const Tensor<T>& a,
                         const Tensor<T>& b) {
    const size_t rank = std::max({c.shape.size(), a.shape.size(), b.shape.size()});
    auto padded = [&](const Tensor<T>& t) {
      std::vector<int64_t> s(rank, 1);
      std::copy(t.shape.begin(), t.shape.end(),
                s.begin() + static_cast<long>(rank - t.shape.size()));
      return s;
    };
    const auto sc = padded(c), sa = padded(a), sb = padded(b);
    std::vector<int64_t> s(rank);
    for (size_t d = 0; d < rank; ++d) {
      s[d] = std::max({sc[d], sa[d], sb[d]});
      for (int64_t x : {sc[d], sa[d], sb[d]})
        if (x != 1 && x != s[d]) fail(n, "shapes do not broadcast");
    }
    Tensor<T> r{s, {}, a.elem};
    const size_t total = count(s);
    r.v.reserve(total);
    std::vector<int64_t> idx(rank, 0);
    auto at = [&](const std::vector<int64_t>& sh) {
      size_t i = 0;
      for (size_t d = 0; d < rank; ++d)
        i = i * static_cast<size_t>(sh[d]) + static_cast<size_t>(sh[d] == 1 ? 0 : idx[d]);
      return i;
    };
    for (size_t k = 0; k < total; ++k) {
      r.v.push_back(value_of(c.v[at(sc)]) != 0 ? a.v[at(sa)] : b.v[at(sb)]);
      next_index(idx, s);
    }
    return r;
  }

  // Slice (opset 10+): starts, ends, axes, steps as inputs, clamped as the operator defines.
  static Tensor<T> slice(const Node& n, const Values& vals) {
    const Tensor<T>& x = in(n, vals, 0);
    const auto starts = ints_of(in(n, vals, 1)), ends = ints_of(in(n, vals, 2));
    const size_t rank = x.shape.size();
    std::vector<int64_t> axes = has_in(n, 3) ? ints_of(in(n, vals, 3)) : std::vector<int64_t>{};
    std::vector<int64_t> steps = has_in(n, 4) ? ints_of(in(n, vals, 4)) : std::vector<int64_t>{};
    if (axes.empty())
      for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      fail(n, "starts, ends, axes and steps differ in length");
    std::vector<int64_t> lo(rank, 0), step(rank, 1), len(x.shape);
    for (size_t k = 0; k < starts.size(); ++k) {
      const auto d = static_cast<size_t>(axis(n, axes[k], rank));
      const int64_t dim = x.shape[d], st = steps[k];
      if (st == 0) fail(n, "a step of 0");
      auto clampi = [&](int64_t v, int64_t a, int64_t b) { return std::max(a, std::min(b, v)); };
      int64_t s0 = starts[k] < 0 ? starts[k] + dim : starts[k];
      int64_t e0 = ends[k] < 0 ? ends[k] + dim : ends[k];
      if (st > 0) {
        s0 = clampi(s0, 0, dim);
        e0 = clampi(e0, 0, dim);
        len[d] = e0 > s0 ? (e0 - s0 + st - 1) / st : 0;
      } else {
        s0 = clampi(s0, 0, dim - 1);
        e0 = clampi(e0, -1, dim - 1);
        len[d] = s0 > e0 ? (s0 - e0 - st - 1) / (-st) : 0;
      }
      lo[d] = s0;
      step[d] = st;
    }
    std::vector<int64_t> stride(rank, 1);
    for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * x.shape[d];
    Tensor<T> r{len, {}, x.elem};
    const size_t total = count(len);
    r.v.reserve(total);
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < total; ++k) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += (lo[d] + idx[d] * step[d]) * stride[d];
      r.v.push_back(x.v[static_cast<size_t>(src)]);
      next_index(idx, len);
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
      for (size_t k = 1; k < n.out.size(); ++k)
        if (!n.out[k].empty()) fail(n, "only the first output is supported");
      vals[n.out[0]] = std::move(t);
    };
    const std::string& op = n.op;
    auto bin = [&](auto f) { out(binary(n, in(n, vals, 0), in(n, vals, 1), f)); };
    auto un = [&](auto f) { out(unary(in(n, vals, 0), f)); };
    const T zero = T(0.0), one = T(1.0);
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
    if (op == "Identity") return out(in(n, vals, 0));
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
      return out(std::move(r));
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
      return out(std::move(r));
    }
    if (op == "Where") return out(where(n, in(n, vals, 0), in(n, vals, 1), in(n, vals, 2)));
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
      return out(std::move(r));
    }
    if (op == "Expand") {
      const Tensor<T>& x = in(n, vals, 0);
      Tensor<T> shape_ones;
      shape_ones.shape = ints_of(in(n, vals, 1));
      for (int64_t d : shape_ones.shape)
        if (d < 0) fail(n, "a negative dimension");
      shape_ones.v.assign(count(shape_ones.shape), zero);
      Tensor<T> r = binary(n, x, shape_ones, [](const T& a, const T&) { return a; });
      r.elem = x.elem;
      return out(std::move(r));
    }
    if (op == "Slice") return out(slice(n, vals));
    if (op == "LayerNormalization") {
      auto outs = layer_norm(n, vals);
      for (size_t k = 0; k < n.out.size() && k < 3; ++k)
        if (!n.out[k].empty()) vals[n.out[k]] = std::move(outs[k]);
      return;
    }
    if (op == "BatchNormalization") return out(batch_norm(n, vals));
    if (op == "Concat") return out(concat(n, vals));
    if (op == "Gather") return out(gather(n, vals));
    if (op == "Conv") return out(conv(n, vals));
    if (op == "MaxPool" || op == "AveragePool") return out(pool(n, vals, op == "MaxPool"));
    if (op == "GlobalAveragePool") {
      const Tensor<T>& x = in(n, vals, 0);
      if (x.shape.size() < 3) fail(n, "needs spatial axes");
      std::vector<int64_t> axes;
      for (size_t d = 2; d < x.shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      return out(reduce(
          n, x, axes, true, [](const T& a, const T& b) { return a + b; }, true));
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
      return out(std::move(r));
    }
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
      return out(std::move(r));
    }
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
      const auto rank = static_cast<int64_t>(a.shape.size());
      int64_t ax = n.i("axis", 1);
      if (ax < 0) ax += rank;
      if (ax < 0 || ax > rank) fail(n, "axis out of range");
      int64_t rows = 1;
      for (int64_t d = 0; d < ax; ++d) rows *= a.shape[static_cast<size_t>(d)];
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
