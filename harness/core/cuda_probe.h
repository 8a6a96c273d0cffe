// Whether a CUDA device is usable at run time (CUDA builds only).
#pragma once

#include <string>

namespace stabfuzz {

// Number of usable CUDA devices; 0 with the reason in `why` when none (no driver, no GPU) or when
// this binary was built without CUDA.
int cuda_device_count(std::string* why);

}  // namespace stabfuzz
