// CUDA device probe for builds without CUDA.
#include "harness/core/cuda_probe.h"

namespace stabfuzz {

int cuda_device_count(std::string* why) {
  if (why) *why = "built without CUDA (nvcc not found at configure time)";
  return 0;
}

}  // namespace stabfuzz
