// Every GPU target is either registered or listed as unavailable with its reason, also by --list.
#include <gtest/gtest.h>

#include "harness/core/cuda_probe.h"
#include "stabfuzz/family.h"
#include "targets/gpu_targets.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

const UnavailableTarget* unavailable(const std::string& id) {
  for (const auto& u : default_registry().unavailable())
    if (u.id == id) return &u;
  return nullptr;
}

TEST(GpuRegistry, EveryGpuTargetIsRegisteredOrUnavailableWithItsReason) {
  const auto ids = targets::gpu_target_ids();
  ASSERT_EQ(ids.size(), 13u);  // 8 CUDA kernels, 5 cuBLAS modes
  std::string why;
  const bool gpu = cuda_device_count(&why) > 0;
  for (const auto& g : ids) {
    const auto [family, target] = default_registry().find_target(g.id);
    const UnavailableTarget* u = unavailable(g.id);
    EXPECT_NE(target == nullptr, u == nullptr) << g.id << ": registered xor unavailable";
    if (target) {
      EXPECT_TRUE(gpu) << g.id;
      EXPECT_EQ(family->name, g.family);
      EXPECT_EQ(static_cast<bool>(target->cestac), g.id.find("/cuda/") != std::string::npos)
          << g.id;
    } else if (u) {
      EXPECT_FALSE(gpu) << g.id;
#if defined(STABFUZZ_HAVE_CUDA)
      EXPECT_EQ(u->reason, "no GPU: " + why) << g.id;
#else
      EXPECT_NE(u->reason.find("built without CUDA"), std::string::npos) << u->reason;
#endif
    }
  }
}

TEST(GpuRegistry, ListNamesTheUnavailableGpuTargetsAndWhy) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU is present: the targets are registered";
  const auto o = testing::run_stabfuzz("--list");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const auto& g : targets::gpu_target_ids()) {
    const auto at = o.out.find(g.id);
    ASSERT_NE(at, std::string::npos) << g.id;
    const auto eol = o.out.find('\n', at);
    const std::string line = o.out.substr(at, eol - at);
#if defined(STABFUZZ_HAVE_CUDA)
    EXPECT_NE(line.find("no GPU"), std::string::npos) << line;
#else
    EXPECT_NE(line.find("built without CUDA"), std::string::npos) << line;
#endif
  }
}

TEST(GpuRegistry, RunningAnUnavailableTargetSaysWhy) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU is present: the targets are registered";
  const auto o =
      testing::run_stabfuzz("--target gemm --impl gemm/cublas/tf32 --runs 1 --seed 1 --out " +
                            testing::temp_dir("unavailable"));
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("stabfuzz: error: implementation 'gemm/cublas/tf32' is unavailable here: "),
            std::string::npos)
      << o.err;
  EXPECT_EQ(testing::count_lines(o.err), 1) << o.err;
}

}  // namespace
}  // namespace stabfuzz
