// Scaffolding: the linalg family group (being written).
#include "targets/families.h"

namespace stabfuzz::targets {

std::vector<Family> linalg_families() { return {}; }

}  // namespace stabfuzz::targets
