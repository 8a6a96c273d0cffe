// One fuzz execution: bytes -> input -> every selected implementation, native + CESTAC + oracle,
// verdict, feedback counters. Shared by `stabfuzz fuzz` and the standalone fuzz/<family>_fuzz
// targets, so both judge an input the same way the property engine does (pipeline::evaluate).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/fuzz/decoder.h"
#include "harness/fuzz/feedback.h"
#include "harness/pipeline/verdict.h"
#include "stabfuzz/family.h"

namespace stabfuzz::fuzz {

struct TargetVerdict {
  const Target* target = nullptr;
  Verdict verdict;
};

struct Execution {
  Decoded decoded;
  std::vector<TargetVerdict> verdicts;  // targets that run in the decoded dtype
  bool finding() const;
};

class Executor {
 public:
  // `family`: FAMILY, or a selector within one family (softmax/torch, softmax/injected, an id;
  // harness/core/select.h). `impl` empty: every reference and library target of the family (planted
  // bugs only when named), or every target the selector names. Throws InputError for an unknown
  // family, selector or implementation, a selector beyond one family, or a dtype none supports.
  Executor(const Registry& registry, const std::string& family, const std::string& impl,
           const std::vector<DType>& dtypes, Feedback feedback, uint64_t seed,
           cestac::Config config = {}, Base base = Base::regimes);

  Execution run(const uint8_t* data, size_t size) const;

  // The CESTAC request of a target in a dtype: the stream `stabfuzz replay` uses for a corpus file
  // with this seed, so a written crash file replays bit for bit.
  CestacRequest request(const Target& t, DType d) const;

  // A failing input of target t (verdict v) shrunk within `evals` evaluations and `max_seconds`
  // (> 0), with its verdict; the input itself and v where the shrunk one no longer fails (which a
  // deterministic target never does).
  struct Shrunk {
    Input input;
    int64_t steps = 0;
    Verdict verdict;
  };
  Shrunk shrink(const Target& t, const Input& in, const Verdict& v, int64_t evals,
                double max_seconds) const;

  const Family& family() const { return *family_; }
  const std::vector<const Target*>& targets() const { return targets_; }
  const std::vector<DType>& dtypes() const { return dtypes_; }
  uint64_t seed() const { return seed_; }

 private:
  const Family* family_ = nullptr;
  std::vector<const Target*> targets_;
  std::vector<DType> dtypes_;
  Feedback feedback_;
  Base base_;
  uint64_t seed_;
  cestac::Config config_;
};

}  // namespace stabfuzz::fuzz
