// Real kernel libraries (oneDNN, a CBLAS, libtorch) as black-box targets of the existing families.
#pragma once

#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::libs {

// Registers every library compiled into this build as targets `family/<library>/<name>` (kind
// library, native only) and lists the others, and any target a library cannot run on this CPU,
// as unavailable with the reason. Called once, from families/all_families.cc.
void register_libraries(Registry& registry);

// One library target: the family it implements and its id (`family/<library>/<name>`).
struct LibraryTarget {
  std::string family;
  std::string id;
};

// Per library, every target it provides when compiled in (the same list names them when it is
// not). Each library file registers exactly these.
std::vector<LibraryTarget> onednn_catalog();
std::vector<LibraryTarget> onednn3_catalog();  // oneDNN 3, loaded at run time (libs/onednn/)
std::vector<LibraryTarget> blas_catalog();
std::vector<LibraryTarget> mkl_catalog();  // Intel MKL's CBLAS, loaded at run time (libs/blas/)
std::vector<LibraryTarget> torch_catalog();

// Whether AddressSanitizer runs in this process: it does not support dlopen's RTLD_DEEPBIND, which
// loading a second build of a library beside the linked one (Intel MKL, oneDNN 3) needs.
bool asan_running();

// Where stabfuzz's module `file` (libstabfuzz_torch.so, libstabfuzz_onednn3.so) lies: the
// environment variable `env` when set, else next to the running binary (build/bin, or the
// install's bin), or one level up for the standalone fuzz targets in build/bin/fuzz.
std::string module_path(const char* env, const char* file);

// Implemented in libs/<library>/ when the library is found (cmake/libraries.cmake).
void register_onednn(Registry& registry);
// The CBLAS linked at build time, and Intel MKL's when its library is found at run time.
void register_blas(Registry& registry);
void register_torch(Registry& registry);

}  // namespace stabfuzz::libs
