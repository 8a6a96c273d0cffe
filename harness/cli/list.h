// `stabfuzz --list`: the selectors (kinds, libraries, families) and every implementation.
#pragma once

#include <iosfwd>
#include <string>

#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::cli {

// Every line at most this many columns (UTF-8 characters), words wrapped onto indented lines.
constexpr size_t kListColumns = 100;

// The selectors, then per family its regimes and implementations (one line each: id, kind,
// dtypes, detectors, then the description, wrapped), then what is unavailable here and why.
void list_targets(const Registry& reg, std::ostream& os);

// The same as JSON (--list --json): families, targets, unavailable, libraries, build.
json::Value list_json(const Registry& reg);

// Columns `s` takes on a terminal: its UTF-8 characters.
size_t columns(const std::string& s);

// `head` then `text` word by word, lines broken before `width` columns; continuation lines start
// with `indent` spaces. Ends with a newline.
void wrap(std::ostream& os, const std::string& head, const std::string& text, size_t indent,
          size_t width = kListColumns);

}  // namespace stabfuzz::cli
