// Finding kinds, severities and --fail-on sets (finding_kind.h).
#include "harness/pipeline/finding_kind.h"

#include <algorithm>

#include "stabfuzz/errors.h"

namespace stabfuzz {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::none:
      return "none";
    case Severity::minor:
      return "minor";
    case Severity::major:
      return "major";
    case Severity::critical:
      return "critical";
  }
  return "?";
}

std::string_view finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::accuracy:
      return "accuracy";
    case FindingKind::overflow:
      return "overflow";
    case FindingKind::nan:
      return "nan";
    case FindingKind::underflow:
      return "underflow";
    case FindingKind::nondeterminism:
      return "nondeterminism";
    case FindingKind::crash:
      return "crash";
    case FindingKind::hang:
      return "hang";
  }
  return "?";
}

std::optional<FindingKind> parse_finding_kind(std::string_view s) {
  for (FindingKind k : kAllFindingKinds)
    if (finding_kind_name(k) == s) return k;
  return std::nullopt;
}

KindSet KindSet::all() {
  KindSet s;
  for (FindingKind k : kAllFindingKinds) s.add(k);
  return s;
}

KindSet KindSet::defaults() {
  KindSet s;
  for (FindingKind k : kAllFindingKinds)
    if (k != FindingKind::underflow) s.add(k);
  return s;
}

KindSet KindSet::parse(std::string_view list) {
  if (list == "all") return all();
  KindSet s;
  if (list == "none") return s;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    const auto k = parse_finding_kind(name);
    if (!k) {
      std::string known;
      for (FindingKind x : kAllFindingKinds)
        known += std::string(known.empty() ? "" : ", ") + std::string(finding_kind_name(x));
      throw InputError("unknown finding kind '" + std::string(name) + "' (kinds: " + known +
                       ", or all, none)");
    }
    s.add(*k);
    start = comma + 1;
  }
  return s;
}

std::string KindSet::str() const {
  std::string out;
  for (FindingKind k : kAllFindingKinds)
    if (has(k)) out += (out.empty() ? "" : ",") + std::string(finding_kind_name(k));
  return out.empty() ? "none" : out;
}

}  // namespace stabfuzz
