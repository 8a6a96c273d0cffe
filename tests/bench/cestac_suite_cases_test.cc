// Cases of the broad CESTAC calibration suite (harness/bench/cestac_suite_cases.cc): the kinds'
// table, cases that replay from their seed and are exact in their dtype, their streams and exact
// answers.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "harness/bench/cestac_suite.h"

namespace stabfuzz::calibrate::suite {
namespace {

TEST(CestacSuiteCases, TableIsConsistent) {
  ASSERT_EQ(kinds().size(), static_cast<size_t>(kKernelKinds));
  EXPECT_GE(kinds().size(), 12u);
  int low = 0;
  for (size_t i = 0; i < kinds().size(); ++i) {
    const KindInfo& k = kinds()[i];
    EXPECT_EQ(static_cast<size_t>(k.kind), i) << k.name;
    EXPECT_EQ(find_kind(k.name), &k);
    ASSERT_GE(k.dtypes.size(), 2u) << k.name;
    EXPECT_EQ(k.dtypes[0], DType::f64);
    EXPECT_EQ(k.dtypes[1], DType::f32);
    low += k.dtypes.size() > 2;
  }
  EXPECT_GE(low, 1);
  EXPECT_EQ(find_kind("nope"), nullptr);
  EXPECT_NE(find_variant("stoch3"), nullptr);
}

TEST(CestacSuiteCases, ReplayFromTheirSeedAndAreExactInTheirDtype) {
  const Variant& v = variants().front();
  for (const auto& k : kinds()) {
    for (DType d : k.dtypes) {
      const Case a = make_case(k.kind, d, 7, 13, 40), b = make_case(k.kind, d, 7, 13, 40);
      EXPECT_EQ(a.problem.x, b.problem.x) << k.name;
      EXPECT_EQ(a.problem.y, b.problem.y) << k.name;
      EXPECT_EQ(a.problem.a, b.problem.a) << k.name;
      EXPECT_EQ(a.problem.n, b.problem.n) << k.name;
      EXPECT_EQ(a.exact.hi, b.exact.hi) << k.name;
      const Verdict va = judge(v, a), vb = judge(v, b);
      EXPECT_EQ(va.claim.digits, vb.claim.digits) << k.name;
      EXPECT_TRUE(va.claim.mean == vb.claim.mean || std::isnan(va.claim.mean)) << k.name;
      for (double x : a.problem.x) EXPECT_EQ(round_to(d, x), x) << k.name;
      for (double x : a.problem.y) EXPECT_EQ(round_to(d, x), x) << k.name;
      for (double x : {a.problem.a, a.problem.b, a.problem.c}) EXPECT_EQ(round_to(d, x), x);
      const Case other = make_case(k.kind, d, 8, 13, 40);
      EXPECT_TRUE(other.problem.x != a.problem.x || other.problem.a != a.problem.a ||
                  other.problem.b != a.problem.b || other.problem.c != a.problem.c)
          << k.name << ": another seed, other inputs";
    }
  }
}

TEST(CestacSuiteCases, StreamsDifferByKindDtypeAndIndex) {
  std::set<uint64_t> streams;
  size_t n = 0;
  for (const auto& k : kinds())
    for (DType d : k.dtypes)
      for (int i = 0; i < 4; ++i, ++n) streams.insert(case_stream(k.kind, d, i));
  EXPECT_EQ(streams.size(), n);
  EXPECT_EQ(case_stream(KernelKind::offset_sum, DType::f32, 2),
            case_stream(KernelKind::offset_sum, DType::f32, 2));
}

TEST(CestacSuiteCases, EachCarriesTheExactAnswerOfItsProblem) {
  for (const auto& k : kinds()) {
    const Case c = make_case(k.kind, DType::f64, 3, 5, 10);
    EXPECT_EQ(c.kind, k.kind);
    EXPECT_EQ(c.dtype, DType::f64);
    EXPECT_EQ(c.seed, 3u);
    EXPECT_EQ(c.index, 5);
    const Exact e = exact_answer(k.kind, c.problem);
    EXPECT_EQ(c.exact.zero, e.zero) << k.name;
    EXPECT_EQ(c.exact.hi, e.hi) << k.name;
    EXPECT_EQ(c.exact.lo, e.lo) << k.name;
    EXPECT_EQ(c.exact.exp, e.exp) << k.name;
  }
  // Case 0 of quadratic_root is the input.
  const Case q = make_case(KernelKind::quadratic_root, DType::f64, 1, 0, 10);
  EXPECT_EQ(q.problem.a, kQuadA);
  EXPECT_EQ(q.problem.b, kQuadB);
  EXPECT_EQ(q.problem.c, kQuadC);
}

}  // namespace
}  // namespace stabfuzz::calibrate::suite
