// HostRow<T>: one block of a CUDA row kernel replayed on the host (row_kernels.h's Row), so that
// tests run the kernels' row algorithms without a GPU. B threads (blockDim.x, a power of two in
// 32..512: the launch plan's row_block(n, kRowMaxThreads), or a kernel's fixed block such as
// attention's 128) each take a contiguous chunk of L = ceil(n/B) values in order (strided steps:
// every B-th); a reduction then combines the chunks' partials as block_reduce does: a shuffle tree
// inside each warp of 32, then the warps' partials in warp 0.
//
// For DStoch every thread draws from its own stream, keyed as the launch keys device thread t of
// block 0: cestac::thread_key(launch key, t), and the reductions run each operation with the
// stream of the thread that runs it on the device, so a row kernel's reductions replay the
// device's samples and flags. Steps every thread runs alike outside the reductions (e.g. the mean
// a var kernel subtracts) run once, with thread 0's stream: on the device each thread draws its
// own rounding for them. Host only (not under nvcc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "targets/cuda/launch_plan.h"
#include "targets/cuda/row_kernels.h"

namespace stabfuzz::gpu {

template <class T>
class HostRow {
  static constexpr bool kStoch = !std::is_same<scalar_of_t<T>, T>::value;

 public:
  // The plan's block size for a row of n (targets/cuda/launch_plan.h; the kernels' attributes
  // allow kRowMaxThreads on sm_90, their __launch_bounds__).
  static int plan_threads(int n) { return cuda::row_block(n, cuda::kRowMaxThreads); }

  // threads: the block's size (0: the plan's for a row of n; attention's is
  // cuda::kAttentionThreads).
  explicit HostRow(int n_, uint64_t launch_key = 0, int cancel_digits = 4, bool detect = true,
                   int threads = 0)
      : n(n_), threads_(threads > 0 ? threads : plan_threads(n_)) {
    if constexpr (kStoch) {
      saved_ = dstate();
      for (int t = 0; t < threads_; ++t)
        states_.push_back(
            make_thread_state(cestac::thread_key(launch_key, t), cancel_digits, detect));
      dstate() = states_[0];
    }
  }
  ~HostRow() {
    if constexpr (kStoch) dstate() = saved_;
  }
  HostRow(const HostRow&) = delete;
  HostRow& operator=(const HostRow&) = delete;

  int n;
  int threads() const { return threads_; }
  // The instability flags met by any thread of the block.
  uint32_t flags() {
    uint32_t f = 0;
    if constexpr (kStoch) {
      states_[0] = dstate();
      for (const auto& s : states_) f |= s.flags;
    }
    return f;
  }

  template <class F>
  void each(F f) {
    for (int t = 0; t < threads_; ++t)
      as_thread(t, [&] {
        for (int j = lo(t); j < hi(t); ++j) f(j);
      });
  }
  template <class F>
  T sum(F f) {
    std::vector<T> p(threads_, T(0));
    for (int t = 0; t < threads_; ++t)
      as_thread(t, [&] {
        for (int j = lo(t); j < hi(t); ++j) p[t] = j == lo(t) ? f(j) : p[t] + f(j);
      });
    return reduce(p, [](const T& a, const T& b) { return a + b; });
  }
  template <class F>
  T max(F f) {
    std::vector<T> p(threads_, T(-INFINITY));
    for (int t = 0; t < threads_; ++t)
      as_thread(t, [&] {
        for (int j = lo(t); j < hi(t); ++j) {
          const T v = f(j);
          if (j == lo(t) || v > p[t]) p[t] = v;
        }
      });
    return reduce(p, [](const T& a, const T& b) { return b > a ? b : a; });
  }
  // block_argmax: each thread the first largest of its chunk (skipping `skip`), then the tree,
  // where an index replaces another when its value is larger, or not smaller and its index lower.
  template <class F>
  int argmax(int skip, F f) {
    std::vector<Best> p(threads_, Best{T(0), -1});
    for (int t = 0; t < threads_; ++t)
      as_thread(t, [&] {
        for (int j = lo(t); j < hi(t); ++j) {
          if (j == skip) continue;
          const T v = f(j);
          if (p[t].i < 0 || v > p[t].v) p[t] = Best{v, j};
        }
      });
    auto take = [](Best a, const Best& o) {
      if (o.i >= 0 && (a.i < 0 || o.v > a.v || (!(a.v > o.v) && o.i < a.i))) a = o;
      return a;
    };
    // warp 0's lanes past the warps hold warp 0's value and no index (block_argmax)
    return reduce(p, take, [](const Best& w0) { return Best{w0.v, -1}; }).i;
  }
  template <class F>
  void strided(int count, F f) {
    for (int t = 0; t < threads_; ++t)
      as_thread(t, [&] {
        for (int l = t; l < count; l += threads_) f(l);
      });
  }
  void sync() {}
  template <class F>
  void leader(F f) {
    as_thread(0, f);
  }

 private:
  int len() const { return (n + threads_ - 1) / threads_; }
  int lo(int t) const { return std::min(t * len(), n); }
  int hi(int t) const { return std::min(t * len() + len(), n); }

  // Runs f with device thread t's stream (thread 0's stays current outside).
  template <class F>
  void as_thread(int t, F f) {
    if constexpr (kStoch) {
      states_[0] = dstate();
      dstate() = states_[t];
      f();
      states_[t] = dstate();
      dstate() = states_[0];
    } else {
      f();
    }
  }

  struct Best {  // argmax's partial: a value and its index (-1: none)
    T v;
    int i;
  };

  // block_reduce: in each warp, lanes below off combine with lane + off for off = 16 .. 1 (the
  // shuffles read the values from before the step); then warp 0 combines the warps' partials, its
  // lanes past the warps holding idle(warp 0's partial).
  template <class V, class Op, class Idle>
  V reduce(std::vector<V> v, Op op, Idle idle) {
    const int warps = threads_ / 32;
    auto tree = [&](std::vector<V>& vals, int base, int top) {
      for (int off = top; off > 0; off /= 2) {
        const std::vector<V> before = vals;
        for (int lane = 0; lane < off; ++lane)
          as_thread(base + lane,
                    [&] { vals[base + lane] = op(vals[base + lane], before[base + lane + off]); });
      }
    };
    for (int w = 0; w < warps; ++w) tree(v, 32 * w, 16);
    if (warps == 1) return v[0];
    std::vector<V> part;
    for (int lane = 0; lane < 32; ++lane) part.push_back(lane < warps ? v[32 * lane] : idle(v[0]));
    tree(part, 0, warps / 2);
    return part[0];
  }
  template <class Op>
  T reduce(std::vector<T> v, Op op) {
    return reduce(std::move(v), op, [](const T& w0) { return w0; });
  }

  int threads_;
  std::vector<DThreadState> states_;
  DThreadState saved_{};
};

}  // namespace stabfuzz::gpu
