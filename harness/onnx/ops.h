// The numerical operators of the ONNX interpreter (eval.h) that are more than a scalar function:
// softmax, matrix products, layer and batch normalization, 2-D convolution and pooling. Each is
// written once for any scalar T and evaluated as a careful runtime would (softmax subtracts the
// maximum, layer normalization centres before squaring).
#pragma once

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "harness/onnx/tensor.h"

namespace stabfuzz::onnx {

// ---- softmax along one axis (opset 13: the axis alone) ---------------------------------------
template <class T>
Tensor<T> softmax(const Node& n, const Tensor<T>& a, bool log_form) {
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
template <class T>
Tensor<T> matmul2(const Node& n, const Tensor<T>& a, const Tensor<T>& b, bool ta, bool tb) {
  if (a.shape.size() != 2 || b.shape.size() != 2) fail(n, "only 2-D operands are supported");
  const auto m = static_cast<size_t>(a.shape[ta ? 1 : 0]),
             k = static_cast<size_t>(a.shape[ta ? 0 : 1]);
  const auto k2 = static_cast<size_t>(b.shape[tb ? 1 : 0]),
             p = static_cast<size_t>(b.shape[tb ? 0 : 1]);
  if (k != k2) fail(n, "inner dimensions differ");
  Tensor<T> r{{static_cast<int64_t>(m), static_cast<int64_t>(p)}, std::vector<T>(m * p, T(0.0))};
  // Each r_ij sums its k products in order q = 0, 1, ...; the loops run i, q, j so that a row of
  // b (and of r) is read contiguously.
  // A product with an exact zero adds an exact zero (a quarter of a CESTAC multiplication's cost
  // goes to rounding a zero): skipped where row q of b is finite (0 x inf is NaN).
  std::vector<T> brow(tb ? p : 0);
  std::vector<char> finite(k, 1);
  for (size_t q = 0; q < k; ++q)
    for (size_t j = 0; j < p && finite[q]; ++j)
      finite[q] = std::isfinite(value_of(b.v[tb ? j * k + q : q * p + j]));
  for (size_t i = 0; i < m; ++i) {
    T* ri = &r.v[i * p];
    for (size_t q = 0; q < k; ++q) {
      const T& aiq = a.v[ta ? q * m + i : i * k + q];
      if (finite[q] && exact_zero(aiq)) continue;
      const T* bq = &b.v[q * p];
      if (tb) {
        for (size_t j = 0; j < p; ++j) brow[j] = b.v[j * k + q];
        bq = brow.data();
      }
      for (size_t j = 0; j < p; ++j) ri[j] = ri[j] + aiq * bq[j];
    }
  }
  return r;
}
// numpy matmul: 1-D operands promoted and their axis removed after; batch axes broadcast.
template <class T>
Tensor<T> matmul(const Node& n, Tensor<T> a, Tensor<T> b) {
  const bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
  if (va) a.shape.insert(a.shape.begin(), 1);
  if (vb) b.shape.push_back(1);
  const size_t ra = a.shape.size(), rb = b.shape.size(), rank = std::max(ra, rb);
  const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], k2 = b.shape[rb - 2], p = b.shape[rb - 1];
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

// ---- normalization
// -----------------------------------------------------------------------------
// LayerNormalization: over the axes from `axis` on, y = (x - mean) / sqrt(var + eps) * scale + b
// (biased variance of the centred values, as the operator's function body computes it).
// Y, and the Mean and InvStdDev outputs (the statistics' shape: the reduced axes kept as 1).
template <class T>
std::array<Tensor<T>, 3> layer_norm(const Node& n, const Values<T>& vals) {
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
  if (has_in(n, 2)) y = binary(n, y, in(n, vals, 2), [](const T& a, const T& b) { return a + b; });
  return {std::move(y), std::move(mean_t), std::move(inv_t)};
}
// BatchNormalization in inference mode: per channel (axis 1), (x - mean) / sqrt(var + eps) *
// scale + b with the given statistics.
template <class T>
Tensor<T> batch_norm(const Node& n, const Values<T>& vals) {
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

// ---- 2-D convolution and pooling (NCHW, explicit pads, auto_pad NOTSET) ----------------------
struct Window {
  int64_t kh, kw, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1;
  int64_t oh(int64_t h) const { return (h + pt + pb - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow(int64_t w) const { return (w + pl + pr - dw * (kw - 1) - 1) / sw + 1; }
};
// The window of a convolution or pooling over an H x W input: explicit pads, or auto_pad's
// SAME_UPPER / SAME_LOWER (output ceil(in / stride), the odd pad at the end / the start) or VALID
// (none).
inline Window window(const Node& n, int64_t kh, int64_t kw, int64_t H, int64_t W) {
  const auto& ap = n.attrs.count("auto_pad") ? n.attrs.at("auto_pad").s : std::string("NOTSET");
  if (!ap.empty() && ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    fail(n, "auto_pad " + ap + " is not supported");
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
  if (ap == "VALID") w.pt = w.pl = w.pb = w.pr = 0;
  if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    auto same = [&](int64_t len, int64_t k, int64_t s, int64_t d, int64_t& lo, int64_t& hi) {
      const int64_t out = (len + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - len);
      lo = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    };
    same(H, w.kh, w.sh, w.dh, w.pt, w.pb);
    same(W, w.kw, w.sw, w.dw, w.pl, w.pr);
  }
  return w;
}
template <class T>
Tensor<T> conv(const Node& n, const Values<T>& vals) {
  const Tensor<T>&x = in(n, vals, 0), &wt = in(n, vals, 1);
  if (x.shape.size() != 4 || wt.shape.size() != 4)
    fail(n, "only 2-D convolution (NCHW) is supported");
  const int64_t group = n.i("group", 1);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t M = wt.shape[0], CG = wt.shape[1];
  if (group < 1 || C != CG * group || M % group) fail(n, "channels do not match the groups");
  const Window w = window(n, wt.shape[2], wt.shape[3], H, W);
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
                const int64_t iy = oy * w.sh - w.pt + ky * w.dh, ix = ox * w.sw - w.pl + kx * w.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s = s + x.v[static_cast<size_t>(((b * C + g * CG + c) * H + iy) * W + ix)] *
                            wt.v[static_cast<size_t>(((m * CG + c) * w.kh + ky) * w.kw + kx)];
              }
          r.v.push_back(s);
        }
    }
  return r;
}
template <class T>
Tensor<T> pool(const Node& n, const Values<T>& vals, bool max) {
  const Tensor<T>& x = in(n, vals, 0);
  if (x.shape.size() != 4) fail(n, "only 2-D pooling (NCHW) is supported");
  const auto k = n.ints("kernel_shape");
  if (k.size() != 2) fail(n, "only 2-D kernels are supported");
  if (n.out.size() > 1 && !n.out[1].empty()) fail(n, "the Indices output is not supported");
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const Window w = window(n, k[0], k[1], H, W);
  const bool include_pad = n.i("count_include_pad", 0) != 0;
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

}  // namespace stabfuzz::onnx
