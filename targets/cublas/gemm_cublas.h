// cuBLAS GEMM in each math mode, as a black-box gemm implementation
// (targets/cublas/gemm_cublas.cc).
#pragma once

#include <cstddef>
#include <vector>

namespace stabfuzz::cublas {

enum class Mode { f32, tf32, f16_f32acc, f16_f16acc, bf16 };
inline constexpr Mode kAllModes[] = {Mode::f32, Mode::tf32, Mode::f16_f32acc, Mode::f16_f16acc,
                                     Mode::bf16};
const char* mode_name(Mode m);  // "f32", "tf32", ...

// C = A B (row-major A [m,k], B [k,n]) by cublasGemmEx in `mode`; the values of A and B must be
// exact in the mode's storage format (f32, f16 or bf16), the result is C's storage format's value
// as a double. Throws std::runtime_error on a CUDA or cuBLAS error.
std::vector<double> gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                         size_t m, size_t k, size_t n);

// Exact conversions between doubles that are f16/bf16 values and their bit patterns.
unsigned short f16_bits(double v);
double f16_value(unsigned short bits);
unsigned short bf16_bits(double v);
double bf16_value(unsigned short bits);

}  // namespace stabfuzz::cublas
