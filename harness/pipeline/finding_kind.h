// What a finding is (its kind), how severe, and the sets of kinds that fail a run (--fail-on): the
// vocabulary the verdict (verdict.h) decides in and the engines, corpus and reports speak.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stabfuzz {

enum class Severity { none, minor, major, critical };
std::string_view severity_name(Severity s);

// What a finding is, decided from the exact and computed values (docs/verdict.md, "Kinds"):
//  - accuracy: error beyond what the conditioning explains on a normal-range value;
//  - overflow: an infinite output where the exact result is finite;
//  - nan: a NaN output where the exact result is a number;
//  - underflow: every failing output is an exact result below the normal range returned below it
//    (flushed to zero or lost in the subnormal range), or the outputs are right for the input with
//    its subnormal values read as zero or as the smallest normal (FTZ/DAZ policies);
//  - nondeterminism: the same input gave different bits on repeated calls;
//  - crash, hang: an isolated target died or ran past its time limit on the input.
enum class FindingKind : uint8_t {
  accuracy,
  overflow,
  nan,
  underflow,
  nondeterminism,
  crash,
  hang
};
inline constexpr std::array<FindingKind, 7> kAllFindingKinds = {
    FindingKind::accuracy,       FindingKind::overflow, FindingKind::nan, FindingKind::underflow,
    FindingKind::nondeterminism, FindingKind::crash,    FindingKind::hang};
std::string_view finding_kind_name(FindingKind k);
std::optional<FindingKind> parse_finding_kind(std::string_view s);

// A set of finding kinds (--fail-on): the kinds whose findings make a run's exit code 1.
class KindSet {
 public:
  KindSet() = default;
  static KindSet all();
  // Every kind but underflow, a policy rather than a defect.
  static KindSet defaults();
  // "accuracy,nan", "all" or "none"; throws InputError naming an unknown kind.
  static KindSet parse(std::string_view list);
  bool has(FindingKind k) const { return (bits_ >> static_cast<int>(k)) & 1u; }
  void add(FindingKind k) { bits_ |= 1u << static_cast<int>(k); }
  std::string str() const;  // "accuracy,overflow,..." in kAllFindingKinds order; "none"

 private:
  unsigned bits_ = 0;
};

}  // namespace stabfuzz
