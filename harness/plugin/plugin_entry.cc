// A plugin's entry point: the table of its registered targets behind the one exported C symbol.
// The stabfuzz::plugin CMake package compiles this file (and the CESTAC runtime, monitor.cc) into
// every plugin, so a plugin links no stabfuzz library.
#include "stabfuzz/plugin.h"

extern "C" __attribute__((visibility("default"))) const stabfuzz_plugin* stabfuzz_plugin_v1(void) {
  static stabfuzz_plugin table;
  const auto& targets = stabfuzz::plugin::detail::registered();
  table.abi_version = STABFUZZ_PLUGIN_ABI_VERSION;
  table.target_size = sizeof(stabfuzz_target);
  table.kind_count = static_cast<uint32_t>(stabfuzz::cestac::kKindCount);
  table.n_targets = static_cast<uint32_t>(targets.size());
  table.targets = targets.data();
  return &table;
}
