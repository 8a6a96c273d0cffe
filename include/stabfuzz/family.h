// Family and Target: an operator's contract and its implementations, the registry's rows.
//
// A Family declares what an operator computes (its oracle and condition number), which inputs are
// extreme for it (value regimes), and how much error a well-implemented kernel may show
// (tolerances). A Target is one implementation of a family, run natively and, when its source is a
// template over the scalar type, under CESTAC.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stabfuzz/cestac.h"
#include "stabfuzz/dtype.h"
#include "stabfuzz/entropy.h"

namespace stabfuzz {

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;  // each exactly a value of the input's dtype
};

// One operator call: tensors in the family's signature order and named scalar parameters
// (eps, causal, ...). Parameters absent from `params` take the family's defaults.
struct Input {
  DType dtype = DType::f64;
  std::vector<Tensor> args;
  std::vector<std::pair<std::string, double>> params;
  size_t total_size() const;
  double param(std::string_view name, double fallback) const;
  void set_param(const std::string& name, double value);
};

// The oracle's answer: the exact result correctly rounded to the output dtype, and per output the
// relative condition number of the problem at this input.
struct OracleResult {
  bool decidable = true;  // false: mpfr_can_round failed up to the precision cap
  std::vector<double> exact;
  std::vector<double> cond;
  long precision_bits = 0;  // working precision that decided the rounding
};

struct CestacRequest {
  uint64_t seed = 0;
  uint64_t stream = 0;
  cestac::Config config;
};

// What a CESTAC run of a source-level target returns.
struct CestacOutput {
  std::vector<double> mean;    // per output, mean of the samples
  std::vector<double> digits;  // per output, exact significant digits
  std::vector<uint8_t> noisy;  // per output, 1 when the samples disagree
  cestac::Log log;
};

enum class TargetKind { reference, injected, library };
std::string_view target_kind_name(TargetKind k);

// What an injected target plants, quoted by the report.
struct Injection {
  std::string plants;              // the unstable formulation
  std::string fails_where;         // the input region where it breaks
  std::string fix;                 // the stable rewrite
  std::string expected_detection;  // "oracle", "cestac" or "both"
};

// A library call as part of a standalone C++ program that includes only the library's headers
// (`stabfuzz triage` writes the program around it: the input, the correctly rounded values, the
// comparison).
struct StandaloneCall {
  std::string library;   // name and version, as a maintainer reads it: "oneDNN 2.6.3"
  std::string includes;  // #include lines
  // Statements of `std::vector<double> call(const std::vector<std::vector<double>>& x)`: x[k]
  // holds argument k's values (each exact in the input's dtype); they return the outputs.
  std::string body;
  std::string build;  // compile flags after the source file: "$(pkg-config --cflags --libs ...)"
};

// A reference operator instantiated on the fault injectors' types (injectors/faultable.h), so that
// an arithmetic fault reaches it as a type and the operator reads no fault state: on the faulty
// scalar (f64 and f32), and with sequential sums in place of its pairwise sums.
struct FaultableImpl {
  std::function<std::vector<double>(const Input&)> faulty_scalar;
  std::function<std::vector<double>(const Input&)> sequential_sums_native;
  std::function<CestacOutput(const Input&, const CestacRequest&)> sequential_sums_cestac;
};

struct Target {
  std::string id;  // family/backend/variant
  TargetKind kind = TargetKind::reference;
  std::string description;
  std::vector<DType> dtypes;
  std::function<std::vector<double>(const Input&)> native;
  // Empty for black-box targets (no scalar type to swap).
  std::function<CestacOutput(const Input&, const CestacRequest&)> cestac;
  std::optional<Injection> injection;
  // Reference targets: where the fault mutants plant their faults; empty elsewhere.
  std::shared_ptr<const FaultableImpl> faultable;
  // Runs in a forked child (harness/campaign/isolate.h): a crash or hang becomes a finding of
  // kind crash/timeout and the campaign goes on. Plugins always; libraries may opt in.
  bool isolated = false;
  // Optional: loads what the first call needs (libtorch's module takes 1-2 s), so that a run's
  // time budget starts after it instead of spending a short slice on loading.
  std::function<void()> prepare;
  // Library targets: the call as standalone C++ for this input, or nullopt where there is none
  // (this dtype, this operator).
  std::function<std::optional<StandaloneCall>(const Input&)> standalone;
  // Library targets: the library as `--target` selectors name it (harness/core/select.h). Empty:
  // the id's second part, as libs/ and cuBLAS name theirs (family/<library>/name); plugins set
  // "plugin".
  std::string library;
};

struct Regime {
  std::string name;
  std::string description;
  std::function<Input(Entropy&, DType)> sample;
};

struct Family {
  std::string name;
  std::string summary;
  std::vector<Regime> regimes;
  // nullopt when the input is valid for this operator, else what is wrong with it.
  std::function<std::optional<std::string>(const Input&)> validate;
  std::function<OracleResult(const Input&)> oracle;
  // Allowed error in ULPs at condition number 1 for n input values; the verdict scales it by
  // max(1, cond). Justified next to each family's definition.
  std::function<double(DType, size_t n)> tolerance_ulps;
  // CESTAC may report this many digits fewer than the conditioning predicts before it fires.
  double cestac_margin_digits = 1.0;
  // Outputs are finite whenever the inputs are valid (a non-finite output is always wrong).
  bool finite_outputs = true;
  std::vector<Target> targets;
};

// A target this build knows of but cannot run here (a library not installed, no GPU, ...).
// `--list` names it with the reason, so a user sees what they are missing and why.
struct UnavailableTarget {
  std::string id;      // family/backend/variant, as it would be registered
  std::string reason;  // one line: what is missing
};

class Registry {
 public:
  // Validates the family and its targets: a target without dtypes or entry points, a family
  // without an oracle, regimes or tolerances, or a duplicate id throws std::logic_error.
  void add(Family family);
  // Adds a target to a registered family (libraries, GPU kernels, plugins), with the same checks
  // as add(); throws std::logic_error for an unknown family or a malformed or duplicate target.
  void add_target(std::string_view family, Target target);
  void add_unavailable(UnavailableTarget target) { unavailable_.push_back(std::move(target)); }
  const std::vector<UnavailableTarget>& unavailable() const { return unavailable_; }
  const std::vector<Family>& families() const { return families_; }
  const Family* find_family(std::string_view name) const;
  // (family, target) for a target id, or nullptr.
  std::pair<const Family*, const Target*> find_target(std::string_view id) const;

 private:
  std::vector<Family> families_;
  std::vector<UnavailableTarget> unavailable_;
};

// Every family stabfuzz knows, joined in one explicit list (harness/core/default_registry.cc).
const Registry& default_registry();
// The same registry, for adding targets at start-up only (plugins loaded from the command line),
// before any run reads it.
Registry& mutable_default_registry();

}  // namespace stabfuzz
