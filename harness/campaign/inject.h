// `stabfuzz inject`: how well the detectors find planted bugs. Every injected target (formulation
// mutants `family/injected/...`, fault mutants `family/fault/...`) runs until its first detection
// or the budget; every reference target runs for the whole budget, and a failing input there is a
// false positive. Recall and false positives are measured, per generator: the family's value
// regimes, or the naive uniform baseline.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/cases.h"
#include "harness/pipeline/verdict.h"
#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

struct InjectOptions {
  std::string family;   // a family name or "all"
  double budget_s = 0;  // seconds per target
  uint64_t seed = 0;
  Generator generator = Generator::regimes;
  int64_t shrink_evals = 0;  // evaluations one shrink may spend
  cestac::Config cestac;
  std::string save_corpus;  // directory for regression files; empty: none
  // Every fault kind planted in every family's reference target (injectors::fault_matrix), in
  // place of the registry's fault mutants, which were chosen on seed 1.
  bool fault_matrix = false;
  bool references = true;  // run the reference targets (false positives)
};

struct MutantResult {
  std::string id, family;
  std::string origin;  // "formulation" or "fault"
  std::string expected_detection;
  bool has_cestac = false;
  bool detected = false;
  std::string detector;           // on the first failing input: "oracle", "cestac", "both"
  int64_t inputs_to_detect = -1;  // inputs evaluated up to the first failing one
  double seconds_to_detect = -1;
  int64_t oracle_inputs = -1;  // per detector: inputs up to the first input it fired on
  int64_t cestac_inputs = -1;
  int64_t inputs = 0;  // inputs evaluated in all
  double seconds = 0;
  DType dtype = DType::f64;  // of the first failing input
  std::string regime;
  int64_t case_index = -1;
  std::optional<Input> shrunk;  // the shrunk first failing input
  size_t original_n = 0;
  int64_t shrink_steps = 0;
  std::string fault_site;   // fault mutants: where the fault struck on the shrunk input
  std::string corpus_file;  // written regression file
  bool registered = true;   // a target of the registry (false: only in the fault matrix)
  // Inputs whose outputs differ from the reference target's (bit for bit, NaN equal to NaN): 0
  // means the planted change never reached an output on these inputs.
  int64_t changed_inputs = 0;
  double max_ratio = 0;  // worst error / tolerance over the inputs
  // A detector expected_detection names that has a CESTAC entry and never fired.
  bool expected_missed = false;
  std::string why_undetected;  // one line, for undetected mutants
};

struct StableResult {
  std::string id, family;
  int64_t inputs = 0;
  int64_t failing_inputs = 0;
  double seconds = 0;
  double max_ratio = 0;       // worst error / tolerance over the inputs
  std::string first_failure;  // "dtype regime case K: detectors" of the first failing input
  std::string corpus_file;
};

struct InjectResult {
  Generator generator = Generator::regimes;
  uint64_t seed = 0;
  double budget_s = 0;
  std::vector<MutantResult> mutants;
  std::vector<StableResult> stable;
  double recall = 0, recall_cestac = 0, recall_oracle = 0;
  int64_t cestac_applicable = 0;  // mutants with a CESTAC entry
  int64_t false_positive_targets = 0;
};

// Throws InputError for an unknown family, a family without targets to run or a bad budget.
InjectResult run_inject(const Registry& registry, const InjectOptions& opts,
                        std::ostream& progress);

json::Value inject_json(const InjectResult& r);
void print_inject_table(const InjectResult& r, std::ostream& os);
// The recall over several seeds as Markdown (docs/results/detection.md): per mutant the detector
// and inputs at each seed, undetected ones with why; `command` and `tuning_seeds` are quoted.
std::string inject_markdown(const std::vector<InjectResult>& runs, const std::string& command,
                            const std::vector<uint64_t>& tuning_seeds);

}  // namespace stabfuzz::campaign
