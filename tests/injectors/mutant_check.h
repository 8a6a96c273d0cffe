// Shared by the tests of the planted unstable formulations (tests/injectors/<group>_test.cc): the
// hand-picked inputs, and the checks that a group's mutants are registered under their ids, caught
// on an input of their failing region and fine on a benign one.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "harness/pipeline/evaluate.h"
#include "stabfuzz/family.h"

namespace stabfuzz::mutant_check {

using Params = std::vector<std::pair<std::string, double>>;

inline Input row(DType d, std::vector<double> v, Params p = {}) {
  const auto n = static_cast<int64_t>(v.size());
  return regime::make_input(d, {Tensor{{n}, std::move(v)}}, std::move(p));
}
inline Input rows2(DType d, std::vector<double> a, std::vector<double> b, Params p = {}) {
  const auto n = static_cast<int64_t>(a.size());
  return regime::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{n}, std::move(b)}},
                            std::move(p));
}
inline Input matrix(DType d, int64_t r, int64_t c, std::vector<double> v) {
  return regime::make_input(d, {Tensor{{r, c}, std::move(v)}});
}
inline Input gemm(DType d, std::vector<double> a, std::vector<double> b) {
  const auto k = static_cast<int64_t>(a.size());
  return regime::make_input(d, {Tensor{{1, k}, std::move(a)}, Tensor{{k, 1}, std::move(b)}});
}
inline Input attention(DType d, double q, std::vector<double> v) {
  return regime::make_input(
      d, {Tensor{{1, 1}, {q}}, Tensor{{2, 1}, {1, 1}}, Tensor{{2, 1}, std::move(v)}});
}
// One Adam step of p, g, m, v (one value each).
inline Input adam(DType d, std::vector<double> pgmv, double step, double beta2) {
  std::vector<Tensor> t;
  for (double x : pgmv) t.push_back(Tensor{{1}, {x}});
  return regime::make_input(d, std::move(t), {{"step", step}, {"beta2", beta2}});
}

// One mutant's hand-picked inputs: `bad` lies in its failing region, `good` (when one exists) is
// an input where the formulation is as accurate as the stable one.
struct Case {
  std::string id;
  Input bad;
  std::optional<Input> good;
};

inline Verdict judge(const std::string& id, const Input& in) {
  const auto [family, target] = default_registry().find_target(id);
  if (!family) throw std::runtime_error("no target " + id);
  if (auto err = family->validate(in)) throw std::runtime_error(id + ": invalid input: " + *err);
  CestacRequest req;
  req.seed = 1;
  return pipeline::evaluate(*family, *target, in, req);
}

// The outputs of target `id`, and of its family's reference target, on `in`.
inline std::vector<double> native(const std::string& id, const Input& in) {
  const auto [family, target] = default_registry().find_target(id);
  if (!target) throw std::runtime_error("no target " + id);
  return target->native(in);
}
inline std::vector<double> reference(const std::string& id, const Input& in) {
  const auto [family, target] = default_registry().find_target(id);
  if (!family) throw std::runtime_error("no target " + id);
  for (const auto& t : family->targets)
    if (t.kind == TargetKind::reference) return t.native(in);
  throw std::runtime_error("no reference target in " + family->name);
}

// The mutant's outputs on `in` are within `ulps` of its family's reference target's.
inline void expect_agrees(const std::string& id, const Input& in, double ulps) {
  const std::vector<double> y = native(id, in), r = reference(id, in);
  ASSERT_EQ(y.size(), r.size()) << id;
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_LE(ulp_distance(in.dtype, y[i], r[i]), ulps)
        << id << " output " << i << ": " << y[i] << ", reference " << r[i];
}

// The group's mutants, as its file builds them, are the cases' ids, one case each, and each is in
// the default registry under its id, kind injected, in the family the id names.
inline void expect_registered(const std::vector<Target>& group, const std::vector<Case>& cases) {
  std::set<std::string> ids, covered;
  for (const auto& t : group) EXPECT_TRUE(ids.insert(t.id).second) << "twice: " << t.id;
  for (const auto& c : cases) EXPECT_TRUE(covered.insert(c.id).second) << "two cases: " << c.id;
  EXPECT_EQ(ids, covered);
  for (const auto& t : group) {
    SCOPED_TRACE(t.id);
    const auto [family, registered] = default_registry().find_target(t.id);
    ASSERT_NE(registered, nullptr);
    EXPECT_EQ(t.id.rfind(family->name + "/injected/", 0), 0u);
    EXPECT_EQ(registered->kind, TargetKind::injected);
    EXPECT_EQ(registered->description, t.description);
    EXPECT_EQ(registered->dtypes, t.dtypes);
  }
}

// Each mutant is caught on its `bad` input, by the oracle where its row expects the oracle to see
// it.
inline void expect_caught(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    const Verdict v = judge(c.id, c.bad);
    EXPECT_TRUE(v.finding()) << "max_ratio " << v.max_ratio << " digits deficit "
                             << v.digits_deficit;
    const auto [family, target] = default_registry().find_target(c.id);
    const auto& e = target->injection->expected_detection;
    if (e == "oracle" || e == "both") EXPECT_TRUE(v.oracle_fired);
  }
}

// Each mutant with a `good` input gives no finding there.
inline void expect_benign(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    if (!c.good) continue;
    SCOPED_TRACE(c.id);
    const Verdict v = judge(c.id, *c.good);
    EXPECT_FALSE(v.finding()) << "max_ratio " << v.max_ratio << " digits deficit "
                              << v.digits_deficit << " detectors " << v.detectors();
  }
}

}  // namespace stabfuzz::mutant_check
