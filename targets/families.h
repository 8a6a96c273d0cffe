// Declarations of every family definition; joined in all_families.cc.
#pragma once

#include "stabfuzz/family.h"

namespace stabfuzz::targets {

Family softmax_family();

}  // namespace stabfuzz::targets
