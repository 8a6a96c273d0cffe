// One fuzz execution, judged like every other engine's input (pipeline::evaluate).
#include "harness/fuzz/executor.h"

#include <algorithm>

#include "harness/core/select.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::fuzz {

bool Execution::finding() const {
  return std::any_of(verdicts.begin(), verdicts.end(),
                     [](const TargetVerdict& tv) { return tv.verdict.finding(); });
}

namespace {

// The targets `--target` names for fuzzing: one family (its references and libraries; its planted
// bugs only when named with --impl or a selector), or family/library, family/kind, an id.
std::vector<const Target*> fuzz_targets(const Registry& registry, const std::string& target,
                                        const std::string& impl, const Family** family) {
  const select::Selection sel = select::select(registry, target, "--target");
  const std::vector<std::string> families = sel.families();
  if (families.size() != 1)
    throw InputError(
        "fuzz takes one family: --target FAMILY or FAMILY/LIBRARY (softmax, "
        "softmax/torch); '" +
        target + "' spans " + std::to_string(families.size()) +
        " families (stabfuzz campaign --targets " + target + " covers them all)");
  *family = registry.find_family(families.front());
  const bool whole_family = target == families.front();
  std::vector<const Target*> out;
  for (const auto& [f, t] : sel.targets) {
    if (impl.empty() ? whole_family && t->kind == TargetKind::injected : t->id != impl) continue;
    out.push_back(t);
  }
  if (out.empty())
    throw InputError(impl.empty()
                         ? target + " has no reference implementation to fuzz (give --impl)"
                         : "unknown implementation '" + impl + "' of " + target +
                               " (stabfuzz --list shows them)");
  return out;
}

}  // namespace

Executor::Executor(const Registry& registry, const std::string& family, const std::string& impl,
                   const std::vector<DType>& dtypes, Feedback feedback, uint64_t seed,
                   cestac::Config config, Base base)
    : feedback_(feedback), base_(base), seed_(seed), config_(config) {
  targets_ = fuzz_targets(registry, family, impl, &family_);
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

Executor::Shrunk Executor::shrink(const Target& t, const Input& in, const Verdict& v, int64_t evals,
                                  double max_seconds) const {
  const CestacRequest req = request(t, in.dtype);
  auto [small, steps] = pipeline::shrink_failing(*family_, t, in, req, evals, max_seconds);
  Verdict sv = pipeline::evaluate(*family_, t, small, req);
  if (!sv.finding()) return {in, 0, v};
  return {std::move(small), steps, std::move(sv)};
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
