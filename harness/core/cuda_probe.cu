// CUDA device probe: cudaGetDeviceCount, with "no driver" read as "no GPU".
#include <cuda_runtime.h>

#include "harness/core/cuda_probe.h"

namespace stabfuzz {

int cuda_device_count(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = cudaGetErrorString(err);
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n;
}

}  // namespace stabfuzz
