// Checks shared by the per-library tests: registration against the catalog, and each target's
// outputs judged by the family's oracle on typical inputs of the family.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "harness/pipeline/verdict.h"
#include "libs/libraries.h"
#include "stabfuzz/family.h"

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

}  // namespace stabfuzz::testing
