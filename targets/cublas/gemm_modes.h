// The cuBLAS GEMM modes as host code, plain C++ built with or without CUDA: their names, the f16
// and bf16 bit conversions, the shape check, and an emulation of each mode's rounding with the
// error bound a result of the mode must meet (tests/gpu/gemm_modes_test.cc checks it on the CPU;
// tests/gpu/cublas_modes_test.cc and the GPU self-test hold cuBLAS to it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stabfuzz::cublas {

enum class Mode { f32, tf32, f16_f32acc, f16_f16acc, bf16 };
inline constexpr Mode kAllModes[] = {Mode::f32, Mode::tf32, Mode::f16_f32acc, Mode::f16_f16acc,
                                     Mode::bf16};
const char* mode_name(Mode m);  // "f32", "tf32", ...

// Exact conversions between doubles that are f16/bf16 values and their bit patterns.
unsigned short f16_bits(double v);
double f16_value(unsigned short bits);
unsigned short bf16_bits(double v);
double bf16_value(unsigned short bits);

// Throws std::invalid_argument unless A has m k values, B k n, m, k, n >= 1, and m, k, n fit the
// ints cublasGemmEx takes.
void check_gemm_shape(size_t a_size, size_t b_size, size_t m, size_t k, size_t n);

// How f32 operands become TF32 (1 + 10 fraction bits, f32's exponent range). NVIDIA's
// documentation does not say which rounding cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32 applies ("allows
// down-converting inputs to TF32"); PTX's conversion instruction cvt.rna.tf32.f32 rounds to
// nearest, ties away from zero, and a kernel that hands f32 bits to the tensor cores as they are
// truncates. The emulation has both; the GPU tests accept either.
enum class Tf32Rounding { nearest_away, truncate };
double to_tf32(double f32_value, Tf32Rounding r);

// C = A B (row-major A [m,k], B [k,n]) as `mode` computes it, up to the order and rounding of its
// accumulation: `value` is the exact sum of the products of the operands as the mode rounds them
// (TF32 for tf32; f16 products rounded to f16 for f16_f16acc; the operands as they are otherwise),
// `bound` what a result of the mode may differ from it by: gamma(2k) u_acc sum|a b| for the
// accumulation (u_acc one unit in the last place of the compute type, 2^-23 or 2^-10, so that any
// order, blocking and rounding direction, tensor cores' truncation included, stays inside), plus
// one unit in the last place of the output format at the result (its final rounding), plus the
// host's own rounding. Infinite when 2k u_acc >= 1 (no bound).
struct Emulated {
  std::vector<double> value, bound;
};
Emulated emulate_gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                      size_t m, size_t k, size_t n,
                      Tf32Rounding rounding = Tf32Rounding::nearest_away);

// Operands on which a mode's rounding shows, drawn from `seed` (the GPU checks' inputs;
// tests/gpu/gemm_modes_test.cc checks on the CPU that they separate the emulations):
// tf32_probe: f32 values in [1, 1.25) whose 13 bits below TF32's last place are 0.375 to 0.5 of
// it (below_half: nearest and truncation both round down, by the same amount) or 0.625 to 0.875
// (nearest rounds up, truncation down);
// half_probe: f16 (bf16 = false) or bf16 values in [1, 2), every fraction bit random.
std::vector<double> tf32_probe(size_t count, uint64_t seed, bool below_half);
std::vector<double> half_probe(size_t count, uint64_t seed, bool bf16);
// f16 accumulation probe: A = 1, B = kF16StagnationB with k = kF16StagnationK sums 2048 equal
// products to 2062 exactly. f16 partial sums (unit in the last place 1 from 1024, 2 from 2048)
// drop most of each 7 2^-10, whether the products are added one by one or in exact blocks of 16
// (tensor-core k-steps), rounded to nearest or truncated; f32 accumulation lands within one f16
// unit of 2062. (A pairwise tree of equal values is exact in f16: it would not show.)
inline constexpr double kF16StagnationB = 1 + 7.0 / 1024;
inline constexpr size_t kF16StagnationK = 2048;

}  // namespace stabfuzz::cublas
