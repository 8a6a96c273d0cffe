// Planted unstable linear-algebra formulations (dot, gemm, attention, similarity, distance, adam).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "injectors/narrow.h"
#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::injectors {

namespace linalg_kernels {

inline size_t dim(const std::vector<int64_t>& shape, size_t k) {
  return static_cast<size_t>(shape.at(k));
}

template <class T>
T plain_dot(const T* a, const T* b, size_t n) {
  std::vector<T> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = a[i] * b[i];
  return targets::pairwise_sum(p.data(), n);
}

}  // namespace linalg_kernels

// dot/injected/narrow_accumulator: products rounded to T, summed sequentially in the next lower
// precision (f32 data in f16, f64 in f32).
struct DotNarrowAccumulator {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using N = Narrower<T>;
    const auto &x = a.x.at(0), &y = a.x.at(1);
    narrow_t<T> acc(0.0);
    for (size_t i = 0; i < x.size(); ++i) acc = acc + N::down(x[i] * y[i]);
    return {N::up(acc)};
  }
};

// gemm/injected/narrow_split_k: split-K GEMM whose partial sums (chunks of 4 along k) are stored
// and reduced in the next lower precision (pytorch#67946 with f16 partials).
struct GemmNarrowSplitK {
  static constexpr size_t kChunk = 4;
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using linalg_kernels::dim;
    using N = Narrower<T>;
    const size_t m = dim(a.shape(0), 0), k = dim(a.shape(0), 1), n = dim(a.shape(1), 1);
    const T* A = a.x.at(0).data();
    const T* B = a.x.at(1).data();
    std::vector<T> c(m * n);
    for (size_t i = 0; i < m; ++i)
      for (size_t j = 0; j < n; ++j) {
        narrow_t<T> acc(0.0);
        for (size_t l0 = 0; l0 < k; l0 += kChunk) {
          T part(0.0);
          for (size_t l = l0; l < std::min(k, l0 + kChunk); ++l)
            part = part + A[i * k + l] * B[l * n + j];
          acc = acc + N::down(part);
        }
        c[i * n + j] = N::up(acc);
      }
    return c;
  }
};

// attention/injected/no_max_shift: softmax(QK^T scale) V without subtracting the row maximum:
// scores past the exp overflow threshold give inf / inf = NaN.
struct AttentionNoMaxShift {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using linalg_kernels::dim;
    using std::exp;
    const size_t s = dim(a.shape(0), 0), d = dim(a.shape(0), 1), t = dim(a.shape(1), 0);
    const size_t dv = dim(a.shape(2), 1);
    const auto prm = params::attention_params(*a.input, static_cast<double>(d));
    const T scale = T(prm.scale);
    const T* q = a.x[0].data();
    const T* k = a.x[1].data();
    const T* v = a.x[2].data();
    std::vector<T> o(s * dv), e(t), w(t);
    for (size_t i = 0; i < s; ++i) {
      const size_t tl = prm.causal ? i + 1 : t;
      for (size_t l = 0; l < tl; ++l)
        e[l] = exp(linalg_kernels::plain_dot(q + i * d, k + l * d, d) * scale);
      const T z = targets::pairwise_sum(e.data(), tl);
      for (size_t j = 0; j < dv; ++j) {
        for (size_t l = 0; l < tl; ++l) w[l] = e[l] * v[l * dv + j];
        o[i * dv + j] = targets::pairwise_sum(w.data(), tl) / z;
      }
    }
    return o;
  }
};

// cosine_similarity/injected/unscaled_norms: a.b / max(sqrt(sum a^2) sqrt(sum b^2), eps) without
// scaling: squares overflow for large rows (dot / inf = 0, inf / inf = NaN) and underflow for
// tiny ones.
struct CosineUnscaledNorms {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    const auto &x = a.x.at(0), &y = a.x.at(1);
    const size_t n = x.size();
    const T dot = linalg_kernels::plain_dot(x.data(), y.data(), n);
    const T na = sqrt(linalg_kernels::plain_dot(x.data(), x.data(), n));
    const T nb = sqrt(linalg_kernels::plain_dot(y.data(), y.data(), n));
    const T eps = T(params::cosine_eps(*a.input));
    const T den = na * nb;
    return {dot / (den > eps ? den : eps)};
  }
};

// pairwise_distance/injected/expanded_square: |d|_2 as sqrt(|a'|^2 + |b|^2 - 2 a'.b), a' = a + eps:
// near-equal rows cancel every digit and a negative difference gives NaN.
struct PairwiseDistanceExpanded {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    const size_t n = a.x.at(0).size();
    const T eps = T(params::pairwise_eps(*a.input));
    std::vector<T> ap(n);
    for (size_t i = 0; i < n; ++i) ap[i] = a.x[0][i] + eps;
    const T* b = a.x.at(1).data();
    const T aa = linalg_kernels::plain_dot(ap.data(), ap.data(), n);
    const T bb = linalg_kernels::plain_dot(b, b, n);
    const T ab = linalg_kernels::plain_dot(ap.data(), b, n);
    return {sqrt(aa + bb - T(2) * ab)};
  }
};

// adam/injected/pow_bias_correction: the bias corrections as 1 - beta^t: for small t and beta
// near 1 (beta2 = 0.999, t = 1: 1 - 0.999) the subtraction cancels log10(1 / (1 - beta^t))
// digits of the rounded power.
struct AdamPowBiasCorrection {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::pow;
    using std::sqrt;
    const auto prm = params::adam_params(*a.input);
    const T lr = T(prm.lr), b1 = T(prm.beta1), b2 = T(prm.beta2), eps = T(prm.eps), t = T(prm.step);
    const T bc1 = T(1) - pow(b1, t), bc2 = T(1) - pow(b2, t);
    const auto &p = a.x.at(0), &g = a.x.at(1), &m = a.x.at(2), &v = a.x.at(3);
    std::vector<T> out(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      const T mi = b1 * m[i] + (T(1) - b1) * g[i];
      const T vi = b2 * v[i] + (T(1) - b2) * (g[i] * g[i]);
      out[i] = p[i] - lr * (mi / bc1) / (sqrt(vi / bc2) + eps);
    }
    return out;
  }
};

// adam/injected/narrow_denominator: sqrt(v^) + eps formed in the next lower precision (f16 for
// f32 data, optax#1754): v^ below f16's range flushes to 0 and eps = 1e-8 rounds to 0, so a zero
// or tiny gradient divides by 0; for f64 data the f32 denominator keeps only 24 bits.
struct AdamNarrowDenominator {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::expm1;
    using std::log1p;
    using std::sqrt;
    using N = Narrower<T>;
    const auto prm = params::adam_params(*a.input);
    const T lr = T(prm.lr), b1 = T(prm.beta1), b2 = T(prm.beta2), eps = T(prm.eps), t = T(prm.step);
    const T c1 = T(1) - b1, c2 = T(1) - b2;
    const T bc1 = prm.beta1 == 0 ? T(1) : -expm1(t * log1p(-c1));
    const T bc2 = prm.beta2 == 0 ? T(1) : -expm1(t * log1p(-c2));
    const auto &p = a.x.at(0), &g = a.x.at(1), &m = a.x.at(2), &v = a.x.at(3);
    std::vector<T> out(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      const T mi = b1 * m[i] + c1 * g[i];
      const T vi = b2 * v[i] + c2 * (g[i] * g[i]);
      const T denom = N::up(sqrt(N::down(vi / bc2)) + N::down(eps));
      out[i] = p[i] - lr * (mi / bc1) / denom;
    }
    return out;
  }
};

// The injected linear-algebra targets, attached by all_injectors.cc.
std::vector<Target> linalg_mutants();

// adam's regime early_steps (steps 2..8, beta2 near 1, p far below the update), where
// 1 - beta2^t cancels: appended to the adam family by all_injectors.cc.
Regime adam_early_steps_regime();

}  // namespace stabfuzz::injectors
