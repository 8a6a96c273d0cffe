// Fault plan: which arithmetic fault is active on this thread, and where it struck.
//
// A fault mutant runs its family's stable operator instantiated on the injectors' types
// (injectors/faultable.h: the scalar Faulty<T>, the summation policy SequentialSums) with a plan in
// scope; those types, and nothing in the operator, read the plan. It is thread-local, so runs on
// other threads (and everything outside the plan's scope) compute exactly what they would without
// it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stabfuzz::fault {

enum class Kind : uint8_t {
  one_op_low_precision,  // one dynamic + - x / site computed in f32 (double data) / bf16 (float)
  add_bf16,              // every + and - rounded to bf16: bf16 accumulation
  add_f16,               // every + and - rounded to f16 (11 bits, max 65504)
  mul_low_operands,      // the operands of every x rounded to f32 (double) / TF32 (float)
  perturb_ulps,          // one intermediate result moved by kPerturbUlps ulps away from zero
  flush_subnormals,      // subnormal operands and results flushed to zero (FTZ + DAZ)
  libm_low_precision,  // elementary functions and sqrt evaluated with 24 (double) / 11 (float) bits
  round_toward_zero,   // every + - x / sqrt rounded toward zero instead of to nearest
  sequential_sum,      // pairwise_sum runs as one sequential loop
  eps_removed,         // the implementation runs with eps = 0 (the oracle keeps the family's eps)
  div_approx_reciprocal,  // a / b as a x approx(1/b): reciprocal with 24 (double) / 12 (float) bits
  kCount
};
inline constexpr int kKindCount = static_cast<int>(Kind::kCount);
inline constexpr double kPerturbUlps = 4096;

std::string_view kind_name(Kind k);

// Faults that strike one dynamic operation, chosen from a hash of the input values, rather than
// every operation of a kind.
inline bool single_site(Kind k) {
  return k == Kind::one_op_low_precision || k == Kind::perturb_ulps;
}
// Faults that need the Faulty<T> scalar (the others act on pairwise_sum or on the input).
inline bool scalar_fault(Kind k) { return k != Kind::sequential_sum && k != Kind::eps_removed; }

// The state of one faulty run on this thread.
struct State {
  Kind kind = Kind::one_op_low_precision;
  int64_t strike_at = -1;  // single-site faults: index of the struck eligible operation; -1: count
  int64_t eligible = 0;    // eligible operations seen so far
  int64_t strikes = 0;     // operations whose result the fault changed
  int64_t first_index = -1;     // eligible-operation index of the first strike
  uintptr_t first_address = 0;  // its return address inside the operator code
};

inline thread_local State* current = nullptr;

// Records one strike at `address` (the first one is kept as the fault's site).
[[gnu::noinline]] void record_strike(State& s, uintptr_t address);

// RAII scope of a plan on this thread; restores the previous plan on exit.
class Scope {
 public:
  explicit Scope(Kind kind, int64_t strike_at = -1);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  const State& state() const { return state_; }

 private:
  State state_;
  State* saved_;
};

// Where the last fault mutant run on this thread struck, for the finding that reports it.
struct Report {
  std::string target;  // the fault mutant's id
  Kind kind = Kind::one_op_low_precision;
  int64_t strikes = 0;
  int64_t eligible = 0;
  int64_t first_index = -1;
  uintptr_t first_address = 0;
};
void set_last_report(const std::string& target, const State& s);
// The last report of `target` on this thread, or nullptr when its last run is not the latest.
const Report* last_report(std::string_view target);
// "targets/cpu/softmax.h:17 (operation 123 of 4096; 1 strike)", or why nothing was struck.
std::string describe(const Report& r);

}  // namespace stabfuzz::fault
