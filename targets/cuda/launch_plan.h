// Launch plans of the CUDA reference kernels as plain host code (no CUDA headers): block and grid
// sizes chosen from the kernel's and the device's real limits, and every size the kernels cannot
// take rejected as std::invalid_argument before anything is launched. kernels.cu fills the limits
// from cudaFuncGetAttributes / cudaDeviceGetAttribute; the CPU tests
// (tests/gpu/launch_plan_test.cc) pass their own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "targets/cuda/kernels.h"

namespace stabfuzz::cuda {

// Threads per block each kernel is compiled for (__launch_bounds__ in kernels_device.cuh) and
// launched with at most. Row kernels: 512, so that ptxas may give the DStoch instantiations up to
// 128 registers (they use 48 to 86 on sm_90; 1024 threads would allow only 64). The native and
// DStoch instantiations of a row kernel share one block size: the CESTAC run sums in the native
// tree.
inline constexpr int kRowMaxThreads = 512;
inline constexpr int kGemmSide = 16;  // gemm: kGemmSide x kGemmSide threads, one per output
inline constexpr int kGemmThreads = kGemmSide * kGemmSide;
inline constexpr int kAttentionThreads = 128;
inline constexpr int kInitThreads = 256;  // the DStoch state initialization
inline constexpr int kMaxRowLength = 1 << 24;
// Longest dot product of gemm and attention: PairwiseAcc combines at most 2^16 chunks of 8.
inline constexpr size_t kMaxDot = size_t{8} * 65535;

// Threads per block of a row kernel for rows of n values: 2^ceil(log2(n/8)) clamped to
// [32, the largest power of two <= min(max_threads, 1024)], so each thread sums at most 8 values
// while the block allows it. Throws std::invalid_argument for n outside [1, 2^24] or
// max_threads < 32 (the kernel cannot run one warp).
int row_block(int n, int max_threads);

struct Dims {
  unsigned x = 1, y = 1, z = 1;
};

// What cudaFuncGetAttributes says about a kernel (for a row kernel: the stricter of its native
// and DStoch instantiations).
struct KernelLimits {
  int max_threads = 1024;               // maxThreadsPerBlock: registers and __launch_bounds__
  size_t static_smem = 0;               // sharedSizeBytes
  size_t max_dynamic_smem = 48 * 1024;  // maxDynamicSharedSizeBytes
};

// What the device allows (cudaDevAttrMaxGridDimX..., MaxThreadsPerBlock, MaxSharedMemoryPerBlock).
struct DeviceLimits {
  unsigned max_grid[3] = {2147483647u, 65535u, 65535u};
  int max_threads_per_block = 1024;
  size_t max_smem_per_block = 48 * 1024;
};

struct Plan {
  Dims grid, block;
  size_t smem = 0;  // dynamic shared memory, bytes
  size_t outputs = 0;
  size_t scratch = 0;  // values of scratch (var: the scaled row, attention: the scores)
  int n = 0;           // row length
};

// The launch of kernel k on p with values of value_size bytes (float, double or DStoch<...>).
// Throws std::invalid_argument, naming the size and its limit, for a shape the kernel cannot take.
Plan plan_for(Kernel k, const Problem& p, size_t value_size, const KernelLimits& kl,
              const DeviceLimits& dl);

uint64_t threads_of(const Plan& pl);

// Grid of the DStoch state initialization (one state per thread of the plan, kInitThreads per
// block); throws std::invalid_argument when it exceeds the device's grid.
unsigned state_init_blocks(const Plan& pl, const DeviceLimits& dl);

}  // namespace stabfuzz::cuda
