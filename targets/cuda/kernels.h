// Host API of the CUDA reference kernels (targets/cuda/kernels.cu): plain C++17, so that clang
// code (the targets, the self-test) calls them without CUDA headers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stabfuzz::cuda {

enum class Kernel { softmax, log_softmax, layer_norm, rms_norm, sum, var, gemm, attention };
inline constexpr Kernel kAllKernels[] = {Kernel::softmax,  Kernel::log_softmax, Kernel::layer_norm,
                                         Kernel::rms_norm, Kernel::sum,         Kernel::var,
                                         Kernel::gemm,     Kernel::attention};
const char* kernel_name(Kernel k);  // the family name: "softmax", "layer_norm", ...

// One operator call as plain arrays. Row kernels take `rows` rows of x[0].size() / rows values
// (one block each; the families pass one row); gemm takes A [m,k], B [k,n]; attention Q [s,d],
// K [t,d], V [t,dv].
struct Problem {
  std::vector<std::vector<double>> x;
  size_t rows = 1;
  size_t m = 0, k = 0, n = 0;          // gemm
  size_t s = 0, t = 0, d = 0, dv = 0;  // attention
  double eps = 0;                      // layer_norm, rms_norm
  double unbiased = 1;                 // var: 0 or 1
  double scale = 1;                    // attention
  bool causal = false;                 // attention
};

// Samples per output of the device CESTAC run (DStoch<T, kLanes>): four, like the CPU engine's
// Stoch<T, 3> vector, so the digit estimator and its kappa are the same.
inline constexpr int kLanes = 4;

struct DeviceCestac {
  std::vector<double> samples;        // kLanes per output, output-major
  std::array<uint64_t, 10> counts{};  // threads that met each instability kind (cestac::Kind order)
  uint64_t threads = 0;
};

// Runs a kernel natively in float (f64 = false) or double. Throws std::runtime_error on a CUDA
// error and std::invalid_argument on a shape the kernel cannot take.
std::vector<double> run_native(Kernel k, const Problem& p, bool f64);
// Runs the same kernel under DStoch<float|double, kLanes>, rounding directions keyed by
// (seed, stream): the same arguments replay the same samples.
DeviceCestac run_cestac(Kernel k, const Problem& p, bool f64, uint64_t seed, uint64_t stream,
                        int cancel_digits, bool detect);

// Median milliseconds (CUDA events) of `reps` launches of a kernel on p, native and under DStoch
// (detection on), after one warm-up launch each.
struct KernelTiming {
  double native_ms = 0, cestac_ms = 0;
};
KernelTiming time_kernel(Kernel k, const Problem& p, bool f64, int reps);

// Number of usable devices and why there is none ("" when there is one).
int device_count(std::string* why);

}  // namespace stabfuzz::cuda
