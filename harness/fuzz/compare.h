// `stabfuzz fuzz-compare`: inputs and seconds to the first detection of planted bugs, per engine.
//
// Engines: property (the runner's regime inputs, pipeline::make_case), fuzz with error-guided
// feedback, fuzz with coverage feedback only (each a `stabfuzz fuzz` child process: libFuzzer is
// process-global), and the uniform random baseline (campaign::generate_case, Generator::uniform).
// Each runs every mutant from several seeds up to an input budget; the median over seeds counts a
// miss as more than the budget. A mutant is hard when the uniform baseline's median is a miss.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::fuzz {

// fuzz-*-uniform: the fuzzer on the uniform baseline's values (`fuzz --generator uniform`): what
// the feedback alone climbs to, without the regimes' extreme values.
inline constexpr const char* kEngines[] = {"property",           "fuzz-error",
                                           "fuzz-coverage",      "uniform",
                                           "fuzz-error-uniform", "fuzz-coverage-uniform"};

struct CompareOptions {
  std::vector<std::string> mutants;  // target ids; empty: the default set
  int64_t budget_inputs = 2000;      // per engine, mutant and seed
  double time_cap_s = 30;            // per engine, mutant and seed
  uint64_t seed = 1;                 // seeds seed .. seed + seeds - 1
  int seeds = 5;
  std::string binary;    // the stabfuzz binary, for the fuzz engines
  std::string work_dir;  // fuzz runs' output directories
};

struct Trial {
  bool detected = false;
  int64_t inputs = 0;  // to the first detection, or evaluated in all
  double seconds = 0;
};

struct MutantRow {
  std::string id;
  std::vector<std::vector<Trial>> trials;  // [engine][seed]
};

// The mutants measured when none are named: planted bugs in regimes of different difficulty.
std::vector<std::string> default_compare_mutants();

std::vector<MutantRow> run_compare(const Registry& registry, const CompareOptions& o,
                                   std::ostream& progress);

// Median over seeds; a miss counts as +inf (so a median miss prints as "miss").
double median_inputs(const std::vector<Trial>& t);
double median_seconds(const std::vector<Trial>& t);

std::string compare_markdown(const std::vector<MutantRow>& rows, const CompareOptions& o);
json::Value compare_json(const std::vector<MutantRow>& rows, const CompareOptions& o);

}  // namespace stabfuzz::fuzz
