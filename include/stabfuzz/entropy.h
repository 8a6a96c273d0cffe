// Entropy: the one source of randomness a value regime draws from, so that the same regime
// definition serves RapidCheck (rc::Random) and, later, libFuzzer (bytes).
#pragma once

#include <cstdint>
#include <string_view>

namespace stabfuzz {

// FNV-1a of a string: the stable hash that seeds, random streams and shard plans derive from.
inline uint64_t hash_str(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

class Entropy {
 public:
  virtual ~Entropy() = default;
  virtual uint64_t next_u64() = 0;

  double uniform();                       // [0, 1)
  double uniform(double lo, double hi);   // [lo, hi)
  uint64_t below(uint64_t n);             // [0, n), n > 0
  int64_t range(int64_t lo, int64_t hi);  // [lo, hi]
  bool chance(double p);
  double normal();                           // N(0, 1)
  double log_uniform(double lo, double hi);  // 0 < lo < hi: uniform in log scale
};

// Entropy from a counter-based stream (seed, stream): used by tests and replays.
class SeededEntropy final : public Entropy {
 public:
  SeededEntropy(uint64_t seed, uint64_t stream) : key_(seed * 0x9e3779b97f4a7c15ULL ^ stream) {}
  uint64_t next_u64() override;

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

}  // namespace stabfuzz
