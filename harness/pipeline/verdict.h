// Verdict: the one place where an implementation's outputs, the oracle and CESTAC meet.
//
// A finding means the implementation lost more accuracy than the problem's conditioning explains:
//  - oracle detector: ulp_error(out_i, exact_i) > tol(n) * max(1, cond_i) (|out - exact| in units
//    of exact's ULP), or a non-finite output
//    where the exact result is finite;
//  - CESTAC detector: digits(out_i) < expected_i - margin with expected_i = (digits the value can
//    carry in its format at its magnitude) - log10(tol(n) * max(1, cond_i)), a non-finite output
//    where the
//    family's outputs are always finite, or an instability that invalidates the run
//    (self-validation failure: unstable x, / or power; samples disagreeing on NaN/Inf).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/pipeline/finding_kind.h"
#include "stabfuzz/family.h"

namespace stabfuzz {

struct Verdict {
  bool undecidable = false;  // the oracle could not round correctly: no oracle verdict
  bool oracle_fired = false;
  bool cestac_fired = false;
  bool nonfinite = false;                    // a non-finite output where the exact result is finite
  FindingKind kind = FindingKind::accuracy;  // meaningful when finding()
  std::string kind_detail;                   // why an underflow is one ("outputs flushed", ...)

  size_t n = 0;                              // input values
  double tolerance_ulps = 0;                 // tol(n) at cond <= 1
  double max_ulp = 0;                        // max over outputs of the ULP error
  double max_ratio = 0;                      // max over outputs of ulp error / (tol * max(1, cond))
  size_t worst = 0;                          // output index of max_ratio
  double computed = 0, exact = 0, cond = 0;  // at `worst`
  double max_cond = 0;

  bool has_cestac = false;
  double min_digits = 0;      // over outputs
  double digits_deficit = 0;  // max over outputs of expected - margin - digits (> 0: fired)
  size_t cestac_worst = 0;
  double cestac_digits = 0, expected_digits = 0;  // at `cestac_worst`
  bool self_validation_failed = false;
  cestac::Log log;

  // A library target's results differed on repeated calls or thread counts (blackbox.h), on an
  // input the oracle and CESTAC pass: a finding of kind nondeterminism.
  bool nondeterministic = false;

  bool finding() const { return oracle_fired || cestac_fired || nondeterministic; }
  Severity severity() const;
  std::string detectors() const;  // "oracle", "cestac", "oracle+cestac" or ""
};

Verdict judge(const Family& family, const Input& in, const std::vector<double>& computed,
              const OracleResult& oracle, const CestacOutput* cestac);

// Whether an oracle finding that is not an output underflow is a DAZ policy: the outputs pass
// when the input's subnormal values are read as zero, or as the smallest normal of their sign.
// Calls the oracle again on those inputs (only when the input holds subnormal values); sets
// v.kind to underflow and says which reading explains the outputs. CESTAC findings stay as they
// are: a source-level operator has no denormal policy.
void classify_subnormal_inputs(Verdict& v, const Family& family, const Input& in,
                               const std::vector<double>& computed);

}  // namespace stabfuzz
