// The CUDA and cuBLAS targets on a GPU (ctest label gpu; each test skips, saying why, without one):
// the CUDA reference kernels stay within their family's tolerance on every regime and replay from
// their seed under device CESTAC; cuBLAS f32 passes while TF32 is a finding at f32 tolerance (on a
// shape cuBLAS runs on tensor cores).
#include "targets/gpu_targets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/cuda_probe.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/family.h"
#include "targets/cublas/gemm_cublas.h"
#include "targets/cuda/kernels.h"
#include "tests/support/require.h"

namespace stabfuzz {
namespace {

#define SKIP_WITHOUT_GPU()                                                                     \
  do {                                                                                         \
    std::string why;                                                                           \
    if (cuda_device_count(&why) == 0) STABFUZZ_SKIP_UNLESS_REQUIRED("gpu", "no GPU: " << why); \
  } while (0)

// Runs `inputs` generated cases per regime-cycling index on a target, all its dtypes.
void expect_no_finding(const std::string& id, int inputs) {
  const auto [family, target] = default_registry().find_target(id);
  ASSERT_NE(target, nullptr) << id;
  for (DType d : target->dtypes)
    for (int64_t k = 1; k <= inputs; ++k) {
      const Input in = pipeline::make_case(*family, d, 7, k);
      const CestacRequest req{7, static_cast<uint64_t>(k), {}};
      const Verdict v = pipeline::evaluate(*family, *target, in, req);
      EXPECT_FALSE(v.finding()) << id << " " << dtype_name(d) << " case " << k << ": ulp "
                                << v.max_ulp << " ratio " << v.max_ratio << " digits "
                                << v.min_digits << " cestac " << v.cestac_fired;
    }
}

TEST(GpuTargets, CudaKernelsStayWithinTheirFamilyTolerance) {
  SKIP_WITHOUT_GPU();
  for (const auto& g : targets::gpu_target_ids())
    if (g.id.find("/cuda/") != std::string::npos) expect_no_finding(g.id, 30);
}

TEST(GpuTargets, DeviceCestacReplaysFromItsSeed) {
  SKIP_WITHOUT_GPU();
  for (const auto& g : targets::gpu_target_ids()) {
    if (g.id.find("/cuda/") == std::string::npos) continue;
    const auto [family, target] = default_registry().find_target(g.id);
    const Input in = pipeline::make_case(*family, DType::f32, 3, 2);
    const auto a = target->cestac(in, {5, 1, {}});
    const auto b = target->cestac(in, {5, 1, {}});
    EXPECT_EQ(a.mean, b.mean) << g.id;
    EXPECT_EQ(a.digits, b.digits) << g.id;
    EXPECT_EQ(a.log.counts, b.log.counts) << g.id;
  }
}

// Rows longer than 4096 take the largest block (512 threads; 1024 exceeded the DStoch kernels'
// registers): constant rows, whose results are known, native and under DStoch.
TEST(GpuTargets, RowKernelsRunAtTheirLargestBlock) {
  SKIP_WITHOUT_GPU();
  using cuda::Kernel;
  for (size_t n : {size_t{4097}, size_t{10000}, size_t{1} << 20}) {
    cuda::Problem p;
    p.rows = 2;
    p.x = {std::vector<double>(2 * n, 1.0)};
    p.eps = 1e-5;
    const double dn = static_cast<double>(n);
    const std::pair<Kernel, double> want[] = {
        {Kernel::softmax, 1 / dn}, {Kernel::log_softmax, -std::log(dn)},
        {Kernel::layer_norm, 0},   {Kernel::rms_norm, 1 / std::sqrt(1 + 1e-5)},
        {Kernel::sum, dn},         {Kernel::var, 0}};
    for (const auto& [k, y] : want)
      for (bool f64 : {false, true}) {
        const std::string what =
            std::string(cuda::kernel_name(k)) + (f64 ? " f64 n " : " f32 n ") + std::to_string(n);
        const auto native = cuda::run_native(k, p, f64);
        const auto c = cuda::run_cestac(k, p, f64, 1, 0, 4, true);
        ASSERT_EQ(c.samples.size(), native.size() * cuda::kLanes) << what;
        for (size_t i = 0; i < native.size(); i += native.size() / 2) {
          EXPECT_NEAR(native[i], y, 1e-4 * std::fabs(y) + 1e-9) << what;
          EXPECT_NEAR(c.samples[i * cuda::kLanes], y, 1e-4 * std::fabs(y) + 1e-9) << what;
        }
      }
  }
}

// Sizes over the launch limits are invalid_argument before anything runs.
TEST(GpuTargets, SizesOverTheLaunchLimitsAreInvalidArguments) {
  SKIP_WITHOUT_GPU();
  cuda::Problem p;
  p.m = 65535 * 16 + 1, p.k = 1, p.n = 1;  // gemm grid.y = 65536
  p.x = {std::vector<double>(p.m, 1.0), {1.0}};
  EXPECT_THROW(cuda::run_native(cuda::Kernel::gemm, p, false), std::invalid_argument);
  p.m -= 1;
  p.x[0].pop_back();
  EXPECT_EQ(cuda::run_native(cuda::Kernel::gemm, p, false).size(), p.m);
}

TEST(GpuTargets, CublasF32PassesAtF32Tolerance) {
  SKIP_WITHOUT_GPU();
  expect_no_finding("gemm/cublas/f32", 40);
}

TEST(GpuTargets, Tf32IsAFindingAtF32Tolerance) {
  SKIP_WITHOUT_GPU();
  const auto [family, target] = default_registry().find_target("gemm/cublas/tf32");
  ASSERT_NE(target, nullptr);
  // A tensor-core shape and operands whose TF32 rounding shows (cublas_modes_test checks the mode
  // itself): each product loses about 2^-11 of itself, some 2^12 f32 units in the last place.
  const size_t s = 128;
  Input in;
  in.dtype = DType::f32;
  in.args = {{{int64_t(s), int64_t(s)}, cublas::tf32_probe(s * s, 1, true)},
             {{int64_t(s), int64_t(s)}, cublas::tf32_probe(s * s, 2, true)}};
  const Verdict v = pipeline::evaluate(*family, *target, in, {1, 0, {}});
  EXPECT_TRUE(v.oracle_fired) << "computed " << v.computed;
  EXPECT_GE(v.max_ulp, 1024);
}

}  // namespace
}  // namespace stabfuzz
