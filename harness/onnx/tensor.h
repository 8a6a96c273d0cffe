// Tensors of the ONNX interpreter (eval.h) and the operations on their shapes: values held in any
// scalar T, numpy broadcasting, reductions over axes, reshape, transpose, concat, gather, where,
// slice, and the checks that make a malformed graph an InputError naming the node.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "harness/onnx/model.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {

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

// An exact zero: every sample of a CESTAC value is +-0 (read without a comparison that CESTAC would
// judge); native zeros likewise. Other scalar types (Big, Prop) never skip work on it.
inline bool exact_zero(double x) { return x == 0; }
inline bool exact_zero(float x) { return x == 0; }
template <class S>
bool exact_zero(const S& x) {
  if constexpr (requires {
                  S::kLanes;
                  x.s[0];
                }) {
    for (int i = 0; i < S::kLanes; ++i)
      if (x.s[i] != 0) return false;
    return true;
  } else {
    return false;
  }
}

template <class T>
using Values = std::map<std::string, Tensor<T>>;

[[noreturn]] inline void fail(const Node& n, const std::string& why) {
  throw InputError("ONNX node '" + n.name + "' (" + n.op + "): " + why);
}
[[noreturn]] inline int64_t fail_i(const Node& n, const std::string& why) { fail(n, why); }
template <class T>
const Tensor<T>& in(const Node& n, const Values<T>& vals, size_t k) {
  if (k >= n.in.size() || n.in[k].empty()) fail(n, "input " + std::to_string(k) + " is missing");
  const auto it = vals.find(n.in[k]);
  if (it == vals.end()) fail(n, "input '" + n.in[k] + "' has no value");
  return it->second;
}
inline bool has_in(const Node& n, size_t k) { return k < n.in.size() && !n.in[k].empty(); }
template <class T>
std::vector<int64_t> ints_of(const Tensor<T>& t) {
  std::vector<int64_t> out;
  for (const T& x : t.v) out.push_back(static_cast<int64_t>(std::llround(value_of(x))));
  return out;
}
inline int64_t axis(const Node& n, int64_t a, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (a < -r || a >= r) fail(n, "axis " + std::to_string(a) + " out of range");
  return a < 0 ? a + r : a;
}

// The row-major successor of the multi-index `idx` within `shape`.
inline void next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

// ---- elementwise with numpy broadcasting -----------------------------------------------------
template <class T, class F>
Tensor<T> unary(const Tensor<T>& a, F f) {
  Tensor<T> r{a.shape, {}, a.elem};
  r.v.reserve(a.size());
  for (const T& x : a.v) r.v.push_back(f(x));
  return r;
}
template <class T, class F>
Tensor<T> binary(const Node& n, const Tensor<T>& a, const Tensor<T>& b, F f) {
  const size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> sa(rank, 1), sb(rank, 1), s(rank);
  std::copy(a.shape.begin(), a.shape.end(), sa.begin() + static_cast<long>(rank - a.shape.size()));
  std::copy(b.shape.begin(), b.shape.end(), sb.begin() + static_cast<long>(rank - b.shape.size()));
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
template <class T, class F>
Tensor<T> reduce(const Node& n, const Tensor<T>& a, std::vector<int64_t> axes, bool keepdims, F f,
                 bool mean) {
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
template <class T>
std::vector<int64_t> reduce_axes(const Node& n, const Values<T>& vals) {
  if (has_in(n, 1)) return ints_of(in(n, vals, 1));
  return n.ints("axes");
}

template <class T>
Tensor<T> reshape(const Node& n, Tensor<T> a, std::vector<int64_t> shape) {
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

template <class T>
Tensor<T> transpose(const Node& n, const Tensor<T>& a) {
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

// ---- joins and gathers -----------------------------------------------------------------------
template <class T>
Tensor<T> concat(const Node& n, const Values<T>& vals) {
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
template <class T>
Tensor<T> gather(const Node& n, const Values<T>& vals) {
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

// ---- three-way broadcasting (Where)
// ------------------------------------------------------------
template <class T>
Tensor<T> where(const Node& n, const Tensor<T>& c, const Tensor<T>& a, const Tensor<T>& b) {
  const size_t rank = std::max({c.shape.size(), a.shape.size(), b.shape.size()});
  auto padded = [&](const Tensor<T>& t) {
    std::vector<int64_t> s(rank, 1);
    std::copy(t.shape.begin(), t.shape.end(), s.begin() + static_cast<long>(rank - t.shape.size()));
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
template <class T>
Tensor<T> slice(const Node& n, const Values<T>& vals) {
  const Tensor<T>& x = in(n, vals, 0);
  const auto starts = ints_of(in(n, vals, 1)), ends = ints_of(in(n, vals, 2));
  const size_t rank = x.shape.size();
  std::vector<int64_t> axes = has_in(n, 3) ? ints_of(in(n, vals, 3)) : std::vector<int64_t>{};
  std::vector<int64_t> steps = has_in(n, 4) ? ints_of(in(n, vals, 4)) : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
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

}  // namespace stabfuzz::onnx
