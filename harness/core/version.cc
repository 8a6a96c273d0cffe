// Build configuration string, from the definitions CMake passes in.
#include "stabfuzz/version.h"

#include <mpfr.h>
#include <sys/utsname.h>

#include <ctime>
#include <fstream>
#include <thread>

#include "harness/core/cuda_probe.h"

namespace stabfuzz {

std::string build_configuration() {
  std::string s;
#if defined(__clang__)
  s += "clang " __clang_version__;
#elif defined(__GNUC__)
  s += "gcc " __VERSION__;
#endif
  while (!s.empty() && s.back() == ' ') s.pop_back();  // __clang_version__ ends in a space
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

std::string machine_description() {
  std::string s;
  struct utsname u {};
  if (uname(&u) == 0) s += u.machine;
  s += (s.empty() ? "" : ", ") + std::to_string(std::thread::hardware_concurrency()) + " CPUs";
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && model.empty()) model = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  if (!model.empty()) s += ", " + model;
  if (!flags.empty()) {
    for (const char* f : {"avx2", "avx512f", "avx512_bf16"})
      s += std::string(", ") + f +
           (flags.find(std::string(" ") + f + " ") != std::string::npos ? " yes" : " no");
  }
  return s;
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace stabfuzz
