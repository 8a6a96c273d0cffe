// Scaffolding: the normalization family group (being written).
#include "targets/families.h"

namespace stabfuzz::targets {

std::vector<Family> normalization_families() { return {}; }

}  // namespace stabfuzz::targets
