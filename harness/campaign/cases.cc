// The evaluation loop of in-process runs and the inputs it generates.
#include "harness/campaign/cases.h"

#include <stdexcept>
#include <string>

#include "harness/pipeline/case.h"
#include "stabfuzz/entropy.h"

namespace stabfuzz::campaign {

std::optional<Generator> parse_generator(std::string_view s) {
  if (s == "regimes") return Generator::regimes;
  if (s == "uniform") return Generator::uniform;
  return std::nullopt;
}

std::string_view generator_name(Generator g) {
  return g == Generator::regimes ? "regimes" : "uniform";
}

Input generate_case(const Family& family, Generator g, DType d, uint64_t seed, int64_t index) {
  Input in = pipeline::make_case(family, d, seed, index);
  // An invalid input can make a correct kernel look broken.
  if (auto bad = family.validate(in))
    throw std::logic_error("regime '" + pipeline::case_regime(family, index).name + "' of " +
                           family.name + " generated an invalid " + std::string(dtype_name(d)) +
                           " input (case " + std::to_string(index) + "): " + *bad);
  if (g == Generator::regimes) return in;
  SeededEntropy e(seed ^ hash_str(family.name),
                  (static_cast<uint64_t>(index) << 2) | static_cast<uint64_t>(d));
  for (size_t k = 0; k < in.args.size(); ++k) {
    for (double lo : {-1.0, 0.0}) {
      Input cand = in;
      for (auto& v : cand.args[k].values) v = round_to(d, e.uniform(lo, 1.0));
      if (!family.validate(cand)) {
        in = std::move(cand);
        break;
      }
    }
  }
  return in;
}

CestacRequest target_request(const Target& t, DType d, uint64_t seed,
                             const cestac::Config& config) {
  CestacRequest r;
  r.config = config;
  r.seed = seed;
  r.stream = hash_str(t.id) ^ (static_cast<uint64_t>(d) << 56);
  return r;
}

void run_cases(const Family& f, const Target& t, const CasePlan& plan,
               const std::function<bool(const CaseRun&)>& visit) {
  using Clock = std::chrono::steady_clock;
  const auto nd = static_cast<int64_t>(plan.dtypes.size());
  if (nd == 0) throw std::logic_error("run_cases: no dtype to run " + t.id + " in");
  for (int64_t k = plan.first; k < plan.last; ++k) {
    if (k > plan.first &&
        !(std::chrono::duration<double>(Clock::now() - plan.start).count() < plan.budget_s))
      return;
    const DType d = plan.dtypes[static_cast<size_t>(k % nd)];
    const int64_t index = k / nd;
    const Input in = generate_case(f, plan.generator, d, plan.seed, index);
    const CestacRequest req = plan.stream_per_case
                                  ? pipeline::cestac_request(t, d, plan.seed, index, plan.cestac)
                                  : target_request(t, d, plan.seed, plan.cestac);
    const Outcome o = evaluate_outcome(f, t, in, req, plan.isolator);
    if (!visit(CaseRun{k, d, index, in, req, o, o.verdict})) return;
  }
}

}  // namespace stabfuzz::campaign
