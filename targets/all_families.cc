// The one explicit list of operator families stabfuzz knows.
#include "injectors/all_injectors.h"
#include "injectors/fault_mutants.h"
#include "libs/libraries.h"
#include "targets/families.h"
#include "targets/gpu_targets.h"

namespace stabfuzz {

Registry& mutable_default_registry() {
  static Registry registry = [] {
    std::vector<Family> families;
    families.push_back(targets::softmax_family());
    for (auto* group :
         {targets::elementwise_families, targets::reductions_families,
          targets::normalization_families, targets::losses_families, targets::linalg_families,
          targets::similarity_families, targets::optimizer_families})
      for (auto& f : group()) families.push_back(std::move(f));
    injectors::attach_injectors(families);
    Registry r;
    for (auto& f : families) {
      injectors::attach_fault_mutants(f);  // arithmetic faults planted in the stable targets
      r.add(std::move(f));
    }
    // Targets outside the operator suite: real libraries and GPU kernels, each registered
    // when present in this build and on this machine, else listed as unavailable with why.
    libs::register_libraries(r);
    targets::register_gpu_targets(r);
    return r;
  }();
  return registry;
}

const Registry& default_registry() { return mutable_default_registry(); }

}  // namespace stabfuzz
