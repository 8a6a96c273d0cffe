// `stabfuzz --list`: the selectors (kinds, libraries, families) and every implementation.
#pragma once

#include <iosfwd>
#include <string>

#include "harness/core/console.h"
#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::cli {

// Every line at most this many columns (UTF-8 characters), words wrapped onto indented lines.
constexpr size_t kListColumns = kConsoleColumns;

// The selectors, then per family its regimes and implementations (one line each: id, kind,
// dtypes, detectors, then the description, wrapped), then what is unavailable here and why.
void list_targets(const Registry& reg, std::ostream& os);

// The same as JSON (--list --json): families, targets, unavailable, libraries, build.
json::Value list_json(const Registry& reg);

}  // namespace stabfuzz::cli
