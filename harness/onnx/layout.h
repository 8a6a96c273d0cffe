// Layout operators of the ONNX interpreter (eval.h) that copy values without arithmetic: Split
// (several outputs), Pad (constant, edge, reflect and wrap), Tile, and the index-valued ArgMax and
// ArgMin. Shapes and broadcasting are in tensor.h.
#pragma once

#include <string>
#include <vector>

#include "harness/onnx/tensor.h"

namespace stabfuzz::onnx {

// The elements before and after axis `ax` of `shape` (outer, inner).
inline std::pair<size_t, size_t> around(const std::vector<int64_t>& shape, size_t ax) {
  size_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= static_cast<size_t>(shape[d]);
  for (size_t d = ax + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  return {outer, inner};
}

// Split along `axis`: the sizes from input 1 (opset 13), the 'split' attribute (older opsets), or
// equal parts, one per output (opset 18's num_outputs: the last part smaller when uneven).
template <class T>
std::vector<Tensor<T>> split(const Node& n, const Values<T>& vals) {
  const Tensor<T>& x = in(n, vals, 0);
  const auto ax = static_cast<size_t>(axis(n, n.i("axis", 0), x.shape.size()));
  const int64_t len = x.shape[ax];
  std::vector<int64_t> sizes = has_in(n, 1) ? ints_of(in(n, vals, 1)) : n.ints("split");
  const auto outs = static_cast<int64_t>(n.out.size());
  if (sizes.empty()) {
    const int64_t parts = n.i("num_outputs", outs);
    if (parts < 1 || parts != outs) fail(n, "num_outputs does not match the outputs");
    const int64_t chunk = (len + parts - 1) / parts;
    for (int64_t p = 0; p < parts; ++p)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, len - p * chunk)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail(n, "a negative split size");
    total += s;
  }
  if (total != len || static_cast<int64_t>(sizes.size()) != outs)
    fail(n, "the split sizes do not add up to the axis or do not match the outputs");
  const auto [outer, inner] = around(x.shape, ax);
  std::vector<Tensor<T>> r;
  int64_t start = 0;
  for (int64_t s : sizes) {
    Tensor<T> t{x.shape, {}, x.elem};
    t.shape[ax] = s;
    t.v.reserve(count(t.shape));
    for (size_t o = 0; o < outer; ++o) {
      const auto* src = &x.v[(o * static_cast<size_t>(len) + static_cast<size_t>(start)) * inner];
      t.v.insert(t.v.end(), src, src + static_cast<size_t>(s) * inner);
    }
    r.push_back(std::move(t));
    start += s;
  }
  return r;
}

// Pad (opsets 2-19): pads from input 1 or the attribute (begins, then ends; negative pads crop),
// the constant from input 2 or the 'value' attribute, the axes from input 3 (all by default).
template <class T>
Tensor<T> pad(const Node& n, const Values<T>& vals) {
  const Tensor<T>& x = in(n, vals, 0);
  const size_t rank = x.shape.size();
  const std::string mode = n.has("mode") ? n.attrs.at("mode").s : "constant";
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    fail(n, "mode " + mode + " is not supported");
  const std::vector<int64_t> given = has_in(n, 1) ? ints_of(in(n, vals, 1)) : n.ints("pads");
  std::vector<int64_t> axes;
  if (has_in(n, 3)) {
    for (int64_t a : ints_of(in(n, vals, 3))) axes.push_back(axis(n, a, rank));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (given.size() != 2 * axes.size()) fail(n, "needs a begin and an end pad per axis");
  std::vector<int64_t> begin(rank, 0), shape = x.shape;
  for (size_t k = 0; k < axes.size(); ++k) {
    const auto d = static_cast<size_t>(axes[k]);
    begin[d] = given[k];
    shape[d] += given[k] + given[k + axes.size()];
    if (shape[d] < 0) fail(n, "pads crop more than the axis holds");
    if (mode != "constant" && x.shape[d] == 0 && shape[d] > 0) fail(n, "pads an empty axis");
  }
  const T value = has_in(n, 2) && in(n, vals, 2).size() ? in(n, vals, 2).v[0] : T(n.f("value", 0));
  Tensor<T> r{shape, {}, x.elem};
  r.v.reserve(count(shape));
  std::vector<int64_t> idx(rank, 0);
  for (size_t k = 0; k < count(shape); ++k, next_index(idx, shape)) {
    size_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t len = x.shape[d];
      int64_t i = idx[d] - begin[d];
      if (i < 0 || i >= len) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "edge") {
          i = std::clamp<int64_t>(i, 0, len - 1);
        } else if (mode == "wrap") {
          i = ((i % len) + len) % len;
        } else {  // reflect: mirrored about the first and last elements
          const int64_t period = 2 * (len - 1);
          i = period == 0 ? 0 : ((i % period) + period) % period;
          if (i >= len) i = period - i;
        }
      }
      src = src * static_cast<size_t>(len) + static_cast<size_t>(i);
    }
    r.v.push_back(inside ? x.v[src] : value);
  }
  return r;
}

// Tile: each axis repeated repeats[d] times.
template <class T>
Tensor<T> tile(const Node& n, const Values<T>& vals) {
  const Tensor<T>& x = in(n, vals, 0);
  const std::vector<int64_t> reps = ints_of(in(n, vals, 1));
  if (reps.size() != x.shape.size()) fail(n, "needs one repeat count per axis");
  std::vector<int64_t> shape = x.shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reps[d] < 0) fail(n, "a negative repeat count");
    shape[d] *= reps[d];
  }
  Tensor<T> r{shape, {}, x.elem};
  r.v.reserve(count(shape));
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t k = 0; k < count(shape); ++k, next_index(idx, shape)) {
    size_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      src = src * static_cast<size_t>(x.shape[d]) + static_cast<size_t>(idx[d] % x.shape[d]);
    r.v.push_back(x.v[src]);
  }
  return r;
}

// ArgMax / ArgMin along `axis` (keepdims, select_last_index): int64 indices.
template <class T>
Tensor<T> arg_extreme(const Node& n, const Values<T>& vals, bool max) {
  const Tensor<T>& x = in(n, vals, 0);
  const auto ax = static_cast<size_t>(axis(n, n.i("axis", 0), x.shape.size()));
  const int64_t len = x.shape[ax];
  if (len == 0) fail(n, "reduces an empty axis");
  const bool last = n.i("select_last_index", 0) != 0;
  const auto oi = around(x.shape, ax);
  const size_t outer = oi.first, inner = oi.second;  // (a lambda below reads inner)
  std::vector<int64_t> shape = x.shape;
  if (n.i("keepdims", 1))
    shape[ax] = 1;
  else
    shape.erase(shape.begin() + static_cast<long>(ax));
  Tensor<T> r{shape, {}, Elem::int64};
  for (size_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) -> const T& {
        return x.v[(o * static_cast<size_t>(len) + static_cast<size_t>(k)) * inner + i];
      };
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        const bool better = max ? at(best) < at(k) : at(k) < at(best);
        const bool tie = !(at(best) < at(k)) && !(at(k) < at(best));
        if (better || (last && tie)) best = k;
      }
      r.v.push_back(T(static_cast<double>(best)));
    }
  return r;
}

}  // namespace stabfuzz::onnx
