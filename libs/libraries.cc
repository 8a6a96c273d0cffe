// Registration of the kernel libraries found at build time; the missing ones are listed with why.
#include "libs/libraries.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

// AddressSanitizer (clang's __has_feature, GCC's __SANITIZE_ADDRESS__; GCC 12 has no
// __has_feature).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STABFUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(STABFUZZ_ASAN)
#define STABFUZZ_ASAN 1
#endif
// Defined when the process runs AddressSanitizer's runtime, also where this file was compiled
// without it (the self-fuzz targets link it uninstrumented: cmake/selffuzz.cmake).
extern "C" void __asan_init() __attribute__((weak));

namespace stabfuzz::libs {
namespace {

[[maybe_unused]] void unavailable(Registry& r, const std::vector<LibraryTarget>& catalog,
                                  const std::string& reason) {
  for (const auto& t : catalog) r.add_unavailable({t.id, reason});
}

}  // namespace

bool asan_running() {
#ifdef STABFUZZ_ASAN
  return true;
#else
  return __asan_init != nullptr;
#endif
}

std::string module_path(const char* env, const char* file) {
  if (const char* p = std::getenv(env); p && *p) return p;
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string dir = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  const std::string here = dir + file;
  if (access(here.c_str(), R_OK) == 0 || dir.size() < 2) return here;
  const std::string parent = dir.substr(0, dir.find_last_of('/', dir.size() - 2) + 1);
  const std::string up = parent + file;
  return access(up.c_str(), R_OK) == 0 ? up : here;
}

void register_libraries(Registry& r) {
#ifdef STABFUZZ_HAVE_ONEDNN
  register_onednn(r);
#else
  unavailable(r, onednn_catalog(), "built without oneDNN: ci/bootstrap installs libdnnl-dev");
  unavailable(r, onednn3_catalog(), "built without oneDNN: ci/bootstrap installs libdnnl-dev");
#endif
#ifdef STABFUZZ_HAVE_BLAS
  register_blas(r);
#else
  unavailable(r, blas_catalog(), "built without a CBLAS: ci/bootstrap installs libopenblas-dev");
  unavailable(r, mkl_catalog(), "built without a CBLAS: ci/bootstrap installs libopenblas-dev");
#endif
#ifdef STABFUZZ_HAVE_TORCH
  register_torch(r);
#else
  unavailable(r, torch_catalog(), "built without libtorch: ci/bootstrap --with-torch");
#endif
}

}  // namespace stabfuzz::libs
