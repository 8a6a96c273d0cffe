// InputError: a harness error caused by the user's input (flags, files, shapes): exit code 2.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stabfuzz {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Text from a user's file, safe to quote in an error line: bytes outside printable ASCII as \xNN,
// cut after `max` characters with "...".
inline std::string quoted_excerpt(std::string_view text, size_t max = 60) {
  std::string out;
  size_t shown = 0;
  for (const char c : text) {
    if (shown == max) return out + "...";
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
    }
    ++shown;
  }
  return out;
}

}  // namespace stabfuzz
