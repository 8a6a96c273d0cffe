// The CUDA and cuBLAS targets on a GPU (ctest label gpu; each test skips, saying why, without one):
// the CUDA reference kernels stay within their family's tolerance on every regime and replay from
// their seed under device CESTAC; cuBLAS f32 passes while TF32 is a finding at f32 tolerance.
#include "targets/gpu_targets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "harness/core/cuda_probe.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/family.h"
#include "targets/cublas/gemm_cublas.h"

namespace stabfuzz {
namespace {

#define SKIP_WITHOUT_GPU()                                               \
  do {                                                                   \
    std::string why;                                                     \
    if (cuda_device_count(&why) == 0) GTEST_SKIP() << "no GPU: " << why; \
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

TEST(GpuTargets, CublasF32PassesAtF32Tolerance) {
  SKIP_WITHOUT_GPU();
  expect_no_finding("gemm/cublas/f32", 40);
}

TEST(GpuTargets, Tf32IsAFindingAtF32Tolerance) {
  SKIP_WITHOUT_GPU();
  const auto [family, target] = default_registry().find_target("gemm/cublas/tf32");
  ASSERT_NE(target, nullptr);
  Input in;
  in.dtype = DType::f32;
  in.args = {{{1, 1}, {1024.5}}, {{1, 1}, {1.0}}};
  const Verdict v = pipeline::evaluate(*family, *target, in, {1, 0, {}});
  EXPECT_TRUE(v.oracle_fired) << "computed " << v.computed;
  EXPECT_NE(v.computed, 1024.5);
  EXPECT_GE(v.max_ulp, 4096);  // half a unit at 2^10, in f32 ulps (2^-13)
}

}  // namespace
}  // namespace stabfuzz
