// Scaffolding: the reductions family group (being written).
#include "targets/families.h"

namespace stabfuzz::targets {

std::vector<Family> reductions_families() { return {}; }

}  // namespace stabfuzz::targets
