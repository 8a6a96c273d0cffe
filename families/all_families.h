// Declarations of every family definition; joined in harness/core/default_registry.cc.
#pragma once

#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::families {

Family softmax_family();
// Family groups, one file each (targets/<group>.cc, oracles/<group>.cc, targets/cpu/<group>.h).
std::vector<Family> elementwise_families();    // exp, log, sigmoid, gelu, ...
std::vector<Family> reductions_families();     // sum, mean, var, logsumexp, cumsum, ...
std::vector<Family> normalization_families();  // log_softmax, cross_entropy, layer/rms/batch norm
std::vector<Family> linalg_families();         // dot, gemm, attention
std::vector<Family> losses_families();         // bce_with_logits, kl_div, entropy
std::vector<Family> similarity_families();     // cosine_similarity, pairwise_distance
std::vector<Family> optimizer_families();      // adam

}  // namespace stabfuzz::families
