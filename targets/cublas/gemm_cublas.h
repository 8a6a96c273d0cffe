// cuBLAS GEMM in each math mode, as a black-box gemm implementation
// (targets/cublas/gemm_cublas.cc); the modes' host-side logic is in gemm_modes.h.
#pragma once

#include <cstddef>
#include <vector>

#include "targets/cublas/gemm_modes.h"

namespace stabfuzz::cublas {

// C = A B (row-major A [m,k], B [k,n]) by cublasGemmEx in `mode`, with the compute type and math
// mode that make it compute what the mode's name says (gemm_cublas.cc); the values of A and B must
// be exact in the mode's storage format (f32, f16 or bf16), the result is C's storage format's
// value as a double. Throws std::invalid_argument for a shape cublasGemmEx cannot take
// (check_gemm_shape), std::runtime_error on a CUDA or cuBLAS error.
std::vector<double> gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                         size_t m, size_t k, size_t n);

}  // namespace stabfuzz::cublas
