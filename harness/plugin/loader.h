// Loading plugin shared libraries: `stabfuzz --plugin lib.so` adds their targets to the registry.
#pragma once

#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::plugin {

// dlopens `path`, reads its stabfuzz_plugin_v1 table (stabfuzz/plugin_abi.h) and adds each target
// to `registry` as a library target run isolated, under its family. A library that does not load,
// lacks the entry symbol, speaks another ABI version, or declares an unknown family, a malformed
// id, a bad dtype mask or a signature the family does not have throws InputError with one line.
// Returns the ids added. Call before any run reads the registry.
std::vector<std::string> load(Registry& registry, const std::string& path);

}  // namespace stabfuzz::plugin
