// CESTAC runtime state: the per-thread random-rounding stream, configuration, instability log and
// the rounding mode of a run.
//
// Every Stoch operation draws random bits (its rounding directions) from a counter-based
// generator keyed by (seed, stream), so a run replays bit for bit from its seed and threads never
// share state. The inline fast path of each operation only calls into this file's noinline slow
// path when an instability occurs (or, for +, x and /, when its random bits need a refill); the
// slow path records the return address, which is symbolized to file:line at report time.
//
// Rounding mode: a run of the default Rounding::nearness computes in round to nearest (each
// operation's exact error decides its stochastic rounding). A run of Rounding::updown (CADNA's
// up-or-down rounding) switches the calling thread's SSE rounding (MXCSR) to round toward +inf,
// so that one vector instruction per operation rounds every sample up or, through -RU(-x), down.
// The mode is per thread and is restored when the Run ends (also by an exception); libm calls,
// the slow paths and the statistics run inside NearestScope, i.e. in round to nearest.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stabfuzz/gpu/cestac_core.h"

#if defined(__SSE2__)
#include <xmmintrin.h>
#else
#include <cfenv>
#endif

namespace stabfuzz::cestac {

// CADNA's taxonomy plus what deep-learning operators need.
enum class Kind : uint8_t {
  cancellation,             // at least `cancel_digits` exact digits lost in one + or -
  unstable_multiplication,  // both factors are computational zeros, neither an exact zero
  unstable_division,        // the divisor is a computational zero
  unstable_power,           // pow with a computational-zero base or exponent
  unstable_function,        // log/sqrt/... of a computational zero
  unstable_intrinsic,    // abs/floor/cast of a value whose samples disagree in sign or integer part
  unstable_branching,    // a comparison decided by rounding noise
  nonfinite_divergence,  // samples disagree on NaN/Inf
  overflow,              // finite operands, an infinite result (where a NaN/Inf was born)
  invalid_operation,     // non-NaN operands, a NaN result (inf/inf, inf - inf, 0/0, log(-1))
  underflow,             // f16/bf16: a nonzero result rounded to zero in some sample
  kCount
};
inline constexpr int kKindCount = static_cast<int>(Kind::kCount);
std::string_view kind_name(Kind k);

inline constexpr int kDefaultCancelDigits = 4;

struct Config {
  int cancel_digits =
      kDefaultCancelDigits;  // k: a +/- that loses at least this many digits is a cancellation
  bool detect = true;        // instability detection on (off only to measure its cost)
  // How samples are rounded; must match the Stoch type the run computes with
  // (Stoch<T, N, Rounding::updown> needs a run switched to round toward +inf).
  Rounding rounding = Rounding::nearness;
};

// Counter-based generator: bits = mix64(key + c * counter++), keyed by stream_key(seed, stream);
// the generator, the rounding patterns and how operations draw them are shared with the device
// engine (stabfuzz/gpu/cestac_core.h).

struct SiteCount {
  Kind kind;
  uintptr_t address;  // return address inside the operator code
  uint64_t count;
};

struct Log {
  std::array<uint64_t, kKindCount> counts{};
  std::vector<SiteCount> sites;  // one entry per (kind, address)
  uint64_t total() const;
  bool self_validation_failed() const {
    return counts[static_cast<int>(Kind::unstable_multiplication)] +
               counts[static_cast<int>(Kind::unstable_division)] +
               counts[static_cast<int>(Kind::unstable_power)] >
           0;
  }
};

// The per-thread state the inline fast path touches. Constant-initialized, so a thread_local
// access is a plain TLS load with no initialization guard.
struct HotState {
  uint64_t key = 0x5eed;
  uint64_t counter = 0;
  uint64_t word = 1;     // unused random bits below a sentinel 1 bit (1: none left)
  int cancel_bits = 14;  // exponent drop (bits) that sends a +/- to the cancellation check
  int cancel_digits = kDefaultCancelDigits;
  bool detect = true;
  // A +/- goes to the cancellation check when |result| < cancel_ratio max(|a|, |b|):
  // 2^-cancel_bits with detection on, 0 (never) with detection off.
  double cancel_ratio = 0x1p-14;
  // MXCSR inside an updown run (round toward +inf); 0 outside any run and in nearness runs.
  uint32_t run_mxcsr = 0;
  static constexpr uint64_t kFreshPatternWord = fresh_bits(0x5eed, 0);
  // Random bits of the rounding patterns of four-lane operations, below a sentinel 1 bit like
  // `word`, and never fewer than 3 between operations (take_pattern_index): the operations whose
  // fast path already branches to a slow path refill it there, not inline.
  // (A Run seeds it with word 0 of its stream: start_stream.)
  uint64_t pattern_word = kFreshPatternWord;
};
inline thread_local HotState hot{};

// The uniforms of the four-lane operations under Rounding::nearness (detail::take_uniforms), made
// kUniformBlock operations at a time by a four-lane xoshiro256+ generator (shifts, xors and adds
// on four 64-bit words, three operations' uniforms from each: about 8 vector instructions per
// operation, where a 64-bit hash per operation inline took 27), seeded from the run's stream key
// (Run), so a run replays bit for bit from its seed.
inline constexpr int kUniformBlock = 96;  // a multiple of 3
struct UniformPool {
  // 1 + u per lane, u = (k + 1/2) 2^-17 with k 17 random bits (detail::refill_uniforms).
  alignas(32) double d[kUniformBlock][4] = {};
  alignas(32) float f[kUniformBlock][4] = {};
  uint32_t next_d = kUniformBlock;  // next unused entry (kUniformBlock: none left)
  uint32_t next_f = kUniformBlock;
  // xoshiro256+ state, word k of lane i at state[k][i] (never all zero).
  alignas(32) uint64_t state[4][4] = {{mix64(1), mix64(2), mix64(3), mix64(4)},
                                      {mix64(5), mix64(6), mix64(7), mix64(8)},
                                      {mix64(9), mix64(10), mix64(11), mix64(12)},
                                      {mix64(13), mix64(14), mix64(15), mix64(16)}};
};
inline thread_local UniformPool uniform_pool{};
// Seeds the pool's generator from a stream key and empties the pool.
inline void seed_uniform_pool(UniformPool& p, uint64_t key) {
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 4; ++i)
      p.state[k][i] =
          stream_word(key ^ 0x7a1c3e5b9d2f4861ULL, static_cast<uint64_t>(4 * k + i + 1));
  p.next_d = p.next_f = kUniformBlock;
}

// ---- the thread's floating-point rounding mode --------------------------------------------------
inline constexpr uint32_t kMxcsrRoundingMask = 0x6000;  // RC bits: 00 nearest, 10 toward +inf
inline constexpr uint32_t kMxcsrRoundUp = 0x4000;
#if defined(__SSE2__)
__attribute__((always_inline)) inline uint32_t get_mxcsr() { return _mm_getcsr(); }
__attribute__((always_inline)) inline void set_mxcsr(uint32_t m) { _mm_setcsr(m); }
#else
// Other targets: the C rounding mode stands for MXCSR's rounding-control field.
inline uint32_t get_mxcsr() { return fegetround() == FE_UPWARD ? kMxcsrRoundUp : 0; }
inline void set_mxcsr(uint32_t m) {
  fesetround((m & kMxcsrRoundingMask) == kMxcsrRoundUp ? FE_UPWARD : FE_TONEAREST);
}
#endif

// Round to nearest for the scope's duration when a run has switched to round toward +inf: around
// every libm call, the slow paths and anything else that expects the default mode.
class NearestScope {
 public:
  __attribute__((always_inline)) NearestScope() : run_mxcsr_(hot.run_mxcsr) {
    if (run_mxcsr_) set_mxcsr(run_mxcsr_ & ~kMxcsrRoundingMask);
  }
  __attribute__((always_inline)) ~NearestScope() {
    if (run_mxcsr_) set_mxcsr(run_mxcsr_);
  }
  NearestScope(const NearestScope&) = delete;
  NearestScope& operator=(const NearestScope&) = delete;

 private:
  uint32_t run_mxcsr_;
};

// The calling thread's instability log (slow path only).
Log& thread_log();

// The draws of rounding directions from `hot` (random_bits, take_pattern_index,
// pattern_word_low, refill_pattern_word, take_pattern_index_refill, rounding_bits) are shared with
// the device engine: stabfuzz/gpu/cestac_core.h.

// Slow path: records one instability of `kind` at the caller's caller. Never inlined, so that
// __builtin_return_address(0) is an address inside the inlined operation, i.e. the operator code.
[[gnu::noinline]] void record(Kind kind);
[[gnu::noinline]] void record_at(Kind kind, uintptr_t address);

// RAII scope of one CESTAC run on this thread: keys the stream, resets the log, switches the
// thread to round toward +inf, restores the previous state and rounding mode on exit (runs nest
// and threads are independent). Stoch arithmetic is only meaningful inside a Run.
class Run {
 public:
  Run(uint64_t seed, uint64_t stream, Config config = {});
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  const Log& log() const { return thread_log(); }

 private:
  HotState saved_hot_;
  uint64_t saved_uniform_state_[4][4];
  Log saved_log_;
  uint32_t saved_mxcsr_;
};

// file:line of an address recorded by `record`, resolved through the binary's line tables, with
// the frames of the CESTAC headers themselves skipped ("?" when unknown).
std::string symbolize(uintptr_t address);

}  // namespace stabfuzz::cestac
