// cuBLAS GEMM through cublasGemmEx, one call per math mode (f32, TF32, f16 with f32 or f16
// accumulation, bf16); row-major C = A B computed as column-major C^T = B^T A^T. The modes' host
// logic (names, f16/bf16 bits, shape check, emulation) is in gemm_modes.cc.
#include "targets/cublas/gemm_cublas.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace stabfuzz::cublas {
namespace {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(err));
}
void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(st));
}

// One handle for the process (creating one costs milliseconds); calls are serialized.
cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    check(cublasCreate(&x), "cublasCreate");
    return x;
  }();
  return h;
}
std::mutex& handle_mutex() {
  static std::mutex m;
  return m;
}

struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) {
    if (bytes) check(cudaMalloc(&p, bytes), "cudaMalloc");
  }
  ~Buffer() {
    if (p) cudaFree(p);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// Storage of one matrix in the mode's format (f32 as floats, f16/bf16 as bit patterns).
struct Host {
  std::vector<float> f;
  std::vector<uint16_t> h;
  const void* data() const { return f.empty() ? static_cast<const void*>(h.data()) : f.data(); }
  size_t bytes() const { return f.size() * 4 + h.size() * 2; }
};

bool is_f32(Mode m) { return m == Mode::f32 || m == Mode::tf32; }

Host pack(Mode mode, const std::vector<double>& v) {
  Host out;
  if (is_f32(mode)) {
    out.f.assign(v.begin(), v.end());
  } else {
    out.h.reserve(v.size());
    for (double x : v) out.h.push_back(mode == Mode::bf16 ? bf16_bits(x) : f16_bits(x));
  }
  return out;
}

}  // namespace

std::vector<double> gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                         size_t m, size_t k, size_t n) {
  check_gemm_shape(a.size(), b.size(), m, k, n);
  const Host ha = pack(mode, a), hb = pack(mode, b);
  const size_t c_bytes = m * n * (is_f32(mode) ? 4 : 2);
  Buffer da(ha.bytes()), db(hb.bytes()), dc(c_bytes);
  check(cudaMemcpy(da.p, ha.data(), ha.bytes(), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(db.p, hb.data(), hb.bytes(), cudaMemcpyHostToDevice), "copy B");

  // The compute type and math mode that make each mode compute what its name says:
  //  f32: CUBLAS_COMPUTE_32F in the default math mode (at least f32 internally, no TF32);
  //  tf32: CUBLAS_COMPUTE_32F_FAST_TF32 with CUBLAS_TF32_TENSOR_OP_MATH (TF32 allowed: used on
  //    the tensor cores for the shapes cuBLAS runs there, not necessarily for tiny ones);
  //  f16_f32acc, bf16: CUBLAS_COMPUTE_32F with CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
  //    so that split-k reductions too stay in f32 rather than in the 16-bit output type;
  //  f16_f16acc: CUBLAS_COMPUTE_16F_PEDANTIC, the documented f16 internal storage (the default
  //    CUBLAS_COMPUTE_16F promises only at least f16).
  // The handle is shared: the math mode is set on every call, under the handle's mutex.
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  int math = CUBLAS_DEFAULT_MATH;
  switch (mode) {
    case Mode::f32:
      break;
    case Mode::tf32:
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      math = CUBLAS_TF32_TENSOR_OP_MATH;
      break;
    case Mode::f16_f32acc:
      type = CUDA_R_16F;
      math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
      break;
    case Mode::f16_f16acc:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_16F_PEDANTIC;
      break;
    case Mode::bf16:
      type = CUDA_R_16BF;
      math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
      break;
  }
  // alpha = 1, beta = 0 in the compute type (f16 for CUBLAS_COMPUTE_16F_PEDANTIC).
  const float one = 1, zero = 0;
  const uint16_t one_h = 0x3c00, zero_h = 0;
  const bool half = compute == CUBLAS_COMPUTE_16F_PEDANTIC;
  const void* alpha = half ? static_cast<const void*>(&one_h) : &one;
  const void* beta = half ? static_cast<const void*>(&zero_h) : &zero;
  const int im = static_cast<int>(m), ik = static_cast<int>(k), in = static_cast<int>(n);
  {
    std::lock_guard<std::mutex> lock(handle_mutex());
    check(cublasSetMathMode(handle(), static_cast<cublasMath_t>(math)), "cublasSetMathMode");
    // Column-major C^T [n,m] = B^T [n,k] A^T [k,m]: the row-major buffers as they are.
    check(cublasGemmEx(handle(), CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, alpha, db.p, type, in, da.p,
                       type, ik, beta, dc.p, type, in, compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    check(cudaDeviceSynchronize(), "gemm");
  }
  std::vector<double> out(m * n);
  if (is_f32(mode)) {
    std::vector<float> c(m * n);
    check(cudaMemcpy(c.data(), dc.p, c_bytes, cudaMemcpyDeviceToHost), "copy C");
    for (size_t i = 0; i < c.size(); ++i) out[i] = c[i];
  } else {
    std::vector<uint16_t> c(m * n);
    check(cudaMemcpy(c.data(), dc.p, c_bytes, cudaMemcpyDeviceToHost), "copy C");
    for (size_t i = 0; i < c.size(); ++i)
      out[i] = mode == Mode::bf16 ? bf16_value(c[i]) : f16_value(c[i]);
  }
  return out;
}

}  // namespace stabfuzz::cublas
