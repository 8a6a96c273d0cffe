// Joins the injected targets of every group to their families by name.
#include "injectors/all_injectors.h"

#include <stdexcept>
#include <string>

#include "injectors/elementwise.h"
#include "injectors/linalg.h"
#include "injectors/normalization.h"
#include "injectors/reductions.h"
#include "injectors/softmax.h"

namespace stabfuzz::injectors {

std::vector<Target> all_mutants() {
  std::vector<Target> out;
  for (auto* group : {softmax_injected_targets, elementwise_mutants, reduction_mutants,
                      normalization_mutants, linalg_mutants})
    for (auto& t : group()) out.push_back(std::move(t));
  return out;
}

void attach_injectors(std::vector<Family>& families) {
  for (auto& t : all_mutants()) {
    const std::string family = t.id.substr(0, t.id.find('/'));
    Family* f = nullptr;
    for (auto& g : families)
      if (g.name == family) f = &g;
    if (!f) throw std::logic_error("injected target " + t.id + ": no family '" + family + "'");
    f->targets.push_back(std::move(t));
  }
  // Failing regions the families' own regimes reach too rarely; the stable targets are verified
  // free of findings on them (docs/results.md).
  for (auto& g : families)
    if (g.name == "adam")
      g.regimes.push_back(adam_early_steps_regime());
    else if (g.name == "logsumexp")
      g.regimes.push_back(logsumexp_masked_rows_regime());
}

}  // namespace stabfuzz::injectors
