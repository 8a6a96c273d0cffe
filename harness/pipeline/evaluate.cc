// Evaluation and shrinking: the one place an input meets a target, the oracle and the verdict.
#include "harness/pipeline/evaluate.h"

#include <chrono>
#include <cmath>

#include "harness/gen/input_gen.h"

namespace stabfuzz::pipeline {

using Clock = std::chrono::steady_clock;

Verdict decide(const Family& family, const Input& in, const std::vector<double>& out,
               const OracleResult& oracle, const CestacOutput* cestac) {
  Verdict v = judge(family, in, out, oracle, cestac);
  classify_subnormal_inputs(v, family, in, out);
  return v;
}

Verdict evaluate(const Family& family, const Target& target, const Input& in,
                 const CestacRequest& req) {
  const std::vector<double> out = target.native(in);
  const OracleResult oracle = family.oracle(in);
  if (target.cestac) {
    const CestacOutput c = target.cestac(in, req);
    return decide(family, in, out, oracle, &c);
  }
  return decide(family, in, out, oracle, nullptr);
}

std::pair<rc::Shrinkable<Input>, int64_t> shrink(const std::function<bool(const Input&)>& fails,
                                                 rc::Shrinkable<Input> cur, int64_t budget,
                                                 double max_seconds) {
  int64_t steps = 0, evals = 0;
  bool progress = true;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(max_seconds > 0 ? max_seconds : 0));
  auto out_of_time = [&] { return max_seconds > 0 && Clock::now() >= deadline; };
  while (progress && evals < budget && !out_of_time()) {
    progress = false;
    auto seq = cur.shrinks();
    while (auto child = seq.next()) {
      if (++evals > budget || out_of_time()) break;
      const Input cand = child->value();
      if (fails(cand)) {
        cur = std::move(*child);
        ++steps;
        progress = true;
        break;
      }
    }
  }
  return {std::move(cur), steps};
}

bool same_outputs(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool nan = std::isnan(a[i]) && std::isnan(b[i]);
    if (!nan && !(a[i] == b[i] && std::signbit(a[i]) == std::signbit(b[i]))) return false;
  }
  return true;
}

bool pins_planted_change(const Family& family, const Target& injected, const Target& reference,
                         const Input& in, const CestacRequest& req) {
  if (evaluate(family, reference, in, req).finding()) return false;
  return !same_outputs(injected.native(in), reference.native(in));
}

const Target* reference_target(const Family& family) {
  for (const auto& t : family.targets)
    if (t.kind == TargetKind::reference) return &t;
  return nullptr;
}

std::pair<Input, int64_t> shrink_failing(const Family& family, const Target& target,
                                         const Input& in, const CestacRequest& req, int64_t budget,
                                         double max_seconds, const Target* reference) {
  const Family* fam = &family;
  auto sh =
      rc::shrinkable::shrinkRecur(in, [fam](const Input& x) { return gen::shrink_input(*fam, x); });
  // The shrunk input fails the same way: an accuracy finding is not shrunk into an underflow.
  const FindingKind kind = evaluate(family, target, in, req).kind;
  // Pinning the planted change is kept only when the first failing input does.
  const bool pin = reference && pins_planted_change(family, target, *reference, in, req);
  auto fails = [&](const Input& x) {
    const Verdict v = evaluate(family, target, x, req);
    return v.finding() && v.kind == kind &&
           (!pin || pins_planted_change(family, target, *reference, x, req));
  };
  auto [small, steps] = shrink(fails, std::move(sh), budget, max_seconds);
  return {small.value(), steps};
}

}  // namespace stabfuzz::pipeline
