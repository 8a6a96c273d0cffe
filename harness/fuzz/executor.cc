// One fuzz execution, judged like every other engine's input (pipeline::evaluate).
#include "harness/fuzz/executor.h"

#include <algorithm>

#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::fuzz {

bool Execution::finding() const {
  return std::any_of(verdicts.begin(), verdicts.end(),
                     [](const TargetVerdict& tv) { return tv.verdict.finding(); });
}

Executor::Executor(const Registry& registry, const std::string& family, const std::string& impl,
                   const std::vector<DType>& dtypes, Feedback feedback, uint64_t seed,
                   cestac::Config config, Base base)
    : feedback_(feedback), base_(base), seed_(seed), config_(config) {
  family_ = registry.find_family(family);
  if (!family_)
    throw InputError("unknown target '" + family + "' (stabfuzz --list shows the families)");
  for (const auto& t : family_->targets) {
    if (impl.empty() ? t.kind == TargetKind::injected : t.id != impl) continue;
    targets_.push_back(&t);
  }
  if (targets_.empty())
    throw InputError(impl.empty()
                         ? family + " has no reference implementation to fuzz (give --impl)"
                         : "unknown implementation '" + impl + "' of " + family +
                               " (stabfuzz --list shows them)");
  for (DType d : kAllDTypes) {
    if (!dtypes.empty() && std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) continue;
    for (const Target* t : targets_)
      if (std::find(t->dtypes.begin(), t->dtypes.end(), d) != t->dtypes.end()) {
        dtypes_.push_back(d);
        break;
      }
  }
  if (dtypes_.empty())
    throw InputError("no implementation of " + family + " supports the requested dtype");
}

CestacRequest Executor::request(const Target& t, DType d) const {
  CestacRequest r;
  r.config = config_;
  r.seed = seed_;
  r.stream = hash_str(t.id) ^ (static_cast<uint64_t>(d) << 56);  // as corpus::check
  return r;
}

Execution Executor::run(const uint8_t* data, size_t size) const {
  Execution ex;
  begin_execution();
  ex.decoded = decode(*family_, dtypes_, data, size, base_);
  if (!ex.decoded.valid) return ex;
  const DType d = ex.decoded.input.dtype;
  for (const Target* t : targets_) {
    if (std::find(t->dtypes.begin(), t->dtypes.end(), d) == t->dtypes.end()) continue;
    TargetVerdict tv{t, pipeline::evaluate(*family_, *t, ex.decoded.input, request(*t, d))};
    record(feedback_, tv.verdict, d, ex.decoded.regime);
    ex.verdicts.push_back(std::move(tv));
  }
  return ex;
}

}  // namespace stabfuzz::fuzz
