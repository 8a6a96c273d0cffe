// A campaign's work: which implementations, which shard, how the time budget is split into units.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

struct WorkItem {
  std::string family;
  std::string impl;
  TargetKind kind = TargetKind::reference;
  std::vector<DType> dtypes;
};

// The registered implementations `targets` names (selectors, comma-separated: all, families,
// libraries, kinds, family/library, implementation ids; harness/core/select.h), in registry order.
// Unavailable ones go to `unavailable` ("id: reason"). Throws InputError for an unknown selector
// or one that selects nothing runnable here.
std::vector<WorkItem> work_list(const Registry& reg, const std::string& targets,
                                std::vector<std::string>* unavailable);

struct Shard {
  int index = 1;  // 1..count
  int count = 1;
};
Shard parse_shard(const std::string& text);  // "I/N"; throws InputError
// Item k of the work list belongs to shard k % N + 1: deterministic, and the shards' union is the
// list.
std::vector<WorkItem> take_shard(const std::vector<WorkItem>& all, Shard s);

enum class Engine { property, fuzz };
const char* engine_name(Engine e);

// The seed of one unit: the same campaign seed gives the same units the same inputs, whatever the
// shard, the number of workers or the other targets.
uint64_t unit_seed(uint64_t campaign_seed, const std::string& impl, int round);

// What earlier units (and the baseline) say about one implementation, for the next round's budget.
struct ItemStats {
  int64_t findings = 0;           // this campaign's, deduplicated
  int64_t baseline_findings = 0;  // in the --baseline campaign
  bool detected = false;          // injected: some unit found its planted bug
  double corpus_growth = 0;       // new corpus entries per execution in its last fuzz unit
  bool fuzz_failed = false;       // a fuzz unit of it ended in a usage or internal error
  int units = 0;
};

// More time where the last campaign or earlier rounds found more and where coverage still grows;
// a planted bug that is still undetected gets more, a detected one the base share.
double item_weight(const WorkItem& item, const ItemStats& s);

struct PlannedUnit {
  size_t item = 0;  // index into the work list
  double budget_s = 0;
};

struct PlanInput {
  int round = 1;  // 1-based; round 1 property, 2 fuzz, then alternating
  double worker_seconds_left = 0;
  double worker_seconds_total = 0;
  int jobs = 1;
  double overhead_s = 0.35;  // a unit's wall time beyond its slice (start-up, loading, shrinking)
};

// Measured on an idle 2-core machine: start-up, shrinking and exit of one unit process. The
// campaign replaces it by the mean overhead of the units it has run so far.
constexpr double kUnitOverheadS = 0.35;
constexpr double kMinSliceS = 0.3;

Engine round_engine(int round);
// Round 1 and 2 give every implementation the same slice (30% of the budget each), so the whole
// list is covered; later rounds split half of what is left by weight. Empty: no worthwhile round.
std::vector<PlannedUnit> plan_round(const std::vector<WorkItem>& items,
                                    const std::vector<ItemStats>& stats, const PlanInput& in);

// "softmax/cpu/stable" -> "softmax-cpu-stable": one directory name per implementation.
std::string slug(const std::string& impl);

}  // namespace stabfuzz::campaign
