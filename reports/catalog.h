// Known unstable formulations, keyed by family and instability kinds: the fix a report suggests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reports/run_data.h"

namespace stabfuzz::reports {

// One row of the catalog: the unstable form, its stable rewrite, where it fails, and
// where it was seen. A finding matches when its family is listed and, for rows with kinds, CESTAC
// reported one of those instability kinds (or, for rows that allow it, the output was non-finite).
struct KnownPattern {
  std::vector<std::string> families;
  std::vector<std::string> kinds;  // empty: any finding of the family
  bool nonfinite = false;          // a non-finite output also matches
  std::string unstable;
  std::string stable;
  std::string fails_where;
  std::string seen_in;
};

const std::vector<KnownPattern>& known_patterns();

// The first pattern that matches, or nullptr.
const KnownPattern* match_pattern(std::string_view family, const std::vector<std::string>& kinds,
                                  bool nonfinite);

// What a report suggests for one finding: an injected target's own stable rewrite, else the
// catalog row its family and instability kinds match; empty `fix` when neither applies.
struct Suggestion {
  std::string fix;
  std::string source;  // "planted bug's stable rewrite" or "known pattern: <unstable> (<seen in>)"
};
Suggestion suggest(const Finding& f);

}  // namespace stabfuzz::reports
