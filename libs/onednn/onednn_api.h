// The interface between the oneDNN targets (libs/onednn/onednn.cc) and a oneDNN build: the one
// linked into stabfuzz (Debian's oneDNN 2), or a module compiled against another oneDNN and loaded
// at run time (libstabfuzz_onednn3.so, against ci/bootstrap --with-onednn3's oneDNN 3). Both are
// libs/onednn/onednn_calls.cc; the module shares only this header's plain types with stabfuzz.
#pragma once

#include <cstdint>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::libs {

inline constexpr int kOnednnModuleAbi = 1;

struct OnednnModule {
  int abi;                  // kOnednnModuleAbi of the build that made it
  int major, minor, patch;  // the oneDNN library's version, as it reports it (dnnl_version)
  // Runs primitive `name` (the part of a target id after "/onednn/": "softmax", "eltwise_exp",
  // "layer_normalization", ...) on the tensors `args`, whose values are exactly values of `dtype`,
  // on one thread. `scalar` is the primitive's one parameter where it has one (the normalizations'
  // eps, already rounded as the oracle rounds it). Returns the outputs as exact doubles; throws
  // std::runtime_error when oneDNN refuses (e.g. a dtype this CPU's oneDNN does not build).
  std::vector<double> (*run)(const char* name, DType dtype, const std::vector<Tensor>& args,
                             double scalar);
};

// The oneDNN linked into this build (defined where STABFUZZ_HAVE_ONEDNN).
const OnednnModule& linked_onednn();

}  // namespace stabfuzz::libs

// The module's one exported symbol.
extern "C" const stabfuzz::libs::OnednnModule* stabfuzz_onednn3_module();
