// Console text in at most 100 columns (harness/core/console.h).
#include "harness/core/console.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace stabfuzz {

size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void wrap(std::ostream& os, const std::string& head, const std::string& text, size_t indent,
          size_t width) {
  std::string line = head;
  size_t used = columns(head);
  bool first = true;  // the first word goes on the head's line, however long
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const size_t c = columns(word);
    if (!first && used + 1 + c > width) {
      os << line << "\n";
      line = std::string(indent, ' ') + word;
      used = indent + c;
    } else {
      const bool space = !first || (!line.empty() && line.back() != ' ');
      line += (space ? " " : "") + word;
      used += c + (space ? 1 : 0);
    }
    first = false;
  }
  os << line << "\n";
}

}  // namespace stabfuzz
