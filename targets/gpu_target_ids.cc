// The one list of GPU target ids, shared by CUDA builds (registration) and others (--list).
#include "targets/gpu_targets.h"

namespace stabfuzz::targets {

std::vector<GpuTargetId> gpu_target_ids() {
  return {
      {"softmax", "softmax/cuda/block"},
      {"log_softmax", "log_softmax/cuda/block"},
      {"layer_norm", "layer_norm/cuda/block"},
      {"rms_norm", "rms_norm/cuda/block"},
      {"sum", "sum/cuda/block"},
      {"var", "var/cuda/two_pass"},
      {"gemm", "gemm/cuda/tiled"},
      {"attention", "attention/cuda/row_block"},
      {"gemm", "gemm/cublas/f32"},
      {"gemm", "gemm/cublas/tf32"},
      {"gemm", "gemm/cublas/f16_f32acc"},
      {"gemm", "gemm/cublas/f16_f16acc"},
      {"gemm", "gemm/cublas/bf16"},
  };
}

}  // namespace stabfuzz::targets
