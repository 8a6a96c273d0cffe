// Scaffolding: the elementwise family group (being written).
#include "targets/families.h"

namespace stabfuzz::targets {

std::vector<Family> elementwise_families() { return {}; }

}  // namespace stabfuzz::targets
