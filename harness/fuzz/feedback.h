// Error-guided feedback: libFuzzer extra counters that reward inputs reaching larger errors.
//
// Besides code coverage, libFuzzer takes a feature from every non-zero byte of the section
// `__libfuzzer_extra_counters`. One cell per (dtype, regime, bucket of log2(error / tolerance)),
// per (dtype, regime, bucket of digits lost under CESTAC) and per hashed (instability kind, site,
// order of magnitude of its count). The cells are cumulative: an input sets every bucket up to its
// own, so libFuzzer keeps it only when it goes past the largest error, deficit or count reached so
// far, and the corpus climbs toward the failing region.
// Cell 0 is touched by every execution (libFuzzer stops with "no interesting inputs" otherwise);
// with feedback off (coverage only) it is the only one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/pipeline/verdict.h"

namespace stabfuzz::fuzz {

enum class Feedback { error, coverage };

inline constexpr size_t kRatioBuckets = 82;  // log2(ratio) in [-40, 40), non-finite, undecidable
inline constexpr size_t kDigitBuckets = 64;  // digits lost in half-digit steps, from -8
inline constexpr size_t kRegimeSlots = 16;
inline constexpr size_t kSiteCells = 4096;

// The bucket of an error/tolerance ratio (0 for 0, kRatioBuckets-2 non-finite output,
// kRatioBuckets-1 undecidable): what a test checks, and what the counters index.
size_t ratio_bucket(const Verdict& v);
// The bucket of CESTAC's digit deficit (expected - margin - digits; > 0 fired).
size_t digits_bucket(const Verdict& v);

// Clears every cell, then touches cell 0. Called once per execution, before record().
void begin_execution();
// Sets the cells of one verdict (feedback error only).
void record(Feedback mode, const Verdict& v, DType d, size_t regime);
// Non-zero cells now (for tests and the progress line).
size_t cells_set();

}  // namespace stabfuzz::fuzz
