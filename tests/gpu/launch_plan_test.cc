// Launch plans of the CUDA kernels without a GPU (targets/cuda/launch_plan.h): the row block for
// every row length the plan accepts, and every size over a kernel's or the device's limits
// rejected as std::invalid_argument naming it.
#include "targets/cuda/launch_plan.h"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace stabfuzz::cuda {
namespace {

bool pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// What a row kernel needs of its block for rows of n: a power of two of at least one warp, within
// the kernel's limit, whose chunks (chunk_of in kernels_device.cuh: ceil(n/B) values per thread)
// cover [0, n) without int overflow, at most 8 values per thread while the limit allows it.
void expect_row_block(int n, int max_threads) {
  const int b = row_block(n, max_threads);
  ASSERT_TRUE(pow2(b)) << n << " " << max_threads << ": " << b;
  ASSERT_GE(b, 32) << n;
  ASSERT_LE(b, max_threads) << n;
  ASSERT_LE(b, 1024) << n;
  const long long len = (n + b - 1) / b;
  ASSERT_GE(len * b, n) << n << " " << b;
  ASSERT_LT(len * b, (long long)INT_MAX) << n;
  ASSERT_LT((len - 1) * b, n) << n << " " << b;  // no idle tail of whole chunks past n
  int cap = 32;
  while (cap * 2 <= std::min(max_threads, 1024)) cap *= 2;
  if (n <= 8 * cap) ASSERT_LE(len, 8) << n << " " << b;
  if (b < cap) ASSERT_TRUE(b == 32 || 4 * b < n) << n << " " << b;  // half of it would not do
}

const int kLimits[] = {32, 33, 63, 64, 100, 128, 256, 511, kRowMaxThreads, 896, 1023, 1024, 2048};

TEST(RowBlock, Boundaries) {
  for (int lim : kLimits)
    for (int n : {1, 2, 7, 8, 9, 255, 256, 257, 263, 264, 4095, 4096, 4097, 8191, 8192, 8193,
                  kMaxRowLength - 1, kMaxRowLength})
      expect_row_block(n, lim);
  EXPECT_EQ(row_block(1, kRowMaxThreads), 32);
  EXPECT_EQ(row_block(256, kRowMaxThreads), 32);
  EXPECT_EQ(row_block(257, kRowMaxThreads), 64);
  EXPECT_EQ(row_block(4096, kRowMaxThreads), 512);
  EXPECT_EQ(row_block(4097, kRowMaxThreads), 512);
  EXPECT_EQ(row_block(kMaxRowLength, kRowMaxThreads), 512);
  EXPECT_EQ(row_block(kMaxRowLength, 1024), 1024);
  EXPECT_EQ(row_block(kMaxRowLength, 896), 512);  // a register-limited kernel: 28 warps
  EXPECT_EQ(row_block(8192, 100), 64);
}

TEST(RowBlock, EveryAcceptedRowLengthAtTheRowKernelsLimit) {
  for (int n = 1; n <= kMaxRowLength; ++n) {
    expect_row_block(n, kRowMaxThreads);
    if (HasFatalFailure()) return;
  }
}

TEST(RowBlock, SweepUnderOtherLimits) {
  // Every n up to 2^16, every power of two and its neighbours, and a prime stride over the rest.
  std::vector<int> ns;
  for (int n = 1; n <= 1 << 16; ++n) ns.push_back(n);
  for (int e = 17; e <= 24; ++e)
    for (int d = -1; d <= 1; ++d)
      if ((1 << e) + d <= kMaxRowLength) ns.push_back((1 << e) + d);
  for (int n = 1 << 16; n <= kMaxRowLength; n += 4099) ns.push_back(n);
  for (int lim : {32, 96, 200, 896, 1024, 4096})
    for (int n : ns) {
      expect_row_block(n, lim);
      if (HasFatalFailure()) return;
    }
}

TEST(RowBlock, RejectsWhatNoKernelCanRun) {
  EXPECT_THROW(row_block(0, 512), std::invalid_argument);
  EXPECT_THROW(row_block(-1, 512), std::invalid_argument);
  EXPECT_THROW(row_block(kMaxRowLength + 1, 512), std::invalid_argument);
  EXPECT_THROW(row_block(100, 31), std::invalid_argument);  // registers allow under one warp
  EXPECT_THROW(row_block(100, 0), std::invalid_argument);
}

// The message of the invalid_argument plan_for throws; "" when it does not throw.
std::string rejection(Kernel k, const Problem& p, const KernelLimits& kl = {},
                      const DeviceLimits& dl = {}, size_t value_size = 4) {
  try {
    plan_for(k, p, value_size, kl, dl);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

Problem rows(size_t r, size_t n) {
  Problem p;
  p.rows = r;
  p.x = {std::vector<double>(r * n, 1.0)};
  return p;
}

TEST(PlanFor, RowKernelsTakeTheBlockFromTheKernelsLimits) {
  for (Kernel k : {Kernel::softmax, Kernel::log_softmax, Kernel::layer_norm, Kernel::rms_norm,
                   Kernel::sum, Kernel::var}) {
    const Problem p = rows(3, 10000);
    const Plan pl = plan_for(k, p, 4, {}, {});
    EXPECT_EQ(pl.grid.x, 3u);
    EXPECT_EQ(pl.block.x, unsigned(kRowMaxThreads)) << kernel_name(k);  // never the old 1024
    EXPECT_EQ(pl.n, 10000);
    KernelLimits kl;
    kl.max_threads = 640;  // as cudaFuncGetAttributes reports for a register-heavy instantiation
    EXPECT_EQ(plan_for(k, p, 32, kl, {}).block.x, 512u);
    kl.max_threads = 200;
    EXPECT_EQ(plan_for(k, p, 32, kl, {}).block.x, 128u);
    DeviceLimits dl;
    dl.max_threads_per_block = 256;
    EXPECT_EQ(plan_for(k, p, 32, {}, dl).block.x, 256u);
    kl.max_threads = 16;
    EXPECT_NE(rejection(k, p, kl), "") << kernel_name(k);
  }
}

TEST(PlanFor, RowSizesOverTheLimitsAreInvalidArguments) {
  DeviceLimits dl;
  dl.max_grid[0] = 4;
  EXPECT_EQ(rejection(Kernel::softmax, rows(4, 3), {}, dl), "");
  EXPECT_NE(rejection(Kernel::softmax, rows(5, 3), {}, dl).find("rows = 5 blocks"),
            std::string::npos);
  Problem p = rows(1, 1);
  p.x[0].resize(size_t{kMaxRowLength} + 1);
  EXPECT_NE(rejection(Kernel::sum, p).find("row length 16777217"), std::string::npos);
  p.x[0].resize(size_t{kMaxRowLength});
  EXPECT_EQ(rejection(Kernel::sum, p), "");
  // Shared memory: the kernel's static bytes plus the block's scratch over the device's limit.
  KernelLimits kl;
  kl.static_smem = 48 * 1024 - 100;
  EXPECT_NE(rejection(Kernel::var, rows(1, 8), kl, {}, 32).find("shared memory"),
            std::string::npos);
  Problem bad = rows(2, 3);
  bad.rows = 4;  // 6 values are not 4 rows
  EXPECT_NE(rejection(Kernel::var, bad).find("one row tensor"), std::string::npos);
}

Problem gemm(size_t m, size_t k, size_t n, bool fill = true) {
  Problem p;
  p.m = m, p.k = k, p.n = n;
  p.x = {std::vector<double>(fill ? m * k : 0), std::vector<double>(fill ? k * n : 0)};
  return p;
}

TEST(PlanFor, GemmGridAndIntLimits) {
  const Plan pl = plan_for(Kernel::gemm, gemm(33, 5, 17), 4, {}, {});
  EXPECT_EQ(pl.grid.x, 2u);
  EXPECT_EQ(pl.grid.y, 3u);
  EXPECT_EQ(pl.block.x * pl.block.y, unsigned(kGemmThreads));
  // grid.y = ceil(m/16) <= 65535: m = 1048560 is the largest m.
  EXPECT_EQ(rejection(Kernel::gemm, gemm(65535 * 16, 1, 1)), "");
  EXPECT_NE(rejection(Kernel::gemm, gemm(65535 * 16 + 1, 1, 1)).find("grid.y"), std::string::npos);
  DeviceLimits dl;
  dl.max_grid[0] = 2;
  EXPECT_NE(rejection(Kernel::gemm, gemm(1, 1, 33), {}, dl).find("grid.x"), std::string::npos);
  // Sizes checked before the values are looked at: no multi-gigabyte tensors needed here.
  EXPECT_NE(rejection(Kernel::gemm, gemm(1, 1, size_t{INT_MAX}, false)).find("n = "),
            std::string::npos);
  EXPECT_NE(rejection(Kernel::gemm, gemm(1, kMaxDot + 1, 1, false)).find("k = "),
            std::string::npos);
  EXPECT_EQ(rejection(Kernel::gemm, gemm(1, kMaxDot, 1)), "");
  EXPECT_NE(rejection(Kernel::gemm, gemm(0, 1, 1)), "");
  KernelLimits kl;
  kl.max_threads = 128;  // gemm needs its 256
  EXPECT_NE(rejection(Kernel::gemm, gemm(2, 2, 2), kl).find("256 threads"), std::string::npos);
}

Problem attention(size_t s, size_t t, size_t d, size_t dv, bool causal, bool fill = true) {
  Problem p;
  p.s = s, p.t = t, p.d = d, p.dv = dv, p.causal = causal;
  p.x = {std::vector<double>(fill ? s * d : 0), std::vector<double>(fill ? t * d : 0),
         std::vector<double>(fill ? t * dv : 0)};
  return p;
}

TEST(PlanFor, AttentionLimits) {
  const Plan pl = plan_for(Kernel::attention, attention(5, 5, 3, 2, true), 8, {}, {});
  EXPECT_EQ(pl.grid.x, 5u);
  EXPECT_EQ(pl.block.x, unsigned(kAttentionThreads));
  EXPECT_EQ(pl.scratch, 25u);
  EXPECT_NE(rejection(Kernel::attention, attention(5, 4, 3, 2, true)).find("causal"),
            std::string::npos);
  EXPECT_NE(rejection(Kernel::attention, attention(1, kMaxDot + 1, 1, 1, false, false)), "");
  EXPECT_NE(rejection(Kernel::attention, attention(1, 1, kMaxDot + 1, 1, false, false)), "");
  EXPECT_NE(
      rejection(Kernel::attention, attention(1, 1, 1, size_t{INT_MAX}, false, false)).find("dv = "),
      std::string::npos);
  DeviceLimits dl;
  dl.max_grid[0] = 4;
  EXPECT_NE(rejection(Kernel::attention, attention(5, 5, 1, 1, false), {}, dl).find("query rows"),
            std::string::npos);
  KernelLimits kl;
  kl.max_threads = 64;
  EXPECT_NE(rejection(Kernel::attention, attention(2, 2, 1, 1, false), kl), "");
}

TEST(PlanFor, CestacStateInitializationFitsTheGrid) {
  const Plan pl = plan_for(Kernel::sum, rows(1000, 4096), 32, {}, {});
  EXPECT_EQ(threads_of(pl), 1000u * 512);
  EXPECT_EQ(state_init_blocks(pl, {}), 1000u * 512 / kInitThreads);
  DeviceLimits dl;
  dl.max_grid[0] = 1999;
  EXPECT_THROW(state_init_blocks(pl, dl), std::invalid_argument);
}

}  // namespace
}  // namespace stabfuzz::cuda
