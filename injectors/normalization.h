// Planted unstable normalization and loss formulations: one puzzle per struct.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "injectors/narrow.h"
#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"
#include "targets/cpu/softmax.h"

namespace stabfuzz::injectors {

namespace norm_mutants {

template <class T>
T count(size_t n) {
  return T(static_cast<double>(n));
}

// Normalizes x[0], x[s], ..., x[(n-1) s] with the one-pass variance E[x^2] - E[x]^2.
template <class T>
void one_pass_normalize(const T* x, size_t s, T* y, size_t n, T eps) {
  using std::sqrt;
  std::vector<T> v(n), sq(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = x[i * s];
    sq[i] = v[i] * v[i];
  }
  const T mean = targets::pairwise_sum(v.data(), n) / count<T>(n);
  const T var = targets::pairwise_sum(sq.data(), n) / count<T>(n) - mean * mean;
  const T r = sqrt(var + eps);
  for (size_t i = 0; i < n; ++i) y[i * s] = (v[i] - mean) / r;
}

}  // namespace norm_mutants

// log_softmax/injected/log_of_softmax: log(softmax(x)) with a stable softmax: probabilities that
// underflow (gaps past 745 in f64, 104 in f32) give log(0) = -inf, subnormal ones lose digits.
struct LogSoftmaxOfSoftmax {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::log;
    const auto& x = a.x.at(0);
    std::vector<T> y(x.size());
    targets::SoftmaxStable::run(x.data(), y.data(), x.size());
    for (auto& v : y) v = log(v);
    return y;
  }
};

// cross_entropy/injected/neg_log_softmax: -log(softmax(x)[t]): an underflowed probability of the
// target gives inf for a finite loss.
struct CrossEntropyNegLogSoftmax {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::log;
    const auto& x = a.x.at(0);
    std::vector<T> y(x.size());
    targets::SoftmaxStable::run(x.data(), y.data(), x.size());
    return {-log(y.at(static_cast<size_t>(a.param("target", 0))))};
  }
};

// layer_norm/injected/one_pass_variance: var = E[x^2] - E[x]^2: rows shifted by a large mean
// cancel every digit of var (and a negative var + eps gives NaN).
struct LayerNormOnePass {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x.at(0);
    std::vector<T> y(x.size());
    norm_mutants::one_pass_normalize(x.data(), 1, y.data(), x.size(),
                                     T(a.param("eps", params::kLayerNormEps)));
    return y;
  }
};

// batch_norm/injected/one_pass_variance: per channel E[x^2] - E[x]^2 (flax#1491): a constant
// channel of |x| ~ 1e8 gives +-1 or NaN instead of 0.
struct BatchNormOnePass {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x.at(0);
    const auto rows = static_cast<size_t>(a.shape(0).at(0));
    const auto cols = static_cast<size_t>(a.shape(0).at(1));
    std::vector<T> y(x.size());
    for (size_t c = 0; c < cols; ++c)
      norm_mutants::one_pass_normalize(x.data() + c, cols, y.data() + c, rows,
                                       T(a.param("eps", params::kLayerNormEps)));
    return y;
  }
};

// rms_norm/injected/unscaled: x / sqrt(mean(x^2) + eps) without scaling: x^2 overflows for
// |x| > 1.3e154 (f64) / 1.8e19 (f32) and every output becomes 0 (or NaN from inf / inf).
struct RmsNormUnscaled {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    const auto& x = a.x.at(0);
    std::vector<T> sq(x.size()), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) sq[i] = x[i] * x[i];
    const T r =
        sqrt(targets::pairwise_sum(sq.data(), sq.size()) / norm_mutants::count<T>(x.size()) +
             T(a.param("eps", params::kRmsNormEps)));
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] / r;
    return y;
  }
};

// bce_with_logits/injected/log_sigmoid_form: -[z log s + (1 - z) log(1 - s)], s = 1/(1 + e^-x):
// s rounds to 1 for x > 37 (f64) / 17 (f32), so log(1 - s) = -inf; 1 - s cancels long before.
struct BceLogSigmoid {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    const auto &x = a.x.at(0), &z = a.x.at(1);
    std::vector<T> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const T s = T(1) / (T(1) + exp(-x[i]));
      y[i] = -(z[i] * log(s) + (T(1) - z[i]) * log(T(1) - s));
    }
    return y;
  }
};

// kl_div/injected/ratio_of_exp: sum p log(p / exp(logq)): exp(logq) underflows to 0 for logq
// below -745 (f64) / -104 (f32) and the term becomes inf; subnormal q loses digits first.
struct KlDivRatioOfExp {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    const auto &lq = a.x.at(0), &p = a.x.at(1);
    std::vector<T> t(p.size());
    for (size_t i = 0; i < p.size(); ++i) t[i] = p[i] > T(0) ? p[i] * log(p[i] / exp(lq[i])) : T(0);
    return {targets::pairwise_sum(t.data(), t.size())};
  }
};

// entropy/injected/log_of_product: H = -log(prod_i p_i^p_i): each factor p^p ~ 1 - p log(1/p)
// keeps only the digits of that small term that fit next to 1, and the product errs by n u
// absolute, while H may be far below 1.
struct EntropyLogOfProduct {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::log;
    using std::pow;
    T prod(1.0);
    for (const T& p : a.x.at(0)) prod = prod * pow(p, p);
    return {-log(prod)};
  }
};

// layer_norm/injected/narrow_statistics: mean and variance (two-pass) accumulated in the next
// lower precision (f16 statistics for f32 data, pytorch#66707): rows near 1e4 keep ~3 digits of
// their mean in f16 and sums past 65504 overflow; f64 data get 24-bit statistics.
struct LayerNormNarrowStatistics {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    using N = Narrower<T>;
    using L = narrow_t<T>;
    const auto& x = a.x.at(0);
    const size_t n = x.size();
    std::vector<L> v(n), d(n);
    for (size_t i = 0; i < n; ++i) v[i] = N::down(x[i]);
    const L mean = targets::pairwise_sum(v.data(), n) / L(static_cast<double>(n));
    for (size_t i = 0; i < n; ++i) d[i] = (v[i] - mean) * (v[i] - mean);
    const L var = targets::pairwise_sum(d.data(), n) / L(static_cast<double>(n));
    const T m = N::up(mean), r = sqrt(N::up(var) + T(a.param("eps", params::kLayerNormEps)));
    std::vector<T> y(n);
    for (size_t i = 0; i < n; ++i) y[i] = (x[i] - m) / r;
    return y;
  }
};

// The injected normalization and loss targets, attached by all_injectors.cc.
std::vector<Target> normalization_mutants();

}  // namespace stabfuzz::injectors
