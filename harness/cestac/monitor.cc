// The instability log: per-thread counts by kind and by (kind, site), and CESTAC run scopes.
#include <cmath>
#include <cstring>

#include "stabfuzz/cestac.h"

namespace stabfuzz::cestac {

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::cancellation:
      return "cancellation";
    case Kind::unstable_multiplication:
      return "unstable_multiplication";
    case Kind::unstable_division:
      return "unstable_division";
    case Kind::unstable_power:
      return "unstable_power";
    case Kind::unstable_function:
      return "unstable_function";
    case Kind::unstable_intrinsic:
      return "unstable_intrinsic";
    case Kind::unstable_branching:
      return "unstable_branching";
    case Kind::nonfinite_divergence:
      return "nonfinite_divergence";
    case Kind::overflow:
      return "overflow";
    case Kind::invalid_operation:
      return "invalid_operation";
    case Kind::underflow:
      return "underflow";
    case Kind::kCount:
      break;
  }
  return "?";
}

uint64_t Log::total() const {
  uint64_t t = 0;
  for (auto c : counts) t += c;
  return t;
}

Log& thread_log() {
  static thread_local Log log;
  return log;
}

void record_at(Kind kind, uintptr_t address) {
  Log& log = thread_log();
  ++log.counts[static_cast<int>(kind)];
  // Few distinct sites per run: a linear scan beats a hash map here.
  for (auto& s : log.sites) {
    if (s.kind == kind && s.address == address) {
      ++s.count;
      return;
    }
  }
  log.sites.push_back({kind, address, 1});
}

void record(Kind kind) {
  record_at(kind, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

Run::Run(uint64_t seed, uint64_t stream, Config config)
    : saved_hot_(hot), saved_log_(std::move(thread_log())), saved_mxcsr_(get_mxcsr()) {
  hot = HotState{};
  // The pattern word takes word 0 of the stream, random_bits words 1, 2, ... (cestac_core.h).
  start_stream(hot, stream_key(seed, stream));
  std::memcpy(saved_uniform_state_, uniform_pool.state, sizeof saved_uniform_state_);
  seed_uniform_pool(uniform_pool, hot.key);
  hot.detect = config.detect;
  hot.cancel_digits = config.cancel_digits;
  hot.cancel_bits = cancel_bits_for(config.cancel_digits);
  hot.cancel_ratio = config.detect ? std::ldexp(1.0, -hot.cancel_bits) : 0.0;
  thread_log() = Log{};
  if (config.rounding == Rounding::updown) {
    hot.run_mxcsr = (saved_mxcsr_ & ~kMxcsrRoundingMask) | kMxcsrRoundUp;
    set_mxcsr(hot.run_mxcsr);
  } else {
    set_mxcsr(saved_mxcsr_ & ~kMxcsrRoundingMask);  // round to nearest, whatever the caller's mode
  }
}

Run::~Run() {
  set_mxcsr(saved_mxcsr_);
  hot = saved_hot_;
  // The enclosing run goes on from its generator's state with a fresh block.
  std::memcpy(uniform_pool.state, saved_uniform_state_, sizeof saved_uniform_state_);
  uniform_pool.next_d = uniform_pool.next_f = kUniformBlock;
  thread_log() = std::move(saved_log_);
}

}  // namespace stabfuzz::cestac
