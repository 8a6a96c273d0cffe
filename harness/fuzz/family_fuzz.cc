// A standard libFuzzer target for one family (fuzz/<family>_fuzz): aborts on a finding.
//
// Built per family with STABFUZZ_FUZZ_FAMILY; runs unchanged under libFuzzer, OSS-Fuzz /
// ClusterFuzzLite and AFL++ (which see the abort). Fuzzes the family's reference targets, or the
// implementation named by the environment variable STABFUZZ_IMPL (e.g. a planted bug).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "harness/corpus/corpus.h"
#include "harness/fuzz/executor.h"
#include "stabfuzz/errors.h"

namespace {

const stabfuzz::fuzz::Executor& executor() {
  static std::optional<stabfuzz::fuzz::Executor> ex;
  if (!ex) {
    const char* impl = std::getenv("STABFUZZ_IMPL");
    try {
      ex.emplace(stabfuzz::default_registry(), STABFUZZ_FUZZ_FAMILY, impl ? impl : "",
                 std::vector<stabfuzz::DType>{}, stabfuzz::fuzz::Feedback::error, 1);
    } catch (const stabfuzz::InputError& e) {
      std::cerr << "stabfuzz: error: " << e.what() << "\n";
      std::exit(2);
    }
  }
  return *ex;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stabfuzz::fuzz::Execution ex = executor().run(data, size);
  if (!ex.decoded.valid) {  // a regime that breaks its own family's contract: a harness bug
    std::cerr << "stabfuzz: regime sample rejected by " STABFUZZ_FUZZ_FAMILY ": "
              << ex.decoded.reject << "\n";
    std::abort();
  }
  for (const auto& tv : ex.verdicts) {
    if (!tv.verdict.finding()) continue;
    stabfuzz::corpus::Entry e;  // the input in corpus format: save it and `stabfuzz replay` it
    e.family = STABFUZZ_FUZZ_FAMILY;
    e.impl = tv.target->id;
    e.input = ex.decoded.input;
    e.expect = stabfuzz::corpus::Expect::detected;
    e.seed = executor().seed();
    e.note = "finding of fuzz/" STABFUZZ_FUZZ_FAMILY "_fuzz";
    std::cerr << "stabfuzz: finding on " << tv.target->id << " (" << tv.verdict.detectors()
              << ", error " << tv.verdict.max_ratio << " x tolerance); the input:\n"
              << stabfuzz::corpus::format(e) << std::flush;
    std::abort();
  }
  return 0;
}
