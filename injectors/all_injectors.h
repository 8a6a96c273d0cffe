// The one place where planted unstable formulations join their families.
#pragma once

#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::injectors {

// Every injected target of the groups below (softmax's own rows are attached by its family).
std::vector<Target> all_mutants();

// Appends each mutant to the family its id names (family/injected/name). A mutant whose family is
// not in `families` throws std::logic_error: a registry bug, caught when the registry is built.
void attach_injectors(std::vector<Family>& families);

}  // namespace stabfuzz::injectors
