// One registry row of a planted unstable formulation: a Target of kind injected with its Injection.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "stabfuzz/family.h"
#include "stabfuzz/op.h"

namespace stabfuzz::injectors {

// The fields of a mutant's row besides its template: `expected` is "oracle", "cestac" or "both".
struct MutantRow {
  std::string id;  // family/injected/name
  std::string description;
  std::vector<DType> dtypes;
  std::string plants, fails_where, fix, expected;
};

// Op runs natively (op_native) and under CESTAC (op_cestac), like the stable targets.
template <class Op>
Target mutant(MutantRow r) {
  Target t;
  t.id = std::move(r.id);
  t.kind = TargetKind::injected;
  t.description = std::move(r.description);
  t.dtypes = std::move(r.dtypes);
  t.native = op_native<Op>();
  t.cestac = op_cestac<Op>();
  t.injection = Injection{std::move(r.plants), std::move(r.fails_where), std::move(r.fix),
                          std::move(r.expected)};
  return t;
}

inline const std::vector<DType> kF64F32 = {DType::f64, DType::f32};

}  // namespace stabfuzz::injectors
