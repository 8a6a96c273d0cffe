// Declarations of every family definition; joined in all_families.cc.
#pragma once

#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::targets {

Family softmax_family();
// Family groups, one file each (targets/<group>.cc, oracles/<group>.cc, targets/cpu/<group>.h).
std::vector<Family> elementwise_families();    // exp, log, sigmoid, gelu, ...
std::vector<Family> reductions_families();     // sum, mean, var, logsumexp, cumsum, ...
std::vector<Family> normalization_families();  // log_softmax, layer_norm, losses, ...
std::vector<Family> linalg_families();         // dot, gemm, attention, similarity, adam

}  // namespace stabfuzz::targets
