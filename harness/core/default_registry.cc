// The default registry: every operator family stabfuzz knows (families/), joined with their
// planted bugs (injectors/), the library targets (libs/) and the GPU kernels (targets/).
#include "families/all_families.h"
#include "injectors/all_injectors.h"
#include "injectors/fault_mutants.h"
#include "libs/libraries.h"
#include "targets/gpu_targets.h"

namespace stabfuzz {

Registry& mutable_default_registry() {
  static Registry registry = [] {
    std::vector<Family> all;
    all.push_back(families::softmax_family());
    for (auto* group :
         {families::elementwise_families, families::reductions_families,
          families::normalization_families, families::losses_families, families::linalg_families,
          families::similarity_families, families::optimizer_families})
      for (auto& f : group()) all.push_back(std::move(f));
    injectors::attach_injectors(all);
    Registry r;
    for (auto& f : all) {
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
