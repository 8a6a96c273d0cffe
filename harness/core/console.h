// Console text in at most 100 columns: the tables, the progress output and --list.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

namespace stabfuzz {

// The widest line stabfuzz prints on the console, in columns.
constexpr size_t kConsoleColumns = 100;

// Columns `s` takes on a terminal: its UTF-8 characters.
size_t columns(const std::string& s);

// `head` then `text` word by word, lines broken before `width` columns; continuation lines start
// with `indent` spaces. Ends with a newline.
void wrap(std::ostream& os, const std::string& head, const std::string& text, size_t indent,
          size_t width = kConsoleColumns);

}  // namespace stabfuzz
