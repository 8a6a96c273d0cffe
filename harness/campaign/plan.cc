// The campaign's work list, shards, unit seeds and the split of the time budget into rounds.
#include "harness/campaign/plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "harness/core/select.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

std::vector<WorkItem> work_list(const Registry& reg, const std::string& targets,
                                std::vector<std::string>* unavailable) {
  const select::Selection sel = select::select(reg, targets, "--targets");
  std::vector<WorkItem> out;
  for (const auto& p : sel.targets)
    out.push_back({p.family->name, p.target->id, p.target->kind, p.target->dtypes});
  if (unavailable)
    for (const auto* u : sel.unavailable) unavailable->push_back(u->id + ": " + u->reason);
  return out;
}

Shard parse_shard(const std::string& text) {
  Shard s;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &s.index, &s.count, &tail) != 2 || s.count < 1 ||
      s.index < 1 || s.index > s.count)
    throw InputError("--shard '" + text + "' is not I/N with 1 <= I <= N (e.g. 2/4)");
  return s;
}

std::vector<WorkItem> take_shard(const std::vector<WorkItem>& all, Shard s) {
  std::vector<WorkItem> out;
  for (size_t k = 0; k < all.size(); ++k)
    if (static_cast<int>(k % static_cast<size_t>(s.count)) + 1 == s.index) out.push_back(all[k]);
  return out;
}

const char* engine_name(Engine e) { return e == Engine::property ? "property" : "fuzz"; }

uint64_t unit_seed(uint64_t campaign_seed, const std::string& impl, int round) {
  // A positive seed below 2^31: it goes on command lines and libFuzzer takes -seed modulo 2^32.
  const uint64_t h = cestac::mix64(cestac::mix64(campaign_seed) ^ hash_str(impl) ^
                                   (static_cast<uint64_t>(round) * 0x9e3779b97f4a7c15ULL));
  return (h % 2147483646ULL) + 1;
}

double item_weight(const WorkItem& item, const ItemStats& s) {
  double w = 1;
  if (item.kind == TargetKind::injected) {
    if (!s.detected) w += 2;  // the planted bug still hides: the detectors need more inputs
  } else {
    const double found = static_cast<double>(s.findings + s.baseline_findings);
    w += std::min(3.0, std::log2(1 + found));
  }
  if (s.corpus_growth >= 0.01) w += 2;  // >= 1 new corpus entry per 100 executions: still exploring
  return w;
}

Engine round_engine(int round) { return round % 2 == 1 ? Engine::property : Engine::fuzz; }

std::vector<PlannedUnit> plan_round(const std::vector<WorkItem>& items,
                                    const std::vector<ItemStats>& stats, const PlanInput& in) {
  std::vector<PlannedUnit> out;
  const double overhead = std::max(0.0, in.overhead_s);
  if (items.empty() || in.worker_seconds_left < kMinSliceS + overhead) return out;
  const Engine engine = round_engine(in.round);
  std::vector<size_t> eligible;
  for (size_t k = 0; k < items.size(); ++k)
    if (!(engine == Engine::fuzz && stats[k].fuzz_failed)) eligible.push_back(k);
  if (eligible.empty()) return out;
  const auto n = static_cast<double>(eligible.size());
  if (in.round <= 2) {
    const double share = std::min(0.3 * in.worker_seconds_total, in.worker_seconds_left);
    const double slice = std::clamp(share / n - overhead, kMinSliceS, 600.0);
    for (size_t k : eligible) out.push_back({k, slice});
    return out;
  }
  // Later rounds: half of what is left (all of it when little is left), by weight.
  double budget = in.worker_seconds_left;
  if (budget > 40.0 * in.jobs) budget /= 2;
  std::vector<double> w(items.size(), 0);
  double total = 0;
  for (size_t k : eligible) total += (w[k] = item_weight(items[k], stats[k]));
  // Highest weight first; an item whose share would be below the minimum slice waits a round.
  std::vector<size_t> order = eligible;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return w[a] > w[b]; });
  for (size_t k : order) {
    const double slice = budget * w[k] / total - overhead;
    if (slice < kMinSliceS) continue;
    out.push_back({k, std::min(slice, 600.0)});
  }
  if (out.empty())  // too little left to share: the heaviest items get the minimum slice
    for (size_t k : order) {
      if (budget < kMinSliceS + overhead) break;
      out.push_back({k, kMinSliceS});
      budget -= kMinSliceS + overhead;
    }
  std::sort(out.begin(), out.end(),
            [](const PlannedUnit& a, const PlannedUnit& b) { return a.item < b.item; });
  return out;
}

std::string slug(const std::string& impl) {
  std::string s = impl;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '-';
  return s;
}

}  // namespace stabfuzz::campaign
