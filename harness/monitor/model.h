// The monitor's models, written once as templates over the scalar type (float, double, Stoch):
// an MLP (in-32-10, tanh) and a small CNN (3x3 convolution, tanh, linear), with hand-written
// forward and backward passes and the losses (cross-entropy, its planted naive form, MSE).
//
// Both models are layer1 (dense or 3x3 convolution) -> tanh -> fc2 -> loss, so they share every
// operation after layer1. Each operation reports its output to the Trace with the error its
// inputs' errors explain through its conditioning, so that digits lost to conditioning (or already
// lost upstream) are not blamed on the operation.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/monitor/trace.h"

namespace stabfuzz::monitor {

enum class ModelKind { mlp, cnn };
// ce_naive: log(sum exp z) - z_y without the max subtraction, and p - 1 for the label's gradient:
// the planted unstable loss (loses every digit of a confident sample's loss).
enum class LossKind { ce, mse, ce_naive };
ModelKind parse_model(const std::string& s);
LossKind parse_loss(const std::string& s);
const char* model_name(ModelKind k);
const char* loss_name(LossKind k);

struct ModelSpec {
  ModelKind kind = ModelKind::mlp;
  int height = 8, width = 8;  // input image
  int hidden = 32;            // MLP hidden units
  int channels = 4;           // CNN 3x3 filters (valid convolution)
  int classes = 10;
  int features() const { return height * width; }
  int layer1_out() const {
    return kind == ModelKind::mlp ? hidden : channels * (height - 2) * (width - 2);
  }
  size_t w1_size() const {
    return kind == ModelKind::mlp ? size_t(features()) * hidden : size_t(channels) * 9;
  }
  size_t b1_size() const { return kind == ModelKind::mlp ? size_t(hidden) : size_t(channels); }
  const char* layer1_name() const { return kind == ModelKind::mlp ? "fc1" : "conv1"; }
};

template <class T>
struct Params {
  std::vector<T> w1, b1, w2, b2;  // w2: layer1_out x classes, row-major
  static constexpr int kTensors = 4;
  std::vector<T>& tensor(int i) { return i == 0 ? w1 : i == 1 ? b1 : i == 2 ? w2 : b2; }
  const std::vector<T>& tensor(int i) const { return i == 0 ? w1 : i == 1 ? b1 : i == 2 ? w2 : b2; }
  static bool is_bias(int i) { return i % 2 == 1; }
  static const char* layer_of(const ModelSpec& s, int i) { return i < 2 ? s.layer1_name() : "fc2"; }

  static Params zeros(const ModelSpec& s) {
    Params p;
    p.w1.assign(s.w1_size(), T(0));
    p.b1.assign(s.b1_size(), T(0));
    p.w2.assign(size_t(s.layer1_out()) * s.classes, T(0));
    p.b2.assign(size_t(s.classes), T(0));
    return p;
  }
};

// Intermediate tensors of one pass, kept across steps to avoid reallocation.
template <class T>
struct Workspace {
  std::vector<T> z1, a1, z2, loss, dz2, da1, dz1;
};

namespace detail {

// One call of loss_and_grad: its inputs and shapes, and the relative errors of the tensors traced
// so far (empty for native scalars). Each stage reads what the stages before it wrote, and the
// stages run in the order of loss_and_grad, which is the order of the trace's operations.
template <class T>
struct Pass {
  const ModelSpec& spec;
  const Params<T>& p;
  const T* x;
  const int* y;
  const int B;
  const LossKind loss_kind;
  Params<T>* g;
  Workspace<T>& ws;
  Trace& tr;
  const int F, H, C;
  const size_t BH, BC;
  const char* l1;
  const bool cnn;
  const int oh, ow;  // CNN output map

  // Relative errors of the inputs: the data and the parameters.
  const Errors e_x, e_w1, e_b1, e_w2, e_b2;
  // Relative errors of the outputs of the forward and backward operations.
  Errors e_z1, e_a1, e_z2, e_dz2, e_da1, e_dz1;
  std::vector<double> ptrue;  // p - t in double, for the condition numbers only

  Pass(const ModelSpec& spec_, const Params<T>& p_, const T* x_, const int* y_, int B_,
       LossKind loss_kind_, Params<T>* g_, Workspace<T>& ws_, Trace& tr_)
      : spec(spec_),
        p(p_),
        x(x_),
        y(y_),
        B(B_),
        loss_kind(loss_kind_),
        g(g_),
        ws(ws_),
        tr(tr_),
        F(spec.features()),
        H(spec.layer1_out()),
        C(spec.classes),
        BH(size_t(B) * H),
        BC(size_t(B) * C),
        l1(spec.layer1_name()),
        cnn(spec.kind == ModelKind::cnn),
        oh(spec.height - 2),
        ow(spec.width - 2),
        e_x(tr.errors(x, size_t(B) * F)),
        e_w1(tr.errors(p.w1.data(), p.w1.size())),
        e_b1(tr.errors(p.b1.data(), p.b1.size())),
        e_w2(tr.errors(p.w2.data(), p.w2.size())),
        e_b2(tr.errors(p.b2.data(), p.b2.size())) {}

  void layer1_forward();
  void dense_forward();
  void conv_forward();
  void tanh_forward();
  void fc2_forward();
  T loss_forward();
  Site mse_loss(int b, const T& invB);
  Site naive_ce_loss(int b, const T& invB);
  Site ce_loss(int b, const T& invB);
  void softmax_minus_target(int b);
  void loss_backward();
  void fc2_backward_params();
  void fc2_backward_input();
  void tanh_backward();
  void layer1_backward();
  void dense_backward();
  void conv_backward();
};

// ---- forward: layer1 ---------------------------------------------------------------------------
template <class T>
void Pass<T>::layer1_forward() {
  ws.z1.assign(BH, T(0));
  if (!cnn)
    dense_forward();
  else
    conv_forward();
  // z = b + sum x w: explained (|b| e_b + sum |x w| (e_x + e_w)) / |z|
  e_z1 = tr.op(l1, Phase::forward, cnn ? "conv3x3" : "matmul", STABFUZZ_MONITOR_SITE, ws.z1.data(),
               BH, [&](size_t e) {
                 const size_t b = e / H, j = e % H;
                 Propagated s;
                 if (!cnn) {
                   s.add(std::fabs(value_of(p.b1[j])), e_b1[j]);
                   for (int k = 0; k < F; ++k) {
                     const size_t xi = b * F + k, wi = size_t(k) * H + j;
                     s.add(std::fabs(value_of(x[xi]) * value_of(p.w1[wi])), e_x[xi] + e_w1[wi]);
                   }
                 } else {
                   const size_t c = j / (oh * ow), i = (j / ow) % oh, jj = j % ow;
                   s.add(std::fabs(value_of(p.b1[c])), e_b1[c]);
                   for (int u = 0; u < 3; ++u)
                     for (int v = 0; v < 3; ++v) {
                       const size_t xi = b * F + (i + u) * spec.width + jj + v,
                                    wi = c * 9 + u * 3 + v;
                       s.add(std::fabs(value_of(x[xi]) * value_of(p.w1[wi])), e_x[xi] + e_w1[wi]);
                     }
                 }
                 return s.rel(value_of(ws.z1[e]));
               });
}

// The MLP's layer1: z = b + x W (W: features x hidden, row-major).
template <class T>
void Pass<T>::dense_forward() {
  for (int b = 0; b < B; ++b) {
    T* z = &ws.z1[size_t(b) * H];
    for (int j = 0; j < H; ++j) z[j] = p.b1[j];
    for (int k = 0; k < F; ++k) {
      const T& xv = x[size_t(b) * F + k];
      if (value_of(xv) == 0) continue;  // exact zero pixels add exactly nothing
      const T* w = &p.w1[size_t(k) * H];
      for (int j = 0; j < H; ++j) z[j] += xv * w[j];
    }
  }
}

// The CNN's layer1: a valid 3x3 convolution per channel, plus the channel's bias.
template <class T>
void Pass<T>::conv_forward() {
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < spec.channels; ++c)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          T acc = p.b1[c];
          for (int u = 0; u < 3; ++u)
            for (int v = 0; v < 3; ++v)
              acc += x[size_t(b) * F + size_t(i + u) * spec.width + (j + v)] *
                     p.w1[size_t(c) * 9 + u * 3 + v];
          ws.z1[size_t(b) * H + (size_t(c) * oh + i) * ow + j] = acc;
        }
}

// ---- forward: tanh -----------------------------------------------------------------------------
template <class T>
void Pass<T>::tanh_forward() {
  using std::tanh;
  ws.a1.resize(BH);
  for (size_t e = 0; e < BH; ++e) ws.a1[e] = tanh(ws.z1[e]);
  e_a1 =
      tr.op("tanh1", Phase::forward, "tanh", STABFUZZ_MONITOR_SITE, ws.a1.data(), BH,
            [&](size_t e) {  // cond |z tanh'(z) / tanh(z)| <= 1
              const double z = value_of(ws.z1[e]), a = std::tanh(z);
              return Explained{(a == 0 ? 1.0 : std::fabs(z * (1 - a * a) / a)) * e_z1[e], e_z1[e]};
            });
}

// ---- forward: fc2 ------------------------------------------------------------------------------
template <class T>
void Pass<T>::fc2_forward() {
  ws.z2.assign(BC, T(0));
  for (int b = 0; b < B; ++b) {
    T* z = &ws.z2[size_t(b) * C];
    for (int c = 0; c < C; ++c) z[c] = p.b2[c];
    for (int k = 0; k < H; ++k) {
      const T& av = ws.a1[size_t(b) * H + k];
      const T* w = &p.w2[size_t(k) * C];
      for (int c = 0; c < C; ++c) z[c] += av * w[c];
    }
  }
  e_z2 = tr.op("fc2", Phase::forward, "matmul", STABFUZZ_MONITOR_SITE, ws.z2.data(), BC,
               [&](size_t e) {
                 const size_t b = e / C, c = e % C;
                 Propagated s;
                 s.add(std::fabs(value_of(p.b2[c])), e_b2[c]);
                 for (int k = 0; k < H; ++k) {
                   const size_t ai = b * H + k, wi = size_t(k) * C + c;
                   s.add(std::fabs(value_of(ws.a1[ai]) * value_of(p.w2[wi])), e_a1[ai] + e_w2[wi]);
                 }
                 return s.rel(value_of(ws.z2[e]));
               });
}

// ---- loss and its gradient with respect to the logits ------------------------------------------
// Returns the mean loss over the batch.
template <class T>
T Pass<T>::loss_forward() {
  ws.loss.resize(size_t(B));
  ws.dz2.resize(BC);
  ptrue.assign(BC, 0.0);
  const T invB = T(1) / T(B);
  Site loss_site = STABFUZZ_MONITOR_SITE;  // the loss statement of the branch taken
  for (int b = 0; b < B; ++b) {
    if (loss_kind == LossKind::mse)
      loss_site = mse_loss(b, invB);
    else if (loss_kind == LossKind::ce_naive)
      loss_site = naive_ce_loss(b, invB);
    else
      loss_site = ce_loss(b, invB);
    softmax_minus_target(b);
  }
  // l(z): explained sum_c |z_c dl/dz_c| e_z / |l|
  const char* loss_op = loss_kind == LossKind::mse  ? "mse"
                        : loss_kind == LossKind::ce ? "cross_entropy"
                                                    : "cross_entropy_naive";
  tr.op("loss", Phase::forward, loss_op, loss_site, ws.loss.data(), size_t(B), [&](size_t b) {
    Propagated s;
    for (int c = 0; c < C; ++c)
      s.add(std::fabs(value_of(ws.z2[b * C + c]) * ptrue[b * C + c]), e_z2[b * C + c]);
    return s.rel(value_of(ws.loss[b]));
  });
  T total = T(0);
  for (int b = 0; b < B; ++b) total += ws.loss[b];
  total = total * invB;
  return total;
}

// Sample b's MSE loss and its logits' gradient; returns the loss statement's site.
template <class T>
Site Pass<T>::mse_loss(int b, const T& invB) {
  const T* z = &ws.z2[size_t(b) * C];
  T* dz = &ws.dz2[size_t(b) * C];
  const int yb = y[b];
  T l = T(0);
  for (int c = 0; c < C; ++c) {
    const T d = z[c] - T(c == yb ? 1 : 0);
    l += d * d;
    dz[c] = d * invB;
  }
  const Site loss_site = STABFUZZ_MONITOR_SITE_NEXT;
  ws.loss[b] = T(0.5) * l;
  return loss_site;
}

// Sample b's naive cross-entropy and its logits' gradient; returns the loss statement's site.
template <class T>
Site Pass<T>::naive_ce_loss(int b, const T& invB) {
  using std::exp;
  using std::log;
  const T* z = &ws.z2[size_t(b) * C];
  T* dz = &ws.dz2[size_t(b) * C];
  const int yb = y[b];
  T s = T(0);
  for (int c = 0; c < C; ++c) s += exp(z[c]);
  const Site loss_site = STABFUZZ_MONITOR_SITE_NEXT;
  ws.loss[b] = log(s) - z[yb];  // planted: cancels when the sample is confidently right
  for (int c = 0; c < C; ++c) dz[c] = (exp(z[c]) / s - T(c == yb ? 1 : 0)) * invB;
  return loss_site;
}

// Sample b's stable cross-entropy and its logits' gradient; returns the loss statement's site.
// e_c = exp(z_c - max), S = sum e, R = sum of e over c != y; the loss is log1p(R / e_y) and the
// label's gradient -R / S, neither of which cancels.
template <class T>
Site Pass<T>::ce_loss(int b, const T& invB) {
  using std::exp;
  using std::log;
  using std::log1p;
  const T* z = &ws.z2[size_t(b) * C];
  T* dz = &ws.dz2[size_t(b) * C];
  const int yb = y[b];
  T m = z[0];
  for (int c = 1; c < C; ++c)
    if (z[c] > m) m = z[c];
  T e[16];
  T S = T(0), R = T(0);
  for (int c = 0; c < C; ++c) {
    e[c] = exp(z[c] - m);
    S += e[c];
    if (c != yb) R += e[c];
  }
  const T gap = m - z[yb];
  const Site loss_site = STABFUZZ_MONITOR_SITE_NEXT;
  ws.loss[b] = value_of(gap) > 20 ? gap + log(S) : log1p(R / e[yb]);
  for (int c = 0; c < C; ++c) dz[c] = (c == yb ? -(R / S) : e[c] / S) * invB;
  return loss_site;
}

// p - t of sample b in double from the logits' values (conditioning only).
template <class T>
void Pass<T>::softmax_minus_target(int b) {
  const T* z = &ws.z2[size_t(b) * C];
  const int yb = y[b];
  double zm = -INFINITY, S = 0, R = 0;  // R summed, not S - e_y: no cancellation
  for (int c = 0; c < C; ++c) zm = std::max(zm, value_of(z[c]));
  for (int c = 0; c < C; ++c) {
    const double ec = std::exp(value_of(z[c]) - zm);
    S += ec;
    R += c == yb ? 0.0 : ec;
  }
  for (int c = 0; c < C; ++c) {
    const double pc = std::exp(value_of(z[c]) - zm) / S;
    ptrue[size_t(b) * C + c] =
        loss_kind == LossKind::mse ? value_of(z[c]) - (c == yb) : (c == yb ? -R / S : pc);
  }
}

// ---- backward: loss -> logits ------------------------------------------------------------------
template <class T>
void Pass<T>::loss_backward() {
  e_dz2 = tr.op(
      "loss", Phase::backward, "dlogits", STABFUZZ_MONITOR_SITE, ws.dz2.data(), BC, [&](size_t e) {
        const size_t b = e / C, c = e % C;
        if (loss_kind == LossKind::mse) {  // (z - t) / B: explained |z| e_z / |z - t|
          return Propagated{}.add(std::fabs(value_of(ws.z2[e])), e_z2[e]).rel(ptrue[e]);
        }
        // d log|g_c| / d z_k for g_c = p_c (c != y) or -R/S (c == y)
        double zm = -INFINITY;
        for (int k = 0; k < C; ++k) zm = std::max(zm, value_of(ws.z2[b * C + k]));
        double S = 0, ek[16];
        for (int k = 0; k < C; ++k) S += ek[k] = std::exp(value_of(ws.z2[b * C + k]) - zm);
        const int yb = y[b];
        double R = 0;  // summed, not S - e_y: no cancellation when p_y is near 1
        for (int k = 0; k < C; ++k) R += k == yb ? 0.0 : ek[k];
        Propagated kappa;
        for (int k = 0; k < C; ++k) {
          const double pk = ek[k] / S;
          const double d =
              int(c) == yb ? (k != yb ? ek[k] / R : 0.0) - pk : (int(k) == int(c) ? 1.0 : 0.0) - pk;
          kappa.add(std::fabs(value_of(ws.z2[b * C + k]) * d), e_z2[b * C + k]);
        }
        return kappa.rel(1.0);  // d log|g| / d z: already relative
      });
}

// ---- backward: fc2, the parameters' gradients ---------------------------------------------------
template <class T>
void Pass<T>::fc2_backward_params() {
  g->w2.assign(p.w2.size(), T(0));
  g->b2.assign(p.b2.size(), T(0));
  for (int b = 0; b < B; ++b) {
    const T* dz = &ws.dz2[size_t(b) * C];
    for (int k = 0; k < H; ++k) {
      const T& av = ws.a1[size_t(b) * H + k];
      T* gw = &g->w2[size_t(k) * C];
      for (int c = 0; c < C; ++c) gw[c] += av * dz[c];
    }
    for (int c = 0; c < C; ++c) g->b2[c] += dz[c];
  }
  tr.op("fc2", Phase::backward, "dW", STABFUZZ_MONITOR_SITE, g->w2.data(), g->w2.size(),
        [&](size_t e) {
          const size_t k = e / C, c = e % C;
          Propagated s;
          for (int b = 0; b < B; ++b) {
            const size_t ai = size_t(b) * H + k, di = size_t(b) * C + c;
            s.add(std::fabs(value_of(ws.a1[ai]) * value_of(ws.dz2[di])), e_a1[ai] + e_dz2[di]);
          }
          return s.rel(value_of(g->w2[e]));
        });
  tr.op("fc2", Phase::backward, "db", STABFUZZ_MONITOR_SITE, g->b2.data(), g->b2.size(),
        [&](size_t c) {
          Propagated s;
          for (int b = 0; b < B; ++b)
            s.add(std::fabs(value_of(ws.dz2[size_t(b) * C + c])), e_dz2[size_t(b) * C + c]);
          return s.rel(value_of(g->b2[c]));
        });
}

// ---- backward: fc2, the input's gradient --------------------------------------------------------
template <class T>
void Pass<T>::fc2_backward_input() {
  ws.da1.assign(BH, T(0));
  for (int b = 0; b < B; ++b) {
    const T* dz = &ws.dz2[size_t(b) * C];
    T* da = &ws.da1[size_t(b) * H];
    for (int k = 0; k < H; ++k) {
      const T* w = &p.w2[size_t(k) * C];
      T acc = dz[0] * w[0];
      for (int c = 1; c < C; ++c) acc += dz[c] * w[c];
      da[k] = acc;
    }
  }
  e_da1 =
      tr.op("fc2", Phase::backward, "dX", STABFUZZ_MONITOR_SITE, ws.da1.data(), BH, [&](size_t e) {
        const size_t b = e / H, k = e % H;
        Propagated s;
        for (int c = 0; c < C; ++c)
          s.add(std::fabs(value_of(ws.dz2[b * C + c]) * value_of(p.w2[k * C + c])),
                e_dz2[b * C + c] + e_w2[k * C + c]);
        return s.rel(value_of(ws.da1[e]));
      });
}

// ---- backward: tanh ----------------------------------------------------------------------------
template <class T>
void Pass<T>::tanh_backward() {
  ws.dz1.resize(BH);
  for (size_t e = 0; e < BH; ++e) ws.dz1[e] = ws.da1[e] * (T(1) - ws.a1[e] * ws.a1[e]);
  e_dz1 =
      tr.op("tanh1", Phase::backward, "dtanh", STABFUZZ_MONITOR_SITE, ws.dz1.data(), BH,
            [&](size_t e) {  // da (1 - a^2): e_da + |2 a^2 / (1 - a^2)| e_a
              const double a = value_of(ws.a1[e]);
              return Explained{e_da1[e] + Propagated{}.add(2 * a * a, e_a1[e]).rel(1 - a * a).err,
                               std::max(e_da1[e], e_a1[e])};
            });
}

// ---- backward: layer1 (no input gradient: it is the first layer) -------------------------------
template <class T>
void Pass<T>::layer1_backward() {
  g->w1.assign(p.w1.size(), T(0));
  g->b1.assign(p.b1.size(), T(0));
  if (!cnn)
    dense_backward();
  else
    conv_backward();
  tr.op(l1, Phase::backward, "dW", STABFUZZ_MONITOR_SITE, g->w1.data(), g->w1.size(),
        [&](size_t e) {
          Propagated s;
          auto term = [&](size_t xi, size_t di) {
            s.add(std::fabs(value_of(x[xi]) * value_of(ws.dz1[di])), e_x[xi] + e_dz1[di]);
          };
          if (!cnn) {
            const size_t k = e / H, j = e % H;
            for (int b = 0; b < B; ++b) term(size_t(b) * F + k, size_t(b) * H + j);
          } else {
            const size_t c = e / 9, u = (e % 9) / 3, v = e % 3;
            for (int b = 0; b < B; ++b)
              for (int i = 0; i < oh; ++i)
                for (int j = 0; j < ow; ++j)
                  term(size_t(b) * F + (i + u) * spec.width + j + v,
                       size_t(b) * H + (c * oh + i) * ow + j);
          }
          return s.rel(value_of(g->w1[e]));
        });
  tr.op(l1, Phase::backward, "db", STABFUZZ_MONITOR_SITE, g->b1.data(), g->b1.size(),
        [&](size_t j) {
          Propagated s;
          const size_t per = cnn ? size_t(oh) * ow : 1;
          for (int b = 0; b < B; ++b)
            for (size_t q = 0; q < per; ++q) {
              const size_t di = size_t(b) * H + (cnn ? j * per + q : j);
              s.add(std::fabs(value_of(ws.dz1[di])), e_dz1[di]);
            }
          return s.rel(value_of(g->b1[j]));
        });
}

// The MLP's layer1 gradients: dW = x^T dz, db = sum over the batch of dz.
template <class T>
void Pass<T>::dense_backward() {
  for (int b = 0; b < B; ++b) {
    const T* dz = &ws.dz1[size_t(b) * H];
    for (int k = 0; k < F; ++k) {
      const T& xv = x[size_t(b) * F + k];
      if (value_of(xv) == 0) continue;
      T* gw = &g->w1[size_t(k) * H];
      for (int j = 0; j < H; ++j) gw[j] += xv * dz[j];
    }
    for (int j = 0; j < H; ++j) g->b1[j] += dz[j];
  }
}

// The CNN's layer1 gradients: each output's gradient times the 3x3 patch it read, and into its
// channel's bias.
template <class T>
void Pass<T>::conv_backward() {
  for (int b = 0; b < B; ++b)
    for (int c = 0; c < spec.channels; ++c)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          const T& d = ws.dz1[size_t(b) * H + (size_t(c) * oh + i) * ow + j];
          for (int u = 0; u < 3; ++u)
            for (int v = 0; v < 3; ++v)
              g->w1[size_t(c) * 9 + u * 3 + v] +=
                  x[size_t(b) * F + size_t(i + u) * spec.width + (j + v)] * d;
          g->b1[c] += d;
        }
}

}  // namespace detail

// Loss of the batch x[0..B) (rows of spec.features()), labels y; with `g`, also its gradient.
// Returns the mean loss over the batch.
template <class T>
T loss_and_grad(const ModelSpec& spec, const Params<T>& p, const T* x, const int* y, int B,
                LossKind loss_kind, Params<T>* g, Workspace<T>& ws, Trace& tr) {
  detail::Pass<T> pass(spec, p, x, y, B, loss_kind, g, ws, tr);
  pass.layer1_forward();
  pass.tanh_forward();
  pass.fc2_forward();
  const T total = pass.loss_forward();
  if (!g) return total;
  pass.loss_backward();
  pass.fc2_backward_params();
  pass.fc2_backward_input();
  pass.tanh_backward();
  pass.layer1_backward();
  return total;
}

// Predicted classes of x[0..B) (argmax of the logits; forward only, no trace).
template <class T>
std::vector<int> predict(const ModelSpec& spec, const Params<T>& p, const T* x, int B) {
  Trace off(2, false);
  Workspace<T> ws;
  std::vector<int> y(size_t(B), 0);
  loss_and_grad(spec, p, x, y.data(), B, LossKind::mse, static_cast<Params<T>*>(nullptr), ws, off);
  std::vector<int> pred(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    int best = 0;
    for (int c = 1; c < spec.classes; ++c)
      if (value_of(ws.z2[size_t(b) * spec.classes + c]) >
          value_of(ws.z2[size_t(b) * spec.classes + best]))
        best = c;
    pred[b] = best;
  }
  return pred;
}

}  // namespace stabfuzz::monitor
