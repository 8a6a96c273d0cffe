// GPU targets (CUDA reference kernels, cuBLAS GEMM modes): registered when a GPU is usable.
#pragma once

#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::targets {

// Every GPU target id this build knows, family/backend/variant, with its family.
struct GpuTargetId {
  std::string family;
  std::string id;
};
std::vector<GpuTargetId> gpu_target_ids();

// Registers the CUDA and cuBLAS targets into their families when this build has CUDA and a device
// is usable at run time; otherwise lists each of them with add_unavailable and the reason
// ("no GPU: <CUDA's error>", "built without CUDA").
void register_gpu_targets(Registry& r);

}  // namespace stabfuzz::targets
