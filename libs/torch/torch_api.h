// The interface between stabfuzz and its libtorch module (libstabfuzz_torch.so), loaded on first
// use.
#pragma once

#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::libs {

inline constexpr int kTorchModuleAbi = 1;

struct TorchModule {
  int abi;              // kTorchModuleAbi of the build that made the module
  const char* version;  // libtorch's version
  // Runs target `id` on `in`, whose parameters are already what the oracle evaluates with (eps
  // rounded to the dtype, scale to the compute type, every default spelled out). Returns the
  // outputs as exact doubles; throws std::exception on a library error.
  std::vector<double> (*run)(const std::string& id, const Input& in);
};

}  // namespace stabfuzz::libs

// The module's one exported symbol.
extern "C" const stabfuzz::libs::TorchModule* stabfuzz_torch_module();
