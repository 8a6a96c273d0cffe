// Matching the findings of two runs and listing what appeared, disappeared or changed.
#include "reports/diff.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace stabfuzz::reports {
namespace {

std::string pair_key(const std::string& impl, const std::string& dtype) {
  return impl + " " + dtype;
}

// A campaign's findings come from many units, each with its own seed and engine: with the same
// campaign seed, a case is the same input only within the same unit seed and engine.
std::string finding_key(const Finding& f, bool same_seed, uint64_t run_seed) {
  if (!same_seed) return pair_key(f.impl, f.dtype) + " regime " + f.regime;
  return pair_key(f.impl, f.dtype) + " case " + std::to_string(f.case_index) +
         (f.engine == "fuzz" ? " fuzz" : "") +
         (f.seed != run_seed ? " seed " + std::to_string(f.seed) : "");
}

// Key -> the worst finding with that key.
std::map<std::string, const Finding*> index(const RunData& run, bool same_seed) {
  std::map<std::string, const Finding*> out;
  for (const auto& f : run.findings) {
    auto [it, inserted] = out.emplace(finding_key(f, same_seed, run.seed), &f);
    if (!inserted && worse(f, *it->second)) it->second = &f;
  }
  return out;
}

std::map<std::string, const ImplSummary*> pairs(const RunData& run) {
  std::map<std::string, const ImplSummary*> out;
  for (const auto& r : run.results) out[pair_key(r.impl, r.dtype)] = &r;
  return out;
}

// ULP errors differ by more than 2x (or one of them is not finite and the other is).
bool ulp_changed(double a, double b) {
  if (std::isfinite(a) != std::isfinite(b)) return true;
  if (!std::isfinite(a)) return false;
  const double lo = std::max(std::min(a, b), 1.0), hi = std::max(a, b);
  return hi > 2 * lo;
}

std::string describe(const Finding& f) {
  return f.severity + ", ULP error " + num(f.max_ulp) + ", " +
         (f.detectors.empty()
              ? std::string("no detector")
              : f.detectors.front() + (f.detectors.size() > 1 ? "+" + f.detectors[1] : "")) +
         (f.has_cestac ? ", " + num(f.digits, 2) + " digits" : "");
}

bool injected(const Finding& f) { return f.impl_kind == "injected"; }

}  // namespace

int RunDiff::exit_code() const {
  if (!lost_detection.empty()) return 1;
  for (const auto& e : added)
    if (!injected(*e.after)) return 1;
  for (const auto& e : changed)
    if (e.badness > 0 && !injected(*e.after)) return 1;
  return 0;
}

RunDiff diff_runs(const RunData& before, const RunData& after) {
  RunDiff d;
  d.same_seed = before.seed == after.seed;
  const auto old_pairs = pairs(before), new_pairs = pairs(after);
  for (const auto& [k, r] : old_pairs)
    if (!new_pairs.count(k)) d.only_old.push_back(k);
  for (const auto& [k, r] : new_pairs) {
    const auto it = old_pairs.find(k);
    if (it == old_pairs.end()) {
      d.only_new.push_back(k);
    } else if (r->injected() && it->second->failing_inputs > 0 && r->failing_inputs == 0) {
      d.lost_detection.push_back(k);
    }
  }
  const auto old_f = index(before, d.same_seed), new_f = index(after, d.same_seed);
  for (const auto& [k, f] : new_f) {
    const auto it = old_f.find(k);
    if (it == old_f.end()) {
      d.added.push_back({k, nullptr, f, 1});
      continue;
    }
    const Finding& o = *it->second;
    if (o.severity != f->severity || o.detectors != f->detectors || o.nonfinite != f->nonfinite ||
        ulp_changed(o.max_ulp, f->max_ulp))
      d.changed.push_back({k, &o, f, compare_badness(*f, o)});
  }
  for (const auto& [k, f] : old_f) {
    if (new_f.count(k)) continue;
    const auto p = new_pairs.find(pair_key(f->impl, f->dtype));
    if (p == new_pairs.end()) continue;  // not tested in NEW: listed in only_old
    const ImplSummary& r = *p->second;
    // Absent from NEW counts as fixed only when NEW recorded all its failing inputs and (same
    // seed) ran this case at all.
    const bool complete =
        r.findings >= r.failing_inputs && (!d.same_seed || f->case_index < r.inputs);
    (complete ? d.fixed : d.unconfirmed).push_back({k, f, nullptr, -1});
  }
  return d;
}

std::string render_diff(const RunDiff& d, const RunData& before, const RunData& after) {
  std::ostringstream os;
  os << "stabfuzz report --diff " << before.dir << " (seed " << before.seed << ") -> " << after.dir
     << " (seed " << after.seed << "), findings matched by "
     << (d.same_seed ? "implementation, dtype and case" : "implementation, dtype and regime")
     << "\n";
  os << d.added.size() << " new, " << d.fixed.size() << " fixed, " << d.changed.size()
     << " changed, " << d.unconfirmed.size() << " no longer recorded, " << d.lost_detection.size()
     << " planted bugs no longer detected\n";
  for (const auto& e : d.added)
    os << "new:     " << e.key << ": " << describe(*e.after) << "\n    replay: " << e.after->replay
       << "\n";
  for (const auto& e : d.fixed)
    os << "fixed:   " << e.key << ": was " << describe(*e.before) << "\n";
  for (const auto& e : d.changed)
    os << "changed: " << e.key << ": " << describe(*e.before) << " -> " << describe(*e.after)
       << (e.badness > 0   ? " (worse)"
           : e.badness < 0 ? " (better)"
                           : " (as bad)")
       << "\n";
  for (const auto& e : d.unconfirmed)
    os << "unrecorded: " << e.key << ": was " << describe(*e.before)
       << " (NEW recorded only some of its failing inputs)\n";
  for (const auto& k : d.lost_detection) os << "planted bug no longer detected: " << k << "\n";
  for (const auto& k : d.only_old) os << "only in OLD (not compared): " << k << "\n";
  for (const auto& k : d.only_new) os << "only in NEW: " << k << "\n";
  for (const auto& p : before.problems) os << "OLD " << p << "\n";
  for (const auto& p : after.problems) os << "NEW " << p << "\n";
  return os.str();
}

json::Value diff_json(const RunDiff& d, const RunData& before, const RunData& after) {
  auto entries = [](const std::vector<DiffEntry>& v) {
    json::Array a;
    for (const auto& e : v) {
      json::Value j;
      j.set("key", e.key);
      if (e.before) j.set("old", describe(*e.before));
      if (e.after) {
        j.set("new", describe(*e.after));
        j.set("replay", e.after->replay);
      }
      if (e.before && e.after)
        j.set("change", e.badness > 0 ? "worse" : e.badness < 0 ? "better" : "as bad");
      a.push_back(std::move(j));
    }
    return json::Value(std::move(a));
  };
  auto strings = [](const std::vector<std::string>& v) {
    json::Array a(v.begin(), v.end());
    return json::Value(std::move(a));
  };
  json::Value j;
  j.set("old", before.dir);
  j.set("new", after.dir);
  j.set("matched_by", d.same_seed ? "case" : "regime");
  j.set("new_findings", entries(d.added));
  j.set("fixed", entries(d.fixed));
  j.set("changed", entries(d.changed));
  j.set("no_longer_recorded", entries(d.unconfirmed));
  j.set("lost_detection", strings(d.lost_detection));
  j.set("only_old", strings(d.only_old));
  j.set("only_new", strings(d.only_new));
  j.set("exit_code", d.exit_code());
  return j;
}

}  // namespace stabfuzz::reports
