// cuBLAS GEMM through cublasGemmEx, one call per math mode (f32, TF32, f16 with f32 or f16
// accumulation, bf16); row-major C = A B computed as column-major C^T = B^T A^T.
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

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::f32:
      return "f32";
    case Mode::tf32:
      return "tf32";
    case Mode::f16_f32acc:
      return "f16_f32acc";
    case Mode::f16_f16acc:
      return "f16_f16acc";
    case Mode::bf16:
      return "bf16";
  }
  return "?";
}

unsigned short f16_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(a)) return 0x7e00;
  if (a == 0) return sign;
  if (std::isinf(a) || a > 65504) return sign | 0x7c00;
  int e = 0;
  std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
  if (e - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal: a / 2^-24
  const auto mant = static_cast<uint16_t>(std::ldexp(a, 11 - e) - 1024);    // 10 fraction bits
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | mant;
}

double f16_value(unsigned short bits) {
  const double sign = (bits & 0x8000) ? -1 : 1;
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  if (e == 0x1f) return m ? NAN : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

unsigned short bf16_bits(double v) {
  const float f = static_cast<float>(v);  // exact: v is a bf16 value
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

double bf16_value(unsigned short bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<double> gemm(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                         size_t m, size_t k, size_t n) {
  if (a.size() != m * k || b.size() != k * n || m == 0 || n == 0 || k == 0)
    throw std::invalid_argument("gemm/cublas: A [m,k], B [k,n] with m, k, n >= 1");
  const Host ha = pack(mode, a), hb = pack(mode, b);
  const size_t c_bytes = m * n * (is_f32(mode) ? 4 : 2);
  Buffer da(ha.bytes()), db(hb.bytes()), dc(c_bytes);
  check(cudaMemcpy(da.p, ha.data(), ha.bytes(), cudaMemcpyHostToDevice), "copy A");
  check(cudaMemcpy(db.p, hb.data(), hb.bytes(), cudaMemcpyHostToDevice), "copy B");

  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (mode) {
    case Mode::f32:
      break;
    case Mode::tf32:
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case Mode::f16_f32acc:
      type = CUDA_R_16F;
      break;
    case Mode::f16_f16acc:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_16F;
      break;
    case Mode::bf16:
      type = CUDA_R_16BF;
      break;
  }
  // alpha = 1, beta = 0 in the compute type (f16 for CUBLAS_COMPUTE_16F).
  const float one = 1, zero = 0;
  const uint16_t one_h = 0x3c00, zero_h = 0;
  const void* alpha = compute == CUBLAS_COMPUTE_16F ? static_cast<const void*>(&one_h) : &one;
  const void* beta = compute == CUBLAS_COMPUTE_16F ? static_cast<const void*>(&zero_h) : &zero;
  const int im = static_cast<int>(m), ik = static_cast<int>(k), in = static_cast<int>(n);
  {
    std::lock_guard<std::mutex> lock(handle_mutex());
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
