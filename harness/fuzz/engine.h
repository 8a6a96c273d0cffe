// `stabfuzz fuzz`: the libFuzzer engine, embedded through LLVMFuzzerRunDriver.
//
// libFuzzer mutates bytes; the decoder turns them into an input through the family's regimes;
// every selected implementation runs natively and under CESTAC and is judged against the oracle;
// the verdict's error feeds back through extra counters (feedback.h). A finding is shrunk,
// written as a corpus file under OUT/crashes/ (`stabfuzz replay` reproduces it) and as a
// findings.jsonl line; the run stops at the first one unless keep_going.
// libFuzzer is process-global and exits the process itself: one fuzz run per process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/runner.h"
#include "harness/fuzz/decoder.h"
#include "harness/fuzz/feedback.h"

namespace stabfuzz::fuzz {

struct FuzzOptions {
  std::string family;
  std::string impl;           // empty: the family's reference and library targets
  std::vector<DType> dtypes;  // empty: every dtype the targets support
  double time_s = 0;          // <= 0: no time limit of ours
  int64_t runs = 0;           // executions; <= 0: no limit of ours
  uint64_t seed = 1;          // libFuzzer's -seed and the CESTAC streams' seed
  std::string corpus_dir;     // libFuzzer's corpus (read and grown); empty: none
  Feedback feedback = Feedback::error;
  Base base = Base::regimes;  // --generator uniform: values uniform before the edits
  std::string out_dir;
  bool keep_going = false;  // record findings up to max_findings per impl x dtype
  int64_t max_findings = 10;
  int64_t shrink_evals = 1000;
  cestac::Config cestac;
  KindSet fail_on = KindSet::defaults();  // finding kinds that fail the run and end it
  bool quiet = false;
  bool write_reports = true;  // report.md, report.html, junit.xml at the end
  bool progress_tty = false;
  std::vector<std::string> libfuzzer_args;  // passed through unchanged (after `--`)
  bool child = false;  // a libFuzzer child process (merge, fork): counters only
};

using TablePrinter = void (*)(const campaign::RunResult&, std::ostream&);

// Runs libFuzzer in a process of its own (libFuzzer ends its process itself) and returns the run's
// exit code once it ends. A libFuzzer worker (opts.child) is that process already: there the call
// does not return. Throws InputError before starting for a bad option, or when this build has no
// libFuzzer.
int run(const Registry& registry, const FuzzOptions& opts, TablePrinter table);

// Whether libFuzzer arguments ask for a mode that only re-runs files (-merge, -fork, -jobs...):
// then findings are not recorded and the run does not stop at one.
bool passive_mode(const std::vector<std::string>& libfuzzer_args);

}  // namespace stabfuzz::fuzz
