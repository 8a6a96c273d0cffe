// Fault plans: names, the RAII scope, strike records and the last run's report per thread.
#include "injectors/fault_plan.h"

#include "stabfuzz/cestac.h"

namespace stabfuzz::fault {

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::one_op_low_precision:
      return "one_op_low_precision";
    case Kind::add_bf16:
      return "add_bf16";
    case Kind::add_f16:
      return "add_f16";
    case Kind::mul_low_operands:
      return "mul_low_operands";
    case Kind::perturb_ulps:
      return "perturb_ulps";
    case Kind::flush_subnormals:
      return "flush_subnormals";
    case Kind::libm_low_precision:
      return "libm_low_precision";
    case Kind::round_toward_zero:
      return "round_toward_zero";
    case Kind::sequential_sum:
      return "sequential_sum";
    case Kind::eps_removed:
      return "eps_removed";
    case Kind::div_approx_reciprocal:
      return "div_approx_reciprocal";
    case Kind::kCount:
      break;
  }
  return "?";
}

void record_strike(State& s, uintptr_t address) { s.first_address = address; }

Scope::Scope(Kind kind, int64_t strike_at) : saved_(current) {
  state_.kind = kind;
  state_.strike_at = strike_at;
  current = &state_;
}

Scope::~Scope() { current = saved_; }

namespace {
thread_local Report last;
}  // namespace

void set_last_report(const std::string& target, const State& s) {
  last.target = target;
  last.kind = s.kind;
  last.strikes = s.strikes;
  last.eligible = s.eligible;
  last.first_index = s.first_index;
  last.first_address = s.first_address;
}

const Report* last_report(std::string_view target) {
  return !last.target.empty() && last.target == target ? &last : nullptr;
}

std::string describe(const Report& r) {
  if (r.kind == Kind::eps_removed) return "input parameter eps set to 0";
  if (r.first_index < 0) return "nothing struck (no eligible operation changed)";
  const std::string site = r.first_address ? cestac::symbolize(r.first_address) : "?";
  std::string s = site + " (";
  if (single_site(r.kind))
    s += "operation " + std::to_string(r.first_index) + " of " + std::to_string(r.eligible) + ", " +
         (r.strikes ? "value changed" : "value unchanged");
  else if (r.kind == Kind::sequential_sum)
    s += std::to_string(r.strikes) + " sequential sums";
  else
    s += "first of " + std::to_string(r.strikes) + " changed operations, at operation " +
         std::to_string(r.first_index);
  return s + ")";
}

}  // namespace stabfuzz::fault
