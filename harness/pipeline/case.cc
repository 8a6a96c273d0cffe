// Cases: seeds, regimes and CESTAC streams of a run's inputs.
#include "harness/pipeline/case.h"

#include "harness/gen/input_gen.h"

namespace stabfuzz::pipeline {

namespace {

uint64_t case_seed(const Family& f, DType d, uint64_t seed, int64_t index) {
  return cestac::mix64(cestac::mix64(seed ^ hash_str(f.name)) +
                       static_cast<uint64_t>(d) * 0x51ed27 +
                       static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL);
}

}  // namespace

const Regime& case_regime(const Family& f, int64_t index) {
  return f.regimes[static_cast<size_t>(index) % f.regimes.size()];
}

rc::Shrinkable<Input> case_shrinkable(const Family& f, DType d, uint64_t seed, int64_t index) {
  const rc::Random random(case_seed(f, d, seed, index));
  return gen::regime_gen(f, case_regime(f, index), d)(random, rc::kNominalSize);
}

Input make_case(const Family& family, DType d, uint64_t seed, int64_t index) {
  return case_shrinkable(family, d, seed, index).value();
}

CestacRequest cestac_request(const Target& t, DType d, uint64_t seed, int64_t index,
                             const cestac::Config& config) {
  CestacRequest r;
  r.config = config;
  r.seed = seed;
  r.stream = hash_str(t.id) ^ (static_cast<uint64_t>(d) << 56) ^ static_cast<uint64_t>(index);
  return r;
}

}  // namespace stabfuzz::pipeline
