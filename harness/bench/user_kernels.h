// Kernels as a user writes them, for `stabfuzz bench --suite user`.
//
// These are deliberately plain: a template over the scalar type, loops over std::vector, and
// `using std::exp; exp(x)` style math. No stabfuzz header, helper or hint (no pairwise or
// compensated sums, no project reduce helpers, no intrinsics), so that what the suite measures is
// what CESTAC costs on code nobody tuned for it. The same source is instantiated with double,
// float, Half, BFloat16 (the native baselines) and with Stoch<T, 3>. Do not optimize these for
// the engine: a change that makes them faster under CESTAC belongs in the engine.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace stabfuzz::bench::user {

template <class T>
void softmax(const std::vector<T>& x, std::vector<T>& y) {
  using std::exp;
  const std::size_t n = x.size();
  T m = x[0];
  for (std::size_t i = 1; i < n; ++i)
    if (x[i] > m) m = x[i];
  T sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = exp(x[i] - m);
    sum += y[i];
  }
  for (std::size_t i = 0; i < n; ++i) y[i] /= sum;
}

template <class T>
T logsumexp(const std::vector<T>& x) {
  using std::exp;
  using std::log;
  const std::size_t n = x.size();
  T m = x[0];
  for (std::size_t i = 1; i < n; ++i)
    if (x[i] > m) m = x[i];
  T sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += exp(x[i] - m);
  return m + log(sum);
}

template <class T>
void layer_norm(const std::vector<T>& x, const std::vector<T>& gamma, const std::vector<T>& beta,
                T eps, std::vector<T>& y) {
  using std::sqrt;
  const std::size_t n = x.size();
  T mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += x[i];
  mean /= n;
  T var = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T d = x[i] - mean;
    var += d * d;
  }
  var /= n;
  T inv_std = 1 / sqrt(var + eps);
  for (std::size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * gamma[i] + beta[i];
}

// E[x^2] - E[x]^2: the textbook formula, cancels when the mean is large against the spread.
template <class T>
T variance_one_pass(const std::vector<T>& x) {
  const std::size_t n = x.size();
  T s = 0, s2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s += x[i];
    s2 += x[i] * x[i];
  }
  T mean = s / n;
  return s2 / n - mean * mean;
}

template <class T>
T variance_two_pass(const std::vector<T>& x) {
  const std::size_t n = x.size();
  T sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  T mean = sum / n;
  T acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T d = x[i] - mean;
    acc += d * d;
  }
  return acc / n;
}

template <class T>
T variance_welford(const std::vector<T>& x) {
  const std::size_t n = x.size();
  T mean = 0, m2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T delta = x[i] - mean;
    mean += delta / (i + 1);
    m2 += delta * (x[i] - mean);
  }
  return m2 / n;
}

template <class T>
T dot(const std::vector<T>& x, const std::vector<T>& y) {
  T s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// C = A B, row-major, A m x k, B k x n: the naive triple loop.
template <class T>
void gemm(const std::vector<T>& a, const std::vector<T>& b, std::vector<T>& c, std::size_t m,
          std::size_t k, std::size_t n) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      T s = 0;
      for (std::size_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
}

// One attention head: out = softmax(Q K^T / sqrt(d)) V, row-major seq x d matrices.
template <class T>
void attention(const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
               std::size_t seq, std::size_t d, std::vector<T>& out) {
  using std::sqrt;
  const T scale = 1 / sqrt(T(d));
  std::vector<T> p(seq);
  for (std::size_t i = 0; i < seq; ++i) {
    for (std::size_t j = 0; j < seq; ++j) {
      T s = 0;
      for (std::size_t c = 0; c < d; ++c) s += q[i * d + c] * k[j * d + c];
      p[j] = s * scale;
    }
    softmax(p, p);  // in place
    for (std::size_t c = 0; c < d; ++c) {
      T o = 0;
      for (std::size_t j = 0; j < seq; ++j) o += p[j] * v[j * d + c];
      out[i * d + c] = o;
    }
  }
}

// A two-layer perceptron: y = W2 tanh(W1 x + b1) + b2 (W row-major, out x in).
template <class T>
struct Mlp {
  std::size_t in = 0, hidden = 0, out = 0;
  std::vector<T> w1, b1, w2, b2;
};

template <class T>
struct MlpGrads {
  std::vector<T> w1, b1, w2, b2;
};

// One training step's forward and backward pass over a batch (row-major batch x in inputs, batch
// x out targets): returns the mean squared error and leaves its gradients in `g`.
template <class T>
T mlp_step(const Mlp<T>& net, const std::vector<T>& x, const std::vector<T>& target,
           std::size_t batch, MlpGrads<T>& g) {
  using std::tanh;
  const std::size_t ni = net.in, nh = net.hidden, no = net.out;
  g.w1.assign(nh * ni, T(0));
  g.b1.assign(nh, T(0));
  g.w2.assign(no * nh, T(0));
  g.b2.assign(no, T(0));
  std::vector<T> h(nh), y(no), dy(no), dz(nh);
  T loss = 0;
  const T norm = T(2) / T(batch * no);
  for (std::size_t b = 0; b < batch; ++b) {
    const T* xb = &x[b * ni];
    const T* tb = &target[b * no];
    // forward
    for (std::size_t j = 0; j < nh; ++j) {
      T z = net.b1[j];
      for (std::size_t i = 0; i < ni; ++i) z += net.w1[j * ni + i] * xb[i];
      h[j] = tanh(z);
    }
    for (std::size_t o = 0; o < no; ++o) {
      T s = net.b2[o];
      for (std::size_t j = 0; j < nh; ++j) s += net.w2[o * nh + j] * h[j];
      y[o] = s;
      T e = y[o] - tb[o];
      loss += e * e;
      dy[o] = norm * e;
    }
    // backward
    for (std::size_t o = 0; o < no; ++o) {
      for (std::size_t j = 0; j < nh; ++j) g.w2[o * nh + j] += dy[o] * h[j];
      g.b2[o] += dy[o];
    }
    for (std::size_t j = 0; j < nh; ++j) {
      T dh = 0;
      for (std::size_t o = 0; o < no; ++o) dh += net.w2[o * nh + j] * dy[o];
      dz[j] = dh * (1 - h[j] * h[j]);
    }
    for (std::size_t j = 0; j < nh; ++j) {
      for (std::size_t i = 0; i < ni; ++i) g.w1[j * ni + i] += dz[j] * xb[i];
      g.b1[j] += dz[j];
    }
  }
  return loss / T(batch * no);
}

}  // namespace stabfuzz::bench::user
