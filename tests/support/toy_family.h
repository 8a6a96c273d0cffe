// The smallest family the registry accepts: one value regime, an identity oracle and target, for
// tests of the registry and of what reads it (selectors).
#pragma once

#include <string>

#include "stabfuzz/family.h"

namespace stabfuzz::testing {

// A reference target `id` in f64 that returns its first argument.
inline Target toy_target(const std::string& id) {
  Target t;
  t.id = id;
  t.kind = TargetKind::reference;
  t.dtypes = {DType::f64};
  t.native = [](const Input& in) { return in.args.at(0).values; };
  return t;
}

// The family `name` with one target, `name/cpu/ref`.
inline Family toy_family(const std::string& name = "toy") {
  Family f;
  f.name = name;
  f.regimes.push_back(Regime{"any", "anything", [](Entropy&, DType d) {
                               Input in;
                               in.dtype = d;
                               in.args.push_back(Tensor{{1}, {0.0}});
                               return in;
                             }});
  f.validate = [](const Input&) -> std::optional<std::string> { return std::nullopt; };
  f.oracle = [](const Input&) { return OracleResult{}; };
  f.tolerance_ulps = [](DType, size_t) { return 1.0; };
  f.targets.push_back(toy_target(name + "/cpu/ref"));
  return f;
}

}  // namespace stabfuzz::testing
