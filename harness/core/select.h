// Target selectors: what `stabfuzz --target X`, `campaign --targets X` and `fuzz --target X` name.
//
//   all              every implementation
//   FAMILY           one family's implementations (softmax)
//   LIBRARY          one library's implementations (onednn, onednn3, blas, mkl, torch, cublas,
//                    plugin)
//   KIND             every implementation of a kind (reference, injected, library)
//   FAMILY/LIBRARY   one library's implementations of one family (softmax/torch)
//   FAMILY/KIND      one kind within one family (softmax/reference)
//   ID               one implementation (softmax/cpu/stable)
//
// Selectors are comma-separated where a list is accepted; the selection is their union, in
// registry order.
#pragma once

#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::select {

// The library a target calls, as selectors name it ("onednn", "torch", "plugin", ...); "" for
// stabfuzz's own implementations (references, planted bugs, GPU kernels).
std::string library_of(const Target& t);
// The same for a target this build knows but cannot run: its id's second part when that names a
// known library (family/<library>/name), else "".
std::string library_of(const UnavailableTarget& u);

// The libraries selectors know, in the order --list shows them, with what each is.
struct Library {
  std::string name;  // as a selector: onednn
  std::string what;  // for people: oneDNN (Intel's deep learning primitives)
};
const std::vector<Library>& known_libraries();

// One line naming every kind of selector, for errors and help.
std::string selector_kinds();

struct Picked {
  const Family* family = nullptr;
  const Target* target = nullptr;
};

struct Selection {
  std::vector<Picked> targets;                        // registry order, each once
  std::vector<const UnavailableTarget*> unavailable;  // selected, but unavailable here
  std::vector<std::string> families() const;          // of `targets`, registry order, each once
};

// The targets `selectors` (comma-separated) name. `flag` ("--target") names where they came from
// in errors. Throws InputError, one line, for an empty list, an unknown selector (the message
// names the selector kinds), or one that selects nothing runnable here (a library not built or
// not loaded: the message says why).
Selection select(const Registry& registry, const std::string& selectors, const std::string& flag);

}  // namespace stabfuzz::select
