// Checks shared by the per-library tests: registration against the catalog, and each target's
// outputs judged by the family's oracle on typical inputs of the family.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "harness/pipeline/verdict.h"
#include "harness/triage/table.h"
#include "libs/libraries.h"
#include "stabfuzz/family.h"
#include "stabfuzz/version.h"

namespace stabfuzz::testing {

inline const UnavailableTarget* find_unavailable(const std::string& id) {
  for (const auto& u : default_registry().unavailable())
    if (u.id == id) return &u;
  return nullptr;
}

// Every catalog entry is either a registered library target (native only) or listed unavailable
// with a reason; returns the registered ones.
inline std::vector<std::pair<const Family*, const Target*>> registered(
    const std::vector<libs::LibraryTarget>& catalog) {
  std::vector<std::pair<const Family*, const Target*>> out;
  for (const auto& entry : catalog) {
    const auto [f, t] = default_registry().find_target(entry.id);
    if (!t) {
      const auto* u = find_unavailable(entry.id);
      EXPECT_NE(u, nullptr) << entry.id << " is neither registered nor listed unavailable";
      if (u) EXPECT_FALSE(u->reason.empty()) << entry.id;
      continue;
    }
    EXPECT_EQ(f->name, entry.family);
    EXPECT_EQ(t->kind, TargetKind::library) << entry.id;
    EXPECT_FALSE(t->cestac) << entry.id << ": a black box has no CESTAC entry";
    EXPECT_FALSE(t->dtypes.empty()) << entry.id;
    EXPECT_EQ(find_unavailable(entry.id), nullptr) << entry.id << " registered and unavailable";
    out.emplace_back(f, t);
  }
  return out;
}

// The catalog entries of a library not compiled in are all listed, each with `reason`.
inline void expect_listed_unavailable(const std::vector<libs::LibraryTarget>& catalog,
                                      const std::string& reason_part) {
  for (const auto& entry : catalog) {
    EXPECT_EQ(default_registry().find_target(entry.id).second, nullptr) << entry.id;
    const auto* u = find_unavailable(entry.id);
    ASSERT_NE(u, nullptr) << entry.id;
    EXPECT_NE(u->reason.find(reason_part), std::string::npos) << u->reason;
  }
}

// Inputs 0..count-1 of the family's first regime (its typical inputs) at this dtype: the target
// must stay within the family's tolerance on every one, as the verdict judges it — unless the pair
// is a known library finding (`known`: "id dtype"), which must then still fire on one of them, so
// that a library upgrade that fixes or changes it shows here.
// `cpu_dependent`: pairs whose library kernel is chosen by the CPU's capabilities, which err on
// some machines and not on others: a finding is tolerated there but not required.
inline void expect_accurate(const Family& f, const Target& t, DType d, int count,
                            const std::set<std::string>& known,
                            const std::set<std::string>& cpu_dependent = {}) {
  const std::string key = t.id + " " + std::string(dtype_name(d));
  bool fired = false;
  for (int i = 0; i < count; ++i) {
    SeededEntropy e(0x11b5, static_cast<uint64_t>(i));
    const Input in = f.regimes.at(0).sample(e, d);
    ASSERT_EQ(f.validate(in), std::nullopt) << t.id;
    const std::vector<double> y = t.native(in);
    const OracleResult o = f.oracle(in);
    ASSERT_EQ(y.size(), o.exact.size()) << key;
    for (double v : y) EXPECT_TRUE(representable(d, v) || std::isnan(v)) << key << " " << v;
    const Verdict v = judge(f, in, y, o, nullptr);
    fired |= v.oracle_fired;
    if (!known.count(key) && !cpu_dependent.count(key))
      EXPECT_FALSE(v.oracle_fired)
          << key << " input " << i << ": " << v.max_ulp << " ulps at output " << v.worst
          << " (computed " << v.computed << ", exact " << v.exact << ", cond " << v.cond << ", tol "
          << v.tolerance_ulps << ")";
  }
  if (known.count(key)) EXPECT_TRUE(fired) << key << ": a known library finding no longer fires";
}

// An input given by hand: the target's outputs must equal `expected` exactly (small integers and
// halves, exact in every dtype, whose results are exact too) — catches layout and shape mixups.
inline void expect_exact(const Target& t, Input in, const std::vector<double>& expected) {
  for (DType d : t.dtypes) {
    in.dtype = d;
    EXPECT_EQ(t.native(in), expected) << t.id << " " << dtype_name(d);
  }
}

// A real sample per regime, judged as a run judges it: `per_regime` seeded cases of every regime
// of the family (pipeline::make_case, seed 1: what `stabfuzz --target` draws first), every dtype of
// every registered target of `catalog`. Each finding's implementation x dtype x kind must have a
// verdict in docs/results/library-verdicts.tsv (the library triage), so no pair is called clean
// where this machine's library has a finding. Findings depend on the CPU (oneDNN picks its kernels
// by ISA: bf16 only with AVX-512, FTZ in some): the failure message names the machine.
inline void expect_findings_triaged(const std::vector<libs::LibraryTarget>& catalog,
                                    int per_regime) {
  const auto verdicts = triage::read_verdicts(std::string(STABFUZZ_SOURCE_DIR) +
                                              "/docs/results/library-verdicts.tsv");
  auto triaged = [&](const std::string& impl, const std::string& dtype, const std::string& kind) {
    for (const auto& v : verdicts)
      if (v.impl == impl && (v.dtype == "*" || v.dtype == dtype) &&
          (v.kind == "*" || v.kind == kind))
        return true;
    return false;
  };
  int judged = 0;
  for (const auto& [f, t] : registered(catalog))
    for (DType d : t->dtypes) {
      std::set<std::string> reported;  // one failure per implementation x dtype x kind
      const auto n = static_cast<int64_t>(f->regimes.size()) * per_regime;
      for (int64_t i = 0; i < n; ++i) {
        const Input in = pipeline::make_case(*f, d, 1, i);
        const Verdict v = pipeline::decide(*f, in, t->native(in), f->oracle(in), nullptr);
        ++judged;
        if (!v.finding()) continue;
        const std::string kind(finding_kind_name(v.kind));
        if (triaged(t->id, std::string(dtype_name(d)), kind) || !reported.insert(kind).second)
          continue;
        ADD_FAILURE() << t->id << " " << dtype_name(d) << ": an untriaged " << kind
                      << " finding on case " << i << " (regime "
                      << pipeline::case_regime(*f, i).name << ", seed 1: " << v.max_ulp
                      << " ulps, computed " << v.computed << ", exact " << v.exact
                      << "); on this machine (" << machine_description()
                      << "): triage it in docs/results/library-verdicts.tsv";
      }
    }
  if (!registered(catalog).empty()) EXPECT_GT(judged, 0);
}

}  // namespace stabfuzz::testing
