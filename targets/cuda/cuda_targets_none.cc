// GPU targets in a build without CUDA: each listed as unavailable, with the reason.
#include "targets/gpu_targets.h"

namespace stabfuzz::targets {

void register_gpu_targets(Registry& r) {
  for (const auto& t : gpu_target_ids())
    r.add_unavailable(
        {t.id, "built without CUDA (STABFUZZ_CUDA=OFF, or no nvcc when CMake configured it)"});
}

}  // namespace stabfuzz::targets
