// Byte decoder: libFuzzer's bytes -> one valid operator input, through the family's value regimes.
//
// Layout (every byte optional; missing bytes read as 0, so every byte string decodes):
//   [0]      dtype, among the allowed ones
//   [1]      value regime of the family
//   [2..9]   seed of the regime's Entropy stream: the regime draws shape, parameters and values
//   [10..]   edits, each 3 + w bytes (w: the dtype's width): op, value position (2 bytes), payload
//            (a raw bit pattern of the dtype, a power-of-two scale, a ULP step, a source position,
//            a special value). An edit that makes the value non-finite or the input invalid for
//            the family is dropped, so mutations of the tail move values without ever leaving
//            the operator's domain.
// The first bytes put libFuzzer on the regimes' extreme inputs; the tail lets it climb from
// there, value by value, toward where an implementation breaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::fuzz {

inline constexpr size_t kHeaderBytes = 10;
inline constexpr size_t kMaxEdits = 256;
// libFuzzer's -max_len for `stabfuzz fuzz` unless given: the header and up to ~45 f64 edits.
inline constexpr size_t kDefaultMaxLen = 512;

struct Decoded {
  Input input;
  size_t regime = 0;   // index into family.regimes
  bool valid = false;  // false: the regime's own sample failed validate (a harness bug)
  std::string reject;  // what validate said when !valid
  size_t edits_applied = 0, edits_dropped = 0;
};

// Where the values come from before the edits: the regime's sample, or (the baseline that shows
// what feedback alone can climb to) the regime's shapes and parameters with values uniform in
// [-1, 1], or [0, 1] when the family rejects negatives, as `inject --generator uniform`.
enum class Base { regimes, uniform };

// Deterministic: the same bytes give the same input. `dtypes` must not be empty.
Decoded decode(const Family& family, const std::vector<DType>& dtypes, const uint8_t* data,
               size_t size, Base base = Base::regimes);

// Bytes whose header selects (dtype index, regime, seed) and that carry no edits: a seed input.
std::vector<uint8_t> header_bytes(size_t dtype_index, size_t regime, uint64_t seed);

// The value a raw bit pattern of the dtype's width encodes (may be NaN or infinite).
double from_bits(DType d, uint64_t bits);

}  // namespace stabfuzz::fuzz
