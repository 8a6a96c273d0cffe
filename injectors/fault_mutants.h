// Fault mutants: a family's stable target run under an arithmetic fault plan, as injected targets.
#pragma once

#include "stabfuzz/family.h"

namespace stabfuzz::injectors {

// Appends the fault mutants meaningful for this family (ids `family/fault/<fault>`) to its
// targets. Each wraps the family's first reference target; families without one get none.
void attach_fault_mutants(Family& family);

// Every arithmetic fault planted in the family's first reference target, unscreened: the fault
// matrix `stabfuzz inject --faults all` measures (the registry carries only the pairs in
// fault_mutants.cc's table, chosen on seed 1). Ids as attach_fault_mutants's; empty without a
// reference target. eps_removed only where the family has an `eps` parameter.
std::vector<Target> fault_matrix(const Family& family);

// Whether `id` (family/fault/<fault>) is one of the registry's fault mutants.
bool registered_fault_mutant(const std::string& id);

}  // namespace stabfuzz::injectors
