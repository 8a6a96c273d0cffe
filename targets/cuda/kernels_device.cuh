// CUDA reference kernels, each written once over its scalar type (float, double, DStoch<...>):
// softmax, log_softmax, layer_norm, rms_norm, sum, var, tiled gemm, one-head attention. The row
// kernels' math is the CPU references' (targets/cuda/row_kernels.h, host-compilable and tested
// against them on the CPU); this file gives it the block's reductions.
//
// Reductions err like the CPU references' pairwise sums: a row kernel runs one block per row,
// B = clamp(2^ceil(log2(n/8)), 32, 512) threads (launch_plan.h row_block), each summing a
// contiguous chunk of L = ceil(n/B) values in order, then a balanced tree (warp shuffles, then the
// warps' partials): error <= (L - 1 + log2 B) u sum|x|, the CPU's (7 + log2(n/8)) u for n <= 4096.
// gemm and attention's dots sum chunks of 8 products in order and combine the chunks' sums pairwise
// (a binary counter), bound (7 + ceil(log2(k/8)) + 1) u sum|a b|. Included by kernels.cu only.
#pragma once

#include "stabfuzz/gpu/dstoch.cuh"
#include "targets/cuda/launch_plan.h"
#include "targets/cuda/row_kernels.h"

namespace stabfuzz::gpu {

// ---- reductions ---------------------------------------------------------------------------------
struct Span {
  int lo, hi;  // this thread's contiguous chunk of [0, n)
};
__device__ __forceinline__ Span chunk_of(int n) {
  const int len = (n + static_cast<int>(blockDim.x) - 1) / static_cast<int>(blockDim.x);
  const int lo = static_cast<int>(threadIdx.x) * len;
  return {lo < n ? lo : n, lo + len < n ? lo + len : n};
}

struct Add {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
struct Max {
  template <class T>
  __device__ T operator()(const T& a, const T& b) const {
    return b > a ? b : a;
  }
};

// Balanced tree over the block's values, the result in every thread. `sh`: >= 32 T of shared
// memory. Only lanes below the offset combine, so no thread computes (or flags) a sum that is not
// part of the tree. blockDim.x: a power of two, 32..1024.
template <class T, class Op>
__device__ T block_reduce(T v, Op op, T* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int off = 16; off > 0; off >>= 1) {
    const T o = shfl_down(v, off);
    if (lane < off) v = op(v, o);
  }
  __syncthreads();  // sh may still be read by the previous reduction
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  if (warp == 0 && warps > 1) {
    v = lane < warps ? sh[lane] : sh[0];
    for (int off = warps / 2; off > 0; off >>= 1) {
      const T o = shfl_down(v, off);
      if (lane < off) v = op(v, o);
    }
    if (lane == 0) sh[0] = v;
  }
  __syncthreads();
  return sh[0];
}

// Sum over [0, n) of f(j): each thread its chunk in order, then the tree.
template <class T, class F>
__device__ T block_sum(int n, F f, T* sh) {
  const Span sp = chunk_of(n);
  T p = T(0);
  for (int j = sp.lo; j < sp.hi; ++j) p = j == sp.lo ? f(j) : p + f(j);
  return block_reduce(p, Add{}, sh);
}
template <class T, class F>
__device__ T block_max(int n, F f, T* sh) {
  const Span sp = chunk_of(n);
  T p = T(-INFINITY);
  for (int j = sp.lo; j < sp.hi; ++j) {
    const T v = f(j);
    if (j == sp.lo || v > p) p = v;
  }
  return block_reduce(p, Max{}, sh);
}
// Index of the largest f(j), j != skip (the first on ties); -1 when none.
template <class T, class F>
__device__ int block_argmax(int n, int skip, F f, T* shv, int* shi) {
  const Span sp = chunk_of(n);
  T bv = T(0);
  int bi = -1;
  for (int j = sp.lo; j < sp.hi; ++j) {
    if (j == skip) continue;
    const T v = f(j);
    if (bi < 0 || v > bv) bv = v, bi = j;
  }
  auto take = [](T& av, int& ai, const T& ov, int oi) {
    if (oi >= 0 && (ai < 0 || ov > av || (!(av > ov) && oi < ai))) av = ov, ai = oi;
  };
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int off = 16; off > 0; off >>= 1) {
    const T ov = shfl_down(bv, off);
    const int oi = shfl_down(bi, off);
    if (lane < off) take(bv, bi, ov, oi);
  }
  __syncthreads();
  if (lane == 0) shv[warp] = bv, shi[warp] = bi;
  __syncthreads();
  if (warp == 0 && warps > 1) {
    bv = shv[lane < warps ? lane : 0];
    bi = lane < warps ? shi[lane] : -1;
    for (int off = warps / 2; off > 0; off >>= 1) {
      const T ov = shfl_down(bv, off);
      const int oi = shfl_down(bi, off);
      if (lane < off) take(bv, bi, ov, oi);
    }
    if (lane == 0) shi[0] = bi;
  }
  __syncthreads();
  return shi[0];
}

// The block's collective steps for the row algorithms of row_kernels.h (its Row).
template <class T>
struct DeviceRow {
  int n;
  T* sh;               // >= 32 T of shared memory
  int* shi = nullptr;  // >= 32 int of shared memory (argmax)
  template <class F>
  __device__ void each(F f) {
    const Span sp = chunk_of(n);
    for (int j = sp.lo; j < sp.hi; ++j) f(j);
  }
  template <class F>
  __device__ T sum(F f) {
    return block_sum<T>(n, f, sh);
  }
  template <class F>
  __device__ T max(F f) {
    return block_max<T>(n, f, sh);
  }
  template <class F>
  __device__ int argmax(int skip, F f) {
    return block_argmax<T>(n, skip, f, sh, shi);
  }
  template <class F>
  __device__ void strided(int count, F f) {
    for (int l = static_cast<int>(threadIdx.x); l < count; l += static_cast<int>(blockDim.x)) f(l);
  }
  __device__ void sync() { __syncthreads(); }
  template <class F>
  __device__ void leader(F f) {
    if (threadIdx.x == 0) f();
  }
};

// ---- row kernels: one block per row
// ---------------------------------------------------------------
#define SF_ROW_SETUP(T)                                         \
  using B = scalar_of_t<T>;                                     \
  extern __shared__ __align__(16) unsigned char smem_raw[];     \
  T* sh = reinterpret_cast<T*>(smem_raw);                       \
  int* shi = reinterpret_cast<int*>(smem_raw + 32 * sizeof(T)); \
  (void)shi;                                                    \
  x += static_cast<size_t>(blockIdx.x) * n;                     \
  const Span sp = chunk_of(n);

// softmax, log_softmax, layer_norm, rms_norm, sum, var: the CPU references' algorithms
// (row_kernels.h).
template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    softmax_kernel(const scalar_of_t<T>* x, T* y, int n) {
  SF_ROW_SETUP(T)
  (void)sp;
  y += static_cast<size_t>(blockIdx.x) * n;
  DeviceRow<T> row{n, sh};
  softmax_row(row, x, y);
}

template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    log_softmax_kernel(const scalar_of_t<T>* x, T* y, int n) {
  SF_ROW_SETUP(T)
  (void)sp;
  y += static_cast<size_t>(blockIdx.x) * n;
  DeviceRow<T> row{n, sh, shi};
  log_softmax_row(row, x, y);
}

template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    layer_norm_kernel(const scalar_of_t<T>* x, T* y, int n, scalar_of_t<T> eps) {
  SF_ROW_SETUP(T)
  (void)sp;
  y += static_cast<size_t>(blockIdx.x) * n;
  DeviceRow<T> row{n, sh};
  layer_norm_row(row, x, y, T(eps));
}

template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    rms_norm_kernel(const scalar_of_t<T>* x, T* y, int n, scalar_of_t<T> eps) {
  SF_ROW_SETUP(T)
  (void)sp;
  y += static_cast<size_t>(blockIdx.x) * n;
  DeviceRow<T> row{n, sh};
  rms_norm_row(row, x, y, T(eps));
}

template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    sum_kernel(const scalar_of_t<T>* x, T* y, int n) {
  SF_ROW_SETUP(T)
  (void)sp;
  DeviceRow<T> row{n, sh};
  sum_row(row, x, y + blockIdx.x);
}

// `w`: n values of scratch per row.
template <class T>
__global__ void __launch_bounds__(cuda::kRowMaxThreads, 1)
    var_kernel(const scalar_of_t<T>* x, T* y, T* w, int n, scalar_of_t<T> correction) {
  SF_ROW_SETUP(T)
  (void)sp;
  w += static_cast<size_t>(blockIdx.x) * n;
  DeviceRow<T> row{n, sh};
  var_row(row, x, w, y + blockIdx.x, correction);
}

// ---- gemm: 16 x 16 output tiles, k in shared-memory chunks of 8
// -----------------------------------
inline constexpr int kGemmTile = 16, kGemmChunk = 8;

template <class T>
__global__ void __launch_bounds__(cuda::kGemmThreads, 1)
    gemm_kernel(const scalar_of_t<T>* a, const scalar_of_t<T>* b, T* c, int m, int k, int n) {
  using B = scalar_of_t<T>;
  __shared__ B as[kGemmTile][kGemmChunk];
  __shared__ B bs[kGemmChunk][kGemmTile];
  const int tx = threadIdx.x, ty = threadIdx.y, id = ty * kGemmTile + tx;
  const int row = blockIdx.y * kGemmTile + ty, col = blockIdx.x * kGemmTile + tx;
  PairwiseAcc<T> acc;
  for (int c0 = 0; c0 < k; c0 += kGemmChunk) {
    if (id < kGemmTile * kGemmChunk) {
      const int r = blockIdx.y * kGemmTile + id / kGemmChunk, l = c0 + id % kGemmChunk;
      as[id / kGemmChunk][id % kGemmChunk] =
          r < m && l < k ? a[static_cast<size_t>(r) * k + l] : B(0);
    } else {
      const int j = id - kGemmTile * kGemmChunk;
      const int l = c0 + j / kGemmTile, cc = blockIdx.x * kGemmTile + j % kGemmTile;
      bs[j / kGemmTile][j % kGemmTile] =
          l < k && cc < n ? b[static_cast<size_t>(l) * n + cc] : B(0);
    }
    __syncthreads();
    const int len = k - c0 < kGemmChunk ? k - c0 : kGemmChunk;
    // rounded products summed in order, the chunks pairwise: pairwise_terms's arithmetic
    const T s = ordered_sum<T>(len, [&](int l) { return T(as[ty][l]) * T(bs[l][tx]); });
    if (row < m && col < n) acc.push(s);
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<size_t>(row) * n + col] = acc.result();
}

// ---- attention: one block per query row (row_kernels.h attention_row) ---------------------------
template <class T>
__global__ void __launch_bounds__(cuda::kAttentionThreads, 1)
    attention_kernel(const scalar_of_t<T>* q, const scalar_of_t<T>* kk, const scalar_of_t<T>* v,
                     T* o, T* e, int t, int d, int dv, scalar_of_t<T> scale, int causal) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sh = reinterpret_cast<T*>(smem_raw);
  const int i = blockIdx.x, tl = causal ? i + 1 : t;
  DeviceRow<T> row{tl, sh};
  attention_row(row, q + static_cast<size_t>(i) * d, kk, v, o + static_cast<size_t>(i) * dv,
                e + static_cast<size_t>(i) * t, d, dv, scale);
}

}  // namespace stabfuzz::gpu
