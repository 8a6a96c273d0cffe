// Fault mutants: a family's stable target run under an arithmetic fault plan, as injected targets.
#pragma once

#include "stabfuzz/family.h"

namespace stabfuzz::injectors {

// Appends the fault mutants meaningful for this family (ids `family/fault/<fault>`) to its
// targets. Each wraps the family's first reference target; families without one get none.
void attach_fault_mutants(Family& family);

}  // namespace stabfuzz::injectors
