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
  // The rewrite for a finding in f32 or f64 data, where "compute it in f32" is no remedy; "" when
  // `stable` holds for every dtype.
  std::string stable_wide = {};
  bool low_precision_only = false;  // a pattern of f16/bf16 data only (an eps that rounds to 0)
};

const std::vector<KnownPattern>& known_patterns();

// The first pattern that matches a finding in `dtype` ("" for any), or nullptr.
const KnownPattern* match_pattern(std::string_view family, const std::vector<std::string>& kinds,
                                  bool nonfinite, std::string_view dtype = "");

// What a report suggests for one finding: an injected target's own stable rewrite, else the
// catalog row its family and instability kinds match; empty `fix` when neither applies.
struct Suggestion {
  std::string fix;
  std::string source;  // "planted bug's stable rewrite" or "known pattern: <unstable> (<seen in>)"
};
Suggestion suggest(const Finding& f);

}  // namespace stabfuzz::reports
