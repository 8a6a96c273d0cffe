// Reverse mode over the ONNX interpreter (eval.h): each differentiable operator's backward,
// written next to the others for any scalar T (float, double, Stoch<F, 3>, Big, Prop), so that a
// graph's gradients run natively, under CESTAC and in high precision from one source. Given a
// node, the forward values and the gradient of the node's first output, backward() returns the
// gradient of each of its inputs (none for inputs that carry no gradient: shapes, axes, indices).
// An operator, attribute or shape outside differentiable_ops() is an InputError naming the node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/onnx/eval.h"

namespace stabfuzz::onnx {

inline const std::vector<std::string>& differentiable_ops() {
  // clang-format off
  static const std::vector<std::string> ops = {
      "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Reciprocal", "Relu", "LeakyRelu", "Tanh",
      "Sigmoid", "Softplus", "Exp", "Log", "Sqrt", "Erf", "MatMul", "Gemm", "Softmax",
      "LogSoftmax", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "ReduceSum",
      "ReduceMean", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Transpose"};
  // clang-format on
  return ops;
}

inline bool is_differentiable(const std::string& op) {
  const auto& ops = differentiable_ops();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

template <class T>
class Grad {
 public:
  using Values = onnx::Values<T>;
  using Grads = std::vector<std::optional<Tensor<T>>>;

  // The gradients of n's inputs from gy, the gradient of its first output. `wanted` (when
  // given, one flag per input) lets the products skip the gradients no one reads (the data's).
  static Grads backward(const Node& n, const Values& vals, const Tensor<T>& gy,
                        const std::vector<bool>* wanted = nullptr) {
    if (!is_differentiable(n.op))
      fail(n, "no backward for this operator (training supports: " + list() + ")");
    if (auto g = unary_backward(n, vals, gy)) return {std::move(*g)};
    if (auto g = broadcasting_backward(n, vals, gy)) return std::move(*g);
    if (auto g = shape_backward(n, vals, gy)) return std::move(*g);
    return network_backward(
        n, vals, gy, [&](size_t k) { return !wanted || (k < wanted->size() && (*wanted)[k]); });
  }

  // g summed over the axes that broadcasting added or stretched, down to `shape`.
  static Tensor<T> unbroadcast(const Tensor<T>& g, const std::vector<int64_t>& shape) {
    if (g.shape == shape) return g;
    Tensor<T> r{shape, std::vector<T>(count(shape), T(0.0)), g.elem};
    const size_t rank = g.shape.size(), off = rank - shape.size();
    std::vector<int64_t> idx(rank, 0);
    for (size_t k = 0; k < g.size(); ++k, next_index(idx, g.shape)) {
      size_t t = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        t = t * static_cast<size_t>(shape[d]) +
            (shape[d] == 1 ? 0 : static_cast<size_t>(idx[off + d]));
      r.v[t] = r.v[t] + g.v[k];
    }
    return r;
  }

 private:
  static std::string list() {
    std::string s;
    for (const auto& o : differentiable_ops()) s += (s.empty() ? "" : ", ") + o;
    return s;
  }
  static const Tensor<T>& y_of(const Node& n, const Values& vals) {
    const auto it = vals.find(n.out.at(0));
    if (it == vals.end()) fail(n, "its output has no forward value");
    return it->second;
  }
  // gy times f(x, y) element by element (x the input, y the output).
  template <class F>
  static Tensor<T> chain(const Node& n, const Values& vals, const Tensor<T>& gy, F f) {
    const Tensor<T>&x = in(n, vals, 0), &y = y_of(n, vals);
    if (gy.size() != x.size() || y.size() != x.size()) fail(n, "gradient of another shape");
    Tensor<T> r{x.shape, {}, x.elem};
    r.v.reserve(x.size());
    for (size_t k = 0; k < x.size(); ++k) r.v.push_back(gy.v[k] * f(x.v[k], y.v[k]));
    return r;
  }

  static std::optional<Tensor<T>> unary_backward(const Node& n, const Values& vals,
                                                 const Tensor<T>& gy) {
    using std::exp;
    const std::string& op = n.op;
    const T zero = T(0.0), one = T(1.0);
    auto ch = [&](auto f) { return chain(n, vals, gy, f); };
    if (op == "Neg") return ch([&](const T&, const T&) { return -one; });
    if (op == "Abs") return ch([&](const T& x, const T&) { return x < zero ? -one : one; });
    if (op == "Relu") return ch([&](const T& x, const T&) { return x < zero ? zero : one; });
    if (op == "LeakyRelu") {
      const T alpha = T(n.f("alpha", 0.01));
      return ch([&](const T& x, const T&) { return x < zero ? alpha : one; });
    }
    if (op == "Tanh") return ch([&](const T&, const T& y) { return one - y * y; });
    if (op == "Sigmoid") return ch([&](const T&, const T& y) { return y * (one - y); });
    if (op == "Softplus")  // the sigmoid of x, written as eval.h writes it
      return ch([&](const T& x, const T&) {
        if (x < zero) {
          const T e = exp(x);
          return e / (one + e);
        }
        return one / (one + exp(-x));
      });
    if (op == "Exp") return ch([](const T&, const T& y) { return y; });
    if (op == "Log") return ch([&](const T& x, const T&) { return one / x; });
    if (op == "Sqrt") return ch([&](const T&, const T& y) { return T(0.5) / y; });
    if (op == "Reciprocal") return ch([&](const T&, const T& y) { return -(y * y); });
    if (op == "Erf")  // 2 / sqrt(pi) e^(-x^2)
      return ch([&](const T& x, const T&) { return T(1.1283791670955126) * exp(-(x * x)); });
    return std::nullopt;
  }

  static std::optional<Grads> broadcasting_backward(const Node& n, const Values& vals,
                                                    const Tensor<T>& gy) {
    const std::string& op = n.op;
    if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div") return std::nullopt;
    const Tensor<T>&a = in(n, vals, 0), &b = in(n, vals, 1);
    if (is_integer(a.elem) || is_integer(b.elem)) fail(n, "integer arithmetic has no gradient");
    auto mul = [&](const Tensor<T>& u, const Tensor<T>& v) {
      return binary(n, u, v, [](const T& p, const T& q) { return p * q; });
    };
    if (op == "Add") return Grads{unbroadcast(gy, a.shape), unbroadcast(gy, b.shape)};
    if (op == "Sub")
      return Grads{unbroadcast(gy, a.shape),
                   unbroadcast(unary(gy, [](const T& g) { return -g; }), b.shape)};
    if (op == "Mul")
      return Grads{unbroadcast(mul(gy, b), a.shape), unbroadcast(mul(gy, a), b.shape)};
    // Div: d/da = g / b, d/db = -g y / b
    const Tensor<T>& y = y_of(n, vals);
    const auto div = [](const T& p, const T& q) { return p / q; };
    const Tensor<T> ga = binary(n, gy, b, div);
    const Tensor<T> gb = binary(n, mul(gy, y), b, [](const T& p, const T& q) { return -(p / q); });
    return Grads{unbroadcast(ga, a.shape), unbroadcast(gb, b.shape)};
  }

  static Tensor<T> reshaped(const Tensor<T>& gy, const Tensor<T>& x) {
    Tensor<T> r = gy;
    r.shape = x.shape;
    r.elem = x.elem;
    return r;
  }

  static std::optional<Grads> shape_backward(const Node& n, const Values& vals,
                                             const Tensor<T>& gy) {
    const std::string& op = n.op;
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
        op == "Identity") {
      const Tensor<T>& x = in(n, vals, 0);
      if (gy.size() != x.size()) fail(n, "gradient of another size");
      Grads g{reshaped(gy, x)};
      g.resize(n.in.size());  // shape and axes inputs carry no gradient
      return g;
    }
    if (op == "Transpose") {  // the inverse permutation
      const Tensor<T>& x = in(n, vals, 0);
      std::vector<int64_t> perm = n.ints("perm");
      if (perm.empty())
        for (size_t d = x.shape.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      std::vector<int64_t> inv(perm.size());
      for (size_t d = 0; d < perm.size(); ++d)
        inv[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
      Node t = n;
      t.attrs["perm"] = ints_attr(inv);
      return Grads{transpose(t, gy)};
    }
    if (op == "ReduceSum" || op == "ReduceMean") {
      const Tensor<T>& x = in(n, vals, 0);
      const Tensor<T>& y = y_of(n, vals);
      // y with the reduced axes kept (size 1), broadcast back over x's shape.
      const size_t reduced = y.size() ? x.size() / y.size() : 1;
      std::vector<int64_t> keep = x.shape;
      std::vector<int64_t> axes = reduce_axes(n, vals);
      if (axes.empty() && !n.i("noop_with_empty_axes", 0))
        for (size_t d = 0; d < x.shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      for (int64_t a : axes) keep[static_cast<size_t>(axis(n, a, x.shape.size()))] = 1;
      Tensor<T> g = gy;
      g.shape = keep;
      const T scale = op == "ReduceMean" ? T(1.0 / static_cast<double>(reduced)) : T(1.0);
      const Tensor<T> zeros{x.shape, std::vector<T>(x.size(), T(0.0)), x.elem};
      Grads out{binary(n, zeros, g, [&](const T& z, const T& q) {
        return op == "ReduceMean" ? z + q * scale : z + q;
      })};
      out.resize(n.in.size());
      return out;
    }
    return std::nullopt;
  }

  template <class Want>
  static Grads network_backward(const Node& n, const Values& vals, const Tensor<T>& gy, Want want) {
    const std::string& op = n.op;
    if (op == "MatMul") {
      const Tensor<T>&a = in(n, vals, 0), &b = in(n, vals, 1);
      if (a.shape.size() != 2 || b.shape.size() != 2)
        fail(n, "backward supports 2-D operands only");
      Grads out(2);
      if (want(0)) out[0] = matmul2(n, gy, b, false, true);
      if (want(1)) out[1] = matmul2(n, a, gy, true, false);
      return out;
    }
    if (op == "Gemm") return gemm_backward(n, vals, gy, want);
    if (op == "Softmax" || op == "LogSoftmax") return {softmax_backward(n, vals, gy)};
    if (op == "Conv") return conv_backward(n, vals, gy, want(0));
    if (op == "MaxPool" || op == "AveragePool") return {pool_backward(n, vals, gy)};
    if (op == "GlobalAveragePool") {
      const Tensor<T>& x = in(n, vals, 0);
      const size_t plane =
          x.shape.size() >= 2 ? x.size() / static_cast<size_t>(x.shape[0] * x.shape[1]) : 1;
      const T inv = T(1.0 / static_cast<double>(plane));
      Tensor<T> r{x.shape, {}, x.elem};
      r.v.reserve(x.size());
      for (size_t k = 0; k < x.size(); ++k) r.v.push_back(gy.v[k / plane] * inv);
      return {std::move(r)};
    }
    fail(n, "no backward for this operator");
  }

  // y = alpha op(A) op(B) + beta C.
  template <class Want>
  static Grads gemm_backward(const Node& n, const Values& vals, const Tensor<T>& gy, Want want) {
    const Tensor<T>&A = in(n, vals, 0), &B = in(n, vals, 1);
    const bool ta = n.i("transA", 0) != 0, tb = n.i("transB", 0) != 0;
    const double alpha = n.f("alpha", 1), beta = n.f("beta", 1);
    const Tensor<T> G = alpha == 1 ? gy : unary(gy, [&](const T& g) { return T(alpha) * g; });
    Grads out(n.in.size());
    // d op(A) = G op(B)^T, d op(B) = op(A)^T G, each transposed back when op transposes.
    if (want(0)) out[0] = ta ? matmul2(n, B, G, tb, true) : matmul2(n, G, B, false, !tb);
    if (want(1)) out[1] = tb ? matmul2(n, G, A, true, ta) : matmul2(n, A, G, !ta, false);
    if (has_in(n, 2)) {
      const Tensor<T>& C = in(n, vals, 2);
      out[2] =
          unbroadcast(beta == 1 ? gy : unary(gy, [&](const T& g) { return T(beta) * g; }), C.shape);
    }
    return out;
  }

  // Softmax: g_x = y (g - sum_k g_k y_k); LogSoftmax: g_x = g - e^y sum_k g_k (along the axis).
  static Tensor<T> softmax_backward(const Node& n, const Values& vals, const Tensor<T>& gy) {
    using std::exp;
    const Tensor<T>& y = y_of(n, vals);
    const bool log_form = n.op == "LogSoftmax";
    const size_t rank = y.shape.size();
    const auto ax = static_cast<size_t>(axis(n, n.i("axis", -1), rank));
    size_t inner = 1;
    for (size_t d = ax + 1; d < rank; ++d) inner *= static_cast<size_t>(y.shape[d]);
    const auto len = static_cast<size_t>(y.shape[ax]);
    Tensor<T> r{y.shape, std::vector<T>(y.size(), T(0.0)), y.elem};
    if (len == 0) return r;
    const size_t outer = y.size() / (len * inner);
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        auto at = [&](size_t k) { return (o * len + k) * inner + i; };
        T s = T(0.0);
        for (size_t k = 0; k < len; ++k)
          s = s + (log_form ? gy.v[at(k)] : gy.v[at(k)] * y.v[at(k)]);
        for (size_t k = 0; k < len; ++k)
          r.v[at(k)] =
              log_form ? gy.v[at(k)] - exp(y.v[at(k)]) * s : y.v[at(k)] * (gy.v[at(k)] - s);
      }
    return r;
  }

  // The forward loop of ops.h's conv, each product's two partial derivatives accumulated.
  static Grads conv_backward(const Node& n, const Values& vals, const Tensor<T>& gy, bool want_x) {
    const Tensor<T>&x = in(n, vals, 0), &wt = in(n, vals, 1);
    if (x.shape.size() != 4 || wt.shape.size() != 4) fail(n, "only 2-D convolution is supported");
    const int64_t group = n.i("group", 1);
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t M = wt.shape[0], CG = wt.shape[1];
    const Window w = window(n, wt.shape[2], wt.shape[3], H, W);
    const int64_t OH = w.oh(H), OW = w.ow(W);
    if (gy.size() != static_cast<size_t>(N * M * OH * OW)) fail(n, "gradient of another shape");
    Tensor<T> gx{x.shape, std::vector<T>(x.size(), T(0.0)), x.elem};
    Tensor<T> gw{wt.shape, std::vector<T>(wt.size(), T(0.0)), wt.elem};
    Tensor<T> gb{{M}, std::vector<T>(static_cast<size_t>(M), T(0.0)), wt.elem};
    size_t o = 0;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t m = 0; m < M; ++m) {
        const int64_t g = m / (M / group);
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox, ++o) {
            const T& d = gy.v[o];
            gb.v[static_cast<size_t>(m)] = gb.v[static_cast<size_t>(m)] + d;
            for (int64_t c = 0; c < CG; ++c)
              for (int64_t ky = 0; ky < w.kh; ++ky)
                for (int64_t kx = 0; kx < w.kw; ++kx) {
                  const int64_t iy = oy * w.sh - w.pt + ky * w.dh,
                                ix = ox * w.sw - w.pl + kx * w.dw;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  const auto xi = static_cast<size_t>(((b * C + g * CG + c) * H + iy) * W + ix);
                  const auto wi = static_cast<size_t>(((m * CG + c) * w.kh + ky) * w.kw + kx);
                  if (want_x) gx.v[xi] = gx.v[xi] + d * wt.v[wi];
                  gw.v[wi] = gw.v[wi] + d * x.v[xi];
                }
          }
      }
    Grads out(2);
    if (want_x) out[0] = std::move(gx);
    out[1] = std::move(gw);
    if (has_in(n, 2)) out.push_back(std::move(gb));
    return out;
  }

  // MaxPool: the gradient goes to the element the forward pass kept (the first maximum);
  // AveragePool: shared by the elements averaged.
  static Tensor<T> pool_backward(const Node& n, const Values& vals, const Tensor<T>& gy) {
    const Tensor<T>& x = in(n, vals, 0);
    const bool max = n.op == "MaxPool";
    const auto k = n.ints("kernel_shape");
    if (x.shape.size() != 4 || k.size() != 2) fail(n, "only 2-D pooling is supported");
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const Window w = window(n, k[0], k[1], H, W);
    const bool include_pad = n.i("count_include_pad", 0) != 0;
    const int64_t OH = w.oh(H), OW = w.ow(W);
    Tensor<T> gx{x.shape, std::vector<T>(x.size(), T(0.0)), x.elem};
    size_t o = 0;
    std::vector<size_t> cells;
    for (int64_t p = 0; p < N * C; ++p)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox, ++o) {
          cells.clear();
          for (int64_t ky = 0; ky < w.kh; ++ky)
            for (int64_t kx = 0; kx < w.kw; ++kx) {
              const int64_t iy = oy * w.sh - w.pt + ky * w.dh, ix = ox * w.sw - w.pl + kx * w.dw;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              cells.push_back(static_cast<size_t>((p * H + iy) * W + ix));
            }
          if (cells.empty()) continue;
          if (max) {
            size_t best = cells[0];
            for (size_t c : cells)
              if (x.v[best] < x.v[c]) best = c;
            gx.v[best] = gx.v[best] + gy.v[o];
          } else {
            const T share =
                gy.v[o] / T(static_cast<double>(include_pad ? w.kh * w.kw
                                                            : static_cast<int64_t>(cells.size())));
            for (size_t c : cells) gx.v[c] = gx.v[c] + share;
          }
        }
    return gx;
  }
};

}  // namespace stabfuzz::onnx
