// Entropy helpers: uniform, ranges, normal and log-uniform draws from 64-bit words.
#include "stabfuzz/entropy.h"

#include <cmath>

#include "stabfuzz/cestac.h"

namespace stabfuzz {

double Entropy::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Entropy::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

uint64_t Entropy::below(uint64_t n) {
  // Multiply-shift: unbiased enough for generation (bias < n / 2^64).
  return static_cast<uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
}

int64_t Entropy::range(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
}

bool Entropy::chance(double p) { return uniform() < p; }

double Entropy::normal() {
  // Box-Muller; u1 in (0, 1] so that log(u1) is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double Entropy::log_uniform(double lo, double hi) {
  return std::exp(uniform(std::log(lo), std::log(hi)));
}

uint64_t SeededEntropy::next_u64() {
  return cestac::mix64(key_ + 0x632be59bd9b4e019ULL * ++counter_);
}

}  // namespace stabfuzz
