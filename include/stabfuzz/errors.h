// InputError: a harness error caused by the user's input (flags, files, shapes): exit code 2.
#pragma once

#include <stdexcept>

namespace stabfuzz {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace stabfuzz
