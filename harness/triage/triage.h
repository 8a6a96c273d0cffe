// stabfuzz triage: a library finding as a bug report its maintainer can act on — the library and
// version, the exact input, computed vs the correctly rounded value, the accuracy the conditioning
// allows, a known stable formulation, and a standalone C++ reproducer that calls only the library.
#pragma once

#include <iosfwd>
#include <string>

#include "harness/corpus/corpus.h"
#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::triage {

struct Options {
  std::string out_dir;  // report.md and repro.cc go here
  bool run = false;     // also compile and run the reproducer, and quote its output
  // With run: build against the library under this prefix (its include/ and lib/, lib/ also as
  // the run path) before the system's.
  std::string library_prefix;
};

struct Result {
  std::string title;
  std::string report_path, source_path;  // source_path empty: the target has no reproducer
  bool finding_now = false;              // the input still fails here, through stabfuzz
  int repro_exit = -1;                   // with run: 1 reproduces, 0 does not, else a build error
  std::string repro_output;
};

// The corpus entry of a findings.jsonl line (its implementation, exact input and seed).
corpus::Entry entry_from_finding(const json::Value& finding);

// Triage of one input of a library target: evaluates it again, writes OUT/report.md and, when the
// target has a standalone call for it, OUT/repro.cc. Throws InputError for an unknown or
// non-library implementation.
Result triage(const Registry& registry, const corpus::Entry& e, const Options& o);

// The reproducer's source: the input and the correctly rounded outputs as hex literals, the
// library call, and a comparison against the allowed error per output (exit 1: reproduced).
std::string reproducer_source(const StandaloneCall& call, const Input& in,
                              const std::vector<double>& exact,
                              const std::vector<double>& allowed_ulps, const std::string& title);

}  // namespace stabfuzz::triage
