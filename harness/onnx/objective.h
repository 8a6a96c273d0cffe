// The training objective of an ONNX graph (train.h): the losses on the logits with their
// gradient, the conditioning of the loss function (what the trace compares a loss element's digits
// with), and one element's optimizer step; templates over the scalar (float, double, Stoch, Prop).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/monitor/model.h"
#include "harness/monitor/trace.h"
#include "harness/onnx/tensor.h"
#include "harness/onnx/train.h"

namespace stabfuzz::onnx {

template <class T>
double mean_of(const T& v) {
  return onnx::value_of(v);
}

// The loss of each row of logits z (B x C) and its gradient dz (already divided by B).
template <class T>
void loss_rows(monitor::LossKind kind, const Tensor<T>& z, const std::vector<int>& y,
               std::vector<T>& loss, Tensor<T>& dz) {
  using std::exp;
  using std::log;
  using std::log1p;
  const size_t B = y.size(), C = z.size() / std::max<size_t>(B, 1);
  loss.assign(B, T(0.0));
  dz = Tensor<T>{z.shape, std::vector<T>(z.size(), T(0.0)), z.elem};
  const T invB = T(1.0 / static_cast<double>(B));
  for (size_t b = 0; b < B; ++b) {
    const T* zb = &z.v[b * C];
    T* d = &dz.v[b * C];
    const auto yb = static_cast<size_t>(y[b]);
    if (kind == monitor::LossKind::mse) {  // 1/2 sum (z - onehot)^2
      T l = T(0.0);
      for (size_t c = 0; c < C; ++c) {
        const T e = zb[c] - T(c == yb ? 1.0 : 0.0);
        l = l + e * e;
        d[c] = e * invB;
      }
      loss[b] = T(0.5) * l;
      continue;
    }
    if (kind == monitor::LossKind::ce_naive) {  // planted: log(sum e^z) - z_y cancels
      T s = T(0.0);
      for (size_t c = 0; c < C; ++c) s = s + exp(zb[c]);
      loss[b] = log(s) - zb[yb];
      for (size_t c = 0; c < C; ++c) d[c] = (exp(zb[c]) / s - T(c == yb ? 1.0 : 0.0)) * invB;
      continue;
    }
    // Stable: e_c = e^(z_c - max), S = sum e, R = sum over c != y; log1p(R / e_y), -R / S.
    T m = zb[0];
    for (size_t c = 1; c < C; ++c)
      if (m < zb[c]) m = zb[c];
    std::vector<T> e(C);
    T S = T(0.0), R = T(0.0);
    for (size_t c = 0; c < C; ++c) {
      e[c] = exp(zb[c] - m);
      S = S + e[c];
      if (c != yb) R = R + e[c];
    }
    const T gap = m - zb[yb];
    loss[b] = mean_of(gap) > 20 ? gap + log(S) : log1p(R / e[yb]);
    for (size_t c = 0; c < C; ++c) d[c] = (c == yb ? -(R / S) : e[c] / S) * invB;
  }
}

// What a row's loss and its gradient inherit from the logits' errors through the loss function's
// conditioning, not through its formula's (the planted naive cross-entropy cancels inside the
// formula; its derivative does not): monitor::Pass's rule. d: dL/dz = p - t for cross-entropy
// (p_y - 1 as -R/S, summed, no cancellation), z - t for MSE.
struct LossRow {
  std::vector<double> z, e, p, d;
  int y = 0;
  double R = 0;  // sum of e^(z_k - max) over k != y
  double S = 0;  // sum of e^(z_k - max)
};
inline LossRow loss_row(monitor::LossKind kind, const double* z, const double* e, size_t C, int y) {
  LossRow r{{z, z + C}, {e, e + C}, std::vector<double>(C), std::vector<double>(C), y};
  double zm = -INFINITY;
  for (size_t k = 0; k < C; ++k) zm = std::max(zm, z[k]);
  for (size_t k = 0; k < C; ++k) {
    r.p[k] = std::exp(z[k] - zm);
    r.S += r.p[k];
    r.R += static_cast<int>(k) == y ? 0.0 : r.p[k];
  }
  for (size_t k = 0; k < C; ++k) {
    r.p[k] /= r.S;
    const bool label = static_cast<int>(k) == y;
    r.d[k] =
        kind == monitor::LossKind::mse ? z[k] - (label ? 1.0 : 0.0) : (label ? -r.R / r.S : r.p[k]);
  }
  return r;
}
inline monitor::Explained loss_explained(const LossRow& r, double loss) {
  monitor::Propagated s;
  for (size_t k = 0; k < r.z.size(); ++k) s.add(std::fabs(r.z[k] * r.d[k]), r.e[k]);
  return s.rel(loss);
}
inline monitor::Explained grad_explained(monitor::LossKind kind, const LossRow& r, size_t c) {
  if (kind == monitor::LossKind::mse)  // (z - t) / B: |z| e_z / |z - t|
    return monitor::Propagated{}.add(std::fabs(r.z[c]), r.e[c]).rel(r.d[c]);
  // d log|g_c| / d z_k for g_c = p_c (c != y) or -R/S (c == y): already relative
  monitor::Propagated kappa;
  const auto y = static_cast<size_t>(r.y);
  for (size_t k = 0; k < r.z.size(); ++k) {
    const double ek = r.p[k] * r.S;
    const double d = c == y ? (k != y ? ek / r.R : 0.0) - r.p[k] : (k == c ? 1.0 : 0.0) - r.p[k];
    kappa.add(std::fabs(r.z[k] * d), r.e[k]);
  }
  return kappa.rel(1.0);
}

// One element's optimizer step: the new weight and moments from the weight, its gradient and
// the moments (t: the 1-based step, for Adam's bias correction).
template <class T>
struct Update {
  T w, m, v;
};
template <class T>
Update<T> update_one(const TrainOptions& o, int64_t t, const T& w, const T& g, const T& m,
                     const T& v) {
  using std::sqrt;
  const T gd = o.weight_decay > 0 ? g + T(o.weight_decay) * w : g;
  // (lr k) (step / k): the k-trick, k = 1 is the plain step
  auto descend = [&](const T& step) {
    return o.k == 1 ? w - T(o.lr) * step : w - T(o.lr * o.k) * (step / T(o.k));
  };
  if (o.optimizer == Optimizer::sgd) {
    if (o.momentum > 0) {
      const T mv = T(o.momentum) * m + gd;
      return {descend(mv), mv, v};
    }
    return {descend(gd), m, v};
  }
  const T m1 = T(o.beta1) * m + T(1 - o.beta1) * gd;
  const T v1 = T(o.beta2) * v + T(1 - o.beta2) * (gd * gd);
  const double c1 = 1 - std::pow(o.beta1, static_cast<double>(t)),
               c2 = 1 - std::pow(o.beta2, static_cast<double>(t));
  const T mh = m1 / T(c1), vh = v1 / T(c2);
  return {descend(mh / (sqrt(vh) + T(o.eps))), m1, v1};
}

}  // namespace stabfuzz::onnx
