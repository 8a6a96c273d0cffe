// Cases: the input with index k of a run, drawn from the family's regimes by a seed alone.
//
// Every input of every engine is named by (family, dtype, seed, index), so a finding replays from
// its command line; the CESTAC rounding stream of a case is named the same way.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "stabfuzz/cestac.h"
#include "stabfuzz/family.h"

namespace stabfuzz::pipeline {

// One case of a run: what a finding's replay line names.
struct CaseKey {
  std::string family;
  std::string impl;
  DType dtype;
  uint64_t seed;
  int64_t index;
};

// The regime case `index` draws from: cases cycle through the regimes, so every one is exercised.
const Regime& case_regime(const Family& f, int64_t index);

// Case `index` of a run with `seed`, as RapidCheck's shrinkable value (shrinking starts from it).
rc::Shrinkable<Input> case_shrinkable(const Family& f, DType d, uint64_t seed, int64_t index);

// Case `index` of a run with `seed`: the same input on every call.
Input make_case(const Family& family, DType d, uint64_t seed, int64_t index);

// The CESTAC rounding stream of one case of one target.
CestacRequest cestac_request(const Target& t, DType d, uint64_t seed, int64_t index,
                             const cestac::Config& config);

}  // namespace stabfuzz::pipeline
