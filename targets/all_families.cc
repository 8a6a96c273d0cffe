// The one explicit list of operator families stabfuzz knows.
#include "injectors/fault_mutants.h"
#include "targets/families.h"

namespace stabfuzz {

const Registry& default_registry() {
  static const Registry registry = [] {
    Registry r;
    std::vector<Family> families;
    families.push_back(targets::softmax_family());
    for (auto* group : {targets::elementwise_families, targets::reductions_families,
                        targets::normalization_families, targets::linalg_families})
      for (auto& f : group()) families.push_back(std::move(f));
    for (auto& f : families) {
      injectors::attach_fault_mutants(f);  // arithmetic faults planted in the stable targets
      r.add(std::move(f));
    }
    return r;
  }();
  return registry;
}

}  // namespace stabfuzz
