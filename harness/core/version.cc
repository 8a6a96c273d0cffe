// Build configuration string, from the definitions CMake passes in.
#include "stabfuzz/version.h"

#include <mpfr.h>

#include "harness/core/cuda_probe.h"

namespace stabfuzz {

std::string build_configuration() {
  std::string s;
#if defined(__clang__)
  s += "clang " __clang_version__;
#elif defined(__GNUC__)
  s += "gcc " __VERSION__;
#endif
#ifdef STABFUZZ_HAVE_LIBFUZZER
  s += ", libfuzzer on";
#else
  s += ", libfuzzer off";
#endif
#ifdef STABFUZZ_HAVE_CUDA
  std::string why;
  const int gpus = cuda_device_count(&why);
  s += ", cuda compiled (" + (gpus > 0 ? std::to_string(gpus) + " GPU)" : "no GPU: " + why + ")");
#else
  s += ", cuda off";
#endif
  s += std::string(", mpfr ") + mpfr_get_version();
  // Kernel libraries compiled in as targets (cmake/libraries.cmake).
#ifdef STABFUZZ_HAVE_ONEDNN
  s += ", onednn on";
#else
  s += ", onednn off";
#endif
#ifdef STABFUZZ_HAVE_BLAS
  s += ", cblas on";
#else
  s += ", cblas off";
#endif
#ifdef STABFUZZ_HAVE_TORCH
  s += ", libtorch on";
#else
  s += ", libtorch off";
#endif
  return s;
}

}  // namespace stabfuzz
