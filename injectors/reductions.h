// Planted unstable reductions (sum, mean, var, std, norms, log-sum-exp scans): one puzzle per
// struct.
#pragma once

#include <cmath>
#include <vector>

#include "injectors/narrow.h"
#include "injectors/variance.h"
#include "stabfuzz/op.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::injectors {

// sum/injected/narrow_accumulator: a sequential sum kept in the next lower precision (f32 data
// in an f16 accumulator, f64 data in f32): ~2^-11 (f32) / 2^-24 (f64) relative error per add,
// f16 overflow past 65504.
struct SumNarrowAccumulator {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using N = Narrower<T>;
    narrow_t<T> acc(0.0);
    for (const T& v : a.x.at(0)) acc = acc + N::down(v);
    return {N::up(acc)};
  }
};

// mean/injected/unscaled_sum: sum / n without prescaling: the partial sums of values near the
// largest finite overflow although the mean, at most max |x|, never does.
struct MeanUnscaledSum {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const auto& x = a.x.at(0);
    return {targets::pairwise_sum(x.data(), x.size()) / T(static_cast<double>(x.size()))};
  }
};

// std/injected/sqrt_naive_var: sqrt of the one-pass variance E[x^2] - E[x]^2: every digit lost on
// mean-shifted rows, and NaN where the difference rounds negative.
struct StdNaive {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    return {sqrt(VarianceNaive::run(a).at(0))};
  }
};

// cumsum/injected/narrow_running_sum: the running sum carried in the next lower precision.
struct CumSumNarrowCarry {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using N = Narrower<T>;
    std::vector<T> y;
    y.reserve(a.x.at(0).size());
    narrow_t<T> acc(0.0);
    for (const T& v : a.x[0]) {
      acc = acc + N::down(v);
      y.push_back(N::up(acc));
    }
    return y;
  }
};

// l2_norm/injected/unscaled: sqrt(sum x^2) without scaling: x^2 overflows for |x| > 1.3e154
// (f64) / 1.8e19 (f32) and underflows for tiny x, where the norm is representable.
struct L2NormUnscaled {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::sqrt;
    std::vector<T> sq;
    for (const T& v : a.x.at(0)) sq.push_back(v * v);
    return {sqrt(targets::pairwise_sum(sq.data(), sq.size()))};
  }
};

// logsumexp/injected/no_max_shift: log(sum e^x): inf once a logit passes the overflow threshold,
// -inf when every e^x underflows.
struct LogSumExpNoShift {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    std::vector<T> e;
    for (const T& v : a.x.at(0)) e.push_back(exp(v));
    return {log(targets::pairwise_sum(e.data(), e.size()))};
  }
};

// logsumexp/injected/unguarded_shift: m + log(sum e^(x - m)) with no guard for an infinite m: a
// row of -inf (every position masked) gives -inf - -inf = NaN where the result is -inf.
struct LogSumExpUnguardedShift {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    const auto& x = a.x.at(0);
    T m = x[0];
    for (const T& v : x)
      if (v > m) m = v;
    std::vector<T> e;
    for (const T& v : x) e.push_back(exp(v - m));
    return {m + log(targets::pairwise_sum(e.data(), e.size()))};
  }
};

// logsumexp's regime masked_rows (rows of -inf with a few finite logits, half of them all -inf),
// appended by all_injectors.cc.
Regime logsumexp_masked_rows_regime();

// logcumsumexp/injected/no_max_shift: y_k = log(s_k), s_k = s_{k-1} + e^x_k: overflow and
// underflow as in logsumexp, for every prefix.
struct LogCumSumExpNoShift {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    std::vector<T> y;
    T s(0.0);
    for (const T& v : a.x.at(0)) {
      s = s + exp(v);
      y.push_back(log(s));
    }
    return y;
  }
};

// logaddexp/injected/naive: log(e^a + e^b): inf past the overflow threshold, -inf when both
// exponentials underflow.
struct LogAddExpNaive {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    using std::log;
    const auto &x = a.x.at(0), &z = a.x.at(1);
    std::vector<T> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = log(exp(x[i]) + exp(z[i]));
    return y;
  }
};

// The injected reduction targets, attached to their families by all_injectors.cc.
std::vector<Target> reduction_mutants();

}  // namespace stabfuzz::injectors
