// Fault mutants: which arithmetic fault is planted in which family's stable target, and what it
// plants. The faults themselves live in injectors/faults.h (scalar faults), injectors/faultable.h
// (sequential sums) and here (eps removed); each reaches the stable operator as a type
// (Target::faultable), never through state the operator reads.
#include "injectors/fault_mutants.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "injectors/fault_plan.h"
#include "stabfuzz/cestac.h"

namespace stabfuzz::injectors {
namespace {

using fault::Kind;

struct FaultText {
  const char* plants;
  const char* fails_where;
  const char* fix;
};

FaultText text(Kind k) {
  switch (k) {
    case Kind::one_op_low_precision:
      return {
          "one dynamic + - x / computed in f32 (f64 data) or bf16 (f32 data); the operation is "
          "chosen from a hash of the input",
          "any input where the struck operation's result is not representable in the lower "
          "format and reaches an output",
          "keep every temporary in the data's precision (no silent down-cast)"};
    case Kind::add_bf16:
      return {"every addition and subtraction rounded to bf16 (a bf16 accumulator)",
              "any sum whose partial sums need more than 8 significant bits",
              "accumulate in f32 or wider, round once at the end"};
    case Kind::add_f16:
      return {"every addition and subtraction rounded to f16 (an f16 accumulator)",
              "sums needing more than 11 bits, and partial sums beyond 65504 (inf)",
              "accumulate in f32 or wider, round once at the end"};
    case Kind::mul_low_operands:
      return {
          "the operands of every multiplication rounded to f32 (f64 data) or TF32, 11 bits "
          "(f32 data), as tensor-core GEMMs do",
          "any product whose factors need more bits than the reduced format keeps",
          "multiply in the data's precision (disable TF32 / allow_tf32=False)"};
    case Kind::perturb_ulps:
      return {
          "one intermediate result moved by 4096 ulps (a corrupted temporary); the operation "
          "is chosen from a hash of the input",
          "any input where the struck intermediate reaches an output",
          "compute the intermediate correctly"};
    case Kind::flush_subnormals:
      return {
          "subnormal operands and results of every operation flushed to zero (FTZ/DAZ)",
          "inputs, intermediates or outputs below the smallest normal (2.2e-308 f64, 1.2e-38 f32)",
          "keep gradual underflow (no -ffast-math / FTZ), or rescale before the underflow"};
    case Kind::libm_low_precision:
      return {
          "exp, log, tanh, erf, sqrt, pow... evaluated with a 24-bit (f64 data) or 11-bit "
          "(f32 data) significand, as fast approximate intrinsics do",
          "any input that reaches an elementary function",
          "use the full-precision libm functions of the data's type"};
    case Kind::round_toward_zero:
      return {"every + - x / sqrt rounded toward zero instead of to nearest (a wrong FPU mode)",
              "long reductions: the truncation errors all point one way and add up like n u",
              "restore round-to-nearest (fesetround(FE_TONEAREST)) around the kernel"};
    case Kind::sequential_sum:
      return {"the pairwise reduction replaced by one sequential loop",
              "long rows of same-sign values: the error grows like n u instead of log2(n) u",
              "sum pairwise or in blocks (targets::pairwise_sum)"};
    case Kind::eps_removed:
      return {"the implementation runs with eps = 0 while the contract keeps the family's eps",
              "rows with zero or tiny variance / norm: division by zero or by a tiny value",
              "add eps inside the square root / denominator as the contract says"};
    case Kind::div_approx_reciprocal:
      return {
          "every division a / b computed as a x approx(1/b), the reciprocal good to 24 bits "
          "(f64 data) or 12 bits (f32 data, like rcpps under fast-math)",
          "any input that reaches a division",
          "divide (or refine the reciprocal with a Newton step) in the data's precision"};
    case Kind::kCount:
      break;
  }
  return {"", "", ""};
}

// The faults each family carries: each was detected there within 1 s on the family's regimes at
// seed 1 (`stabfuzz inject --budget-s 1`) when tried on every family. round_toward_zero is
// attached nowhere: no stable target's tolerance can see it (0 of 36 families within 1 s), since
// their error bounds hold for any rounding. One row per line, to merge easily.
const std::map<std::string, std::vector<Kind>>& fault_table() {
  static const std::map<std::string, std::vector<Kind>> table = {
      {"softmax",
       {Kind::one_op_low_precision, Kind::perturb_ulps, Kind::flush_subnormals,
        Kind::sequential_sum}},
      {"exp", {Kind::libm_low_precision, Kind::flush_subnormals}},
      {"log1p", {Kind::libm_low_precision}},
      {"tanh", {Kind::libm_low_precision}},
      {"sigmoid", {Kind::div_approx_reciprocal}},
      {"softplus", {Kind::add_bf16}},
      {"gelu", {Kind::mul_low_operands}},
      {"sum", {Kind::add_bf16, Kind::sequential_sum}},
      {"mean", {Kind::add_f16, Kind::sequential_sum}},
      {"var", {Kind::perturb_ulps, Kind::div_approx_reciprocal}},
      {"std", {Kind::sequential_sum}},
      {"l2_norm", {Kind::flush_subnormals}},
      {"logsumexp", {Kind::one_op_low_precision}},
      {"logcumsumexp", {Kind::add_f16}},
      {"cross_entropy", {Kind::perturb_ulps}},
      {"layer_norm", {Kind::eps_removed, Kind::one_op_low_precision}},
      {"rms_norm", {Kind::eps_removed}},
      {"batch_norm", {Kind::eps_removed}},
      {"bce_with_logits", {Kind::flush_subnormals}},
      {"dot", {Kind::mul_low_operands, Kind::add_bf16}},
      {"gemm", {Kind::mul_low_operands}},
      {"attention", {Kind::div_approx_reciprocal}},
      {"cosine_similarity", {Kind::eps_removed}},
      {"adam", {Kind::div_approx_reciprocal}},
  };
  return table;
}

uint64_t input_hash(const Input& in) {
  uint64_t h = 0xcbf29ce484222325ULL ^ static_cast<uint64_t>(in.dtype);
  auto mix = [&](uint64_t v) { h = cestac::mix64(h ^ v) + 0x9e3779b97f4a7c15ULL; };
  for (const auto& t : in.args) {
    mix(t.values.size());
    for (double v : t.values) {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      mix(bits);
    }
  }
  for (const auto& [name, v] : in.params) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    mix(bits ^ name.size());
  }
  return h;
}

using Native = std::function<std::vector<double>(const Input&)>;
using Cestac = std::function<CestacOutput(const Input&, const CestacRequest&)>;

// What the fault runs on: the stable target's faulty-scalar instantiation (scalar faults), its
// sequential-sum instantiation, or the stable target itself (eps removed: on a copy of the input).
Native faulty_native(Kind kind, const std::string& id, const Target& stable) {
  if (kind == Kind::eps_removed)
    return [id, base = stable.native](const Input& in) {
      Input no_eps = in;
      no_eps.set_param("eps", 0.0);
      fault::Scope scope(Kind::eps_removed);
      std::vector<double> out = base(no_eps);
      fault::set_last_report(id, scope.state());
      return out;
    };
  if (!stable.faultable) throw std::logic_error(stable.id + " declares no fault instantiations");
  Native base = kind == Kind::sequential_sum ? stable.faultable->sequential_sums_native
                                             : stable.faultable->faulty_scalar;
  return [kind, id, base](const Input& in) {
    int64_t at = -1;
    if (fault::single_site(kind)) {  // count the eligible operations, then strike one of them
      fault::Scope count(kind, -1);
      base(in);
      const int64_t n = count.state().eligible;
      at = n > 0 ? static_cast<int64_t>(input_hash(in) % static_cast<uint64_t>(n)) : -1;
    }
    fault::Scope scope(kind, at);
    std::vector<double> out = base(in);
    fault::set_last_report(id, scope.state());
    return out;
  };
}

// CESTAC simulates the faults that change the computation's structure (a sequential sum, eps = 0);
// it cannot see a deterministic rounding fault it does not model, so scalar faults get none.
Cestac faulty_cestac(Kind kind, const Target& stable) {
  if (!stable.cestac || fault::scalar_fault(kind)) return {};
  if (kind == Kind::eps_removed)
    return [base = stable.cestac](const Input& in, const CestacRequest& req) {
      Input no_eps = in;
      no_eps.set_param("eps", 0.0);
      return base(no_eps, req);
    };
  if (!stable.faultable) throw std::logic_error(stable.id + " declares no fault instantiations");
  return stable.faultable->sequential_sums_cestac;
}

const Target* reference_of(const Family& family) {
  for (const auto& t : family.targets)
    if (t.kind == TargetKind::reference) return &t;
  return nullptr;
}

// Fault k planted in `stable`, or nullopt when no dtype of it can carry the fault.
std::optional<Target> fault_target(const Family& family, const Target& stable, Kind k) {
  Target t;
  t.id = family.name + "/fault/" + std::string(fault::kind_name(k));
  t.kind = TargetKind::injected;
  for (DType d : stable.dtypes)  // Faulty<T> exists for double and float only
    if (!fault::scalar_fault(k) || d == DType::f64 || d == DType::f32) t.dtypes.push_back(d);
  if (t.dtypes.empty()) return std::nullopt;
  const FaultText tx = text(k);
  t.description =
      std::string(fault::kind_name(k)) + " fault planted in " + stable.id +
      (fault::scalar_fault(k) ? " (oracle only: CESTAC does not model this rounding fault)" : "");
  t.native = faulty_native(k, t.id, stable);
  t.cestac = faulty_cestac(k, stable);
  // Measured (tests/injectors/mutants_test.cc, seeds 1-3): CESTAC flags eps = 0 in the
  // normalizations, whose variance or mean square of a constant row is a computational zero, but
  // not where the rows that break have an exactly zero norm (cosine_similarity: 0 / 0 in every
  // sample), nor the n u growth of a sequential sum.
  const bool cestac_sees =
      k == Kind::eps_removed && t.cestac &&
      (family.name == "layer_norm" || family.name == "rms_norm" || family.name == "batch_norm");
  t.injection = Injection{std::string(tx.plants) + ", in " + stable.id, tx.fails_where, tx.fix,
                          cestac_sees ? "both" : "oracle"};
  return t;
}

// The families whose contract has an eps (stabfuzz/params.h).
bool has_eps(const Family& family) {
  static const std::set<std::string> kEps = {"layer_norm",        "rms_norm",          "batch_norm",
                                             "cosine_similarity", "pairwise_distance", "adam"};
  return kEps.count(family.name) > 0;
}

}  // namespace

void attach_fault_mutants(Family& family) {
  const auto it = fault_table().find(family.name);
  if (it == fault_table().end()) return;
  const Target* stable = reference_of(family);
  if (!stable) return;
  std::vector<Target> added;
  for (Kind k : it->second)
    if (auto t = fault_target(family, *stable, k)) added.push_back(std::move(*t));
  for (auto& t : added) family.targets.push_back(std::move(t));
}

std::vector<Target> fault_matrix(const Family& family) {
  std::vector<Target> out;
  const Target* stable = reference_of(family);
  if (!stable) return out;
  for (int i = 0; i < fault::kKindCount; ++i) {
    const auto k = static_cast<Kind>(i);
    if (k == Kind::eps_removed && !has_eps(family)) continue;
    if (auto t = fault_target(family, *stable, k)) out.push_back(std::move(*t));
  }
  return out;
}

bool registered_fault_mutant(const std::string& id) {
  const auto slash = id.find("/fault/");
  if (slash == std::string::npos) return false;
  const auto it = fault_table().find(id.substr(0, slash));
  if (it == fault_table().end()) return false;
  for (Kind k : it->second)
    if (id.substr(slash + 7) == fault::kind_name(k)) return true;
  return false;
}

}  // namespace stabfuzz::injectors
