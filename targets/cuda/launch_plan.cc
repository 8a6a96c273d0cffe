// Launch plans of the CUDA reference kernels (launch_plan.h): plain C++, built with or without
// CUDA so that the CPU tests check every size rule.
#include "targets/cuda/launch_plan.h"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace stabfuzz::cuda {

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::softmax:
      return "softmax";
    case Kernel::log_softmax:
      return "log_softmax";
    case Kernel::layer_norm:
      return "layer_norm";
    case Kernel::rms_norm:
      return "rms_norm";
    case Kernel::sum:
      return "sum";
    case Kernel::var:
      return "var";
    case Kernel::gemm:
      return "gemm";
    case Kernel::attention:
      return "attention";
  }
  return "?";
}

int row_block(int n, int max_threads) {
  if (n < 1 || n > kMaxRowLength)
    throw std::invalid_argument("row length " + std::to_string(n) + " not in [1, 2^24]");
  if (max_threads < 32)
    throw std::invalid_argument("the kernel allows " + std::to_string(max_threads) +
                                " threads per block, fewer than one warp");
  int cap = 32;  // the largest power of two <= min(max_threads, 1024)
  while (cap * 2 <= std::min(max_threads, 1024)) cap *= 2;
  int want = 1;
  while (want < (n + 7) / 8) want *= 2;
  return std::clamp(want, 32, cap);
}

uint64_t threads_of(const Plan& pl) {
  return uint64_t(pl.grid.x) * pl.grid.y * pl.grid.z * pl.block.x * pl.block.y * pl.block.z;
}

unsigned state_init_blocks(const Plan& pl, const DeviceLimits& dl) {
  const uint64_t blocks = (threads_of(pl) + kInitThreads - 1) / kInitThreads;
  if (blocks > dl.max_grid[0])
    throw std::invalid_argument("CESTAC state initialization: " + std::to_string(threads_of(pl)) +
                                " threads need " + std::to_string(blocks) +
                                " blocks, over the device's grid limit " +
                                std::to_string(dl.max_grid[0]));
  return static_cast<unsigned>(blocks);
}

Plan plan_for(Kernel k, const Problem& p, size_t value_size, const KernelLimits& kl,
              const DeviceLimits& dl) {
  const std::string who = std::string(kernel_name(k)) + "/cuda: ";
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(who + what);
  };
  auto str = [](auto v) { return std::to_string(v); };
  const int max_threads = std::min(kl.max_threads, dl.max_threads_per_block);
  auto block_fits = [&](int threads) {
    need(threads <= max_threads, str(threads) + " threads per block needed; the kernel allows " +
                                     str(max_threads) + " (registers, __launch_bounds__)");
  };
  auto smem_fits = [&](size_t bytes) {
    need(bytes <= kl.max_dynamic_smem && kl.static_smem + bytes <= dl.max_smem_per_block,
         str(bytes) + " + " + str(kl.static_smem) + " bytes of shared memory, over the limit " +
             str(std::min(kl.max_dynamic_smem, dl.max_smem_per_block)));
  };
  auto grid = [&](size_t blocks, int dim, const std::string& what) {
    need(blocks <= dl.max_grid[dim], what + " = " + str(blocks) +
                                         " blocks, over the device's grid " + "limit " +
                                         str(dl.max_grid[dim]));
    return static_cast<unsigned>(blocks);
  };
  Plan pl;
  switch (k) {
    case Kernel::softmax:
    case Kernel::log_softmax:
    case Kernel::layer_norm:
    case Kernel::rms_norm:
    case Kernel::sum:
    case Kernel::var: {
      need(p.x.size() == 1 && p.rows >= 1 && p.x[0].size() % p.rows == 0, "one row tensor");
      const size_t n = p.x[0].size() / p.rows;
      need(n >= 1 && n <= size_t{kMaxRowLength}, "row length " + str(n) + " not in [1, 2^24]");
      pl.n = static_cast<int>(n);
      pl.grid.x = grid(p.rows, 0, "rows");
      need(max_threads >= 32, "the kernel allows " + str(max_threads) + " threads per block");
      pl.block.x = static_cast<unsigned>(row_block(pl.n, std::min(max_threads, kRowMaxThreads)));
      pl.smem = 32 * (value_size + sizeof(int)) + 16;
      pl.outputs = (k == Kernel::sum || k == Kernel::var) ? p.rows : p.rows * n;
      pl.scratch = k == Kernel::var ? p.rows * n : 0;
      break;
    }
    case Kernel::gemm:
      need(p.x.size() == 2, "A [m,k], B [k,n]");
      need(p.m >= 1 && p.k >= 1 && p.n >= 1, "m, k, n >= 1");
      need(p.k <= kMaxDot,
           "k = " + str(p.k) + " over " + str(kMaxDot) + " (the pairwise sum of 2^16 chunks of 8)");
      // Column indices are ints: n + kGemmSide - 1 must not overflow.
      need(p.n <= size_t{INT_MAX} - kGemmSide, "n = " + str(p.n) + " over 2^31 - 17");
      pl.grid.x = grid((p.n + kGemmSide - 1) / kGemmSide, 0, "gemm grid.x = ceil(n/16)");
      pl.grid.y = grid((p.m + kGemmSide - 1) / kGemmSide, 1, "gemm grid.y = ceil(m/16)");
      need(p.x[0].size() == p.m * p.k && p.x[1].size() == p.k * p.n, "A [m,k], B [k,n]");
      pl.block = Dims{kGemmSide, kGemmSide, 1};
      pl.outputs = p.m * p.n;
      break;
    case Kernel::attention:
      need(p.x.size() == 3, "Q [s,d], K [t,d], V [t,dv]");
      need(p.s >= 1 && p.t >= 1 && p.d >= 1 && p.dv >= 1, "s, t, d, dv >= 1");
      need(p.d <= kMaxDot && p.t <= kMaxDot,
           "d = " + str(p.d) + ", t = " + str(p.t) + ": both at most " + str(kMaxDot));
      // The value loop steps an int by the block size.
      need(p.dv <= size_t{INT_MAX} - kAttentionThreads, "dv = " + str(p.dv) + " over 2^31 - 129");
      need(!p.causal || p.s == p.t, "causal needs s = t");
      pl.grid.x = grid(p.s, 0, "query rows s");
      need(p.x[0].size() == p.s * p.d && p.x[1].size() == p.t * p.d && p.x[2].size() == p.t * p.dv,
           "Q [s,d], K [t,d], V [t,dv]");
      pl.block.x = kAttentionThreads;
      pl.smem = 32 * (value_size + sizeof(int)) + 16;
      pl.outputs = p.s * p.dv;
      pl.scratch = p.s * p.t;
      break;
  }
  block_fits(static_cast<int>(pl.block.x * pl.block.y * pl.block.z));
  smem_fits(pl.smem);
  return pl;
}

}  // namespace stabfuzz::cuda
