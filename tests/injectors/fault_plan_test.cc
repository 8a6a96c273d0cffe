// Fault plans (injectors/fault_plan.cc): every fault strikes and names its site, a plan acts only
// inside its scope and thread, the reference operators ignore it, kinds' names, nested scopes, the
// last run's report and how it is described.
#include "injectors/fault_plan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "harness/pipeline/case.h"
#include "injectors/faultable.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/op.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz {
namespace {

using fault::Kind;

// One operator touching every operation class a fault acts on: sums, products, inexact
// divisions, an elementary function and a subnormal operand.
struct Probe {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    using std::exp;
    const auto& x = a.x[0];
    return {x[0] + x[1],  x[0] * x[0], T(1) / T(3), T(2) / T(3),
            T(1) / T(10), exp(x[1]),   x[2] * T(1)};
  }
};

Input probe_input(DType d) {
  Input in;
  in.dtype = d;
  const double a =
      d == DType::f64 ? 1 + 0x1p-30 : 1 + 0x1p-20;  // squares need more bits than TF32/f32
  const double sub = d == DType::f64 ? 0x1p-1070 : 0x1p-140;  // subnormal in the dtype
  in.args.push_back(Tensor{{3}, {a, 0x1p-20, sub}});
  return in;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  // Empty vectors may hold null data, which memcmp must not see.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

TEST(Faults, EveryScalarFaultStrikesAndNamesItsSite) {
  const auto native = fault::faultable<Probe>()->faulty_scalar;
  for (DType d : {DType::f64, DType::f32}) {
    const Input in = probe_input(d);
    const std::vector<double> clean = native(in);
    for (int k = 0; k < fault::kKindCount; ++k) {
      const Kind kind = static_cast<Kind>(k);
      if (!fault::scalar_fault(kind)) continue;
      SCOPED_TRACE(std::string(fault::kind_name(kind)) + " " + std::string(dtype_name(d)));
      fault::Scope scope(kind, fault::single_site(kind) ? 0 : -1);  // single-site: the first op
      const std::vector<double> faulty = native(in);
      const fault::State& st = scope.state();
      EXPECT_GT(st.strikes, 0);
      EXPECT_FALSE(same_bits(clean, faulty));
      ASSERT_NE(st.first_address, 0u);
      EXPECT_NE(cestac::symbolize(st.first_address).find("fault_plan_test.cc"), std::string::npos)
          << cestac::symbolize(st.first_address);
    }
  }
}

TEST(Faults, SequentialSumStrikesInPlaceOfThePairwiseSum) {
  std::vector<float> x(1000, 0.1f);
  x[0] = 1e4f;
  fault::Scope scope(Kind::sequential_sum);
  // The plan in scope does not reach the pairwise sum: the fault is the policy type only.
  const float pairwise = targets::PairwiseSums::sum(x.data(), x.size());
  EXPECT_EQ(pairwise, targets::pairwise_sum(x.data(), x.size()));
  EXPECT_EQ(scope.state().eligible, 0);
  const float seq = fault::SequentialSums::sum(x.data(), x.size());
  float loop = x[0];
  for (size_t i = 1; i < x.size(); ++i) loop += x[i];
  EXPECT_EQ(seq, loop);
  EXPECT_NE(seq, pairwise);
  EXPECT_EQ(scope.state().strikes, 1);
  EXPECT_NE(scope.state().first_address, 0u);
}

TEST(Faults, APlanActsOnlyInsideItsScopeAndThread) {
  const auto native = fault::faultable<Probe>()->faulty_scalar;
  const Input in = probe_input(DType::f64);
  const std::vector<double> before = native(in);
  std::vector<double> inside, other_thread;
  {
    fault::Scope scope(Kind::add_bf16);
    inside = native(in);
    std::thread([&] { other_thread = native(in); }).join();
  }
  EXPECT_EQ(fault::current, nullptr);
  EXPECT_FALSE(same_bits(before, inside));
  EXPECT_TRUE(same_bits(before, other_thread));
  EXPECT_TRUE(same_bits(before, native(in)));
}

// The reference operators read no fault state: a plan in scope changes nothing they compute; only
// their instantiations on the injectors' types (Target::faultable) see it.
TEST(Faults, ReferenceTargetsIgnoreAPlanInScope) {
  const Registry& reg = default_registry();
  for (const char* family : {"softmax", "sum", "layer_norm", "gemm", "exp"}) {
    SCOPED_TRACE(family);
    const Family* f = reg.find_family(family);
    ASSERT_NE(f, nullptr);
    const Target& stable = f->targets.at(0);
    ASSERT_EQ(stable.kind, TargetKind::reference);
    ASSERT_TRUE(stable.faultable);
    const Input in = pipeline::make_case(*f, DType::f32, 3, 0);
    const std::vector<double> clean = stable.native(in);
    for (Kind kind : {Kind::add_bf16, Kind::sequential_sum, Kind::flush_subnormals}) {
      fault::Scope scope(kind);
      EXPECT_TRUE(same_bits(clean, stable.native(in))) << fault::kind_name(kind);
      EXPECT_EQ(scope.state().eligible, 0) << fault::kind_name(kind);
    }
    EXPECT_TRUE(same_bits(clean, stable.faultable->faulty_scalar(in)));  // no plan: unchanged
    if (std::string(family) == "exp") {  // no sum to make sequential: the same operator
      EXPECT_TRUE(same_bits(clean, stable.faultable->sequential_sums_native(in)));
    }
  }
}

TEST(FaultPlan, EveryKindHasItsOwnName) {
  std::set<std::string> names;
  for (int k = 0; k < fault::kKindCount; ++k) {
    const std::string name(fault::kind_name(static_cast<Kind>(k)));
    EXPECT_NE(name, "?") << k;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(fault::kind_name(Kind::add_bf16), "add_bf16");
  EXPECT_EQ(fault::kind_name(Kind::div_approx_reciprocal), "div_approx_reciprocal");
  EXPECT_EQ(fault::kind_name(Kind::kCount), "?");
}

TEST(FaultPlan, ScopesNestAndRestoreThePlanAround) {
  ASSERT_EQ(fault::current, nullptr);
  {
    fault::Scope outer(Kind::add_f16);
    EXPECT_EQ(fault::current, &outer.state());
    EXPECT_EQ(outer.state().kind, Kind::add_f16);
    EXPECT_EQ(outer.state().strike_at, -1);
    {
      fault::Scope inner(Kind::perturb_ulps, 7);
      EXPECT_EQ(fault::current, &inner.state());
      EXPECT_EQ(inner.state().strike_at, 7);
      EXPECT_EQ(inner.state().eligible, 0);
      EXPECT_EQ(inner.state().strikes, 0);
      EXPECT_EQ(inner.state().first_index, -1);
    }
    EXPECT_EQ(fault::current, &outer.state());
  }
  EXPECT_EQ(fault::current, nullptr);
}

TEST(FaultPlan, TheLastReportIsTheLatestRunsOnThisThread) {
  fault::State s;
  s.kind = Kind::add_bf16;
  s.strikes = 3;
  s.eligible = 10;
  s.first_index = 2;
  s.first_address = 0x1234;
  fault::set_last_report("sum/fault/add_bf16", s);
  const fault::Report* r = fault::last_report("sum/fault/add_bf16");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, Kind::add_bf16);
  EXPECT_EQ(r->strikes, 3);
  EXPECT_EQ(r->eligible, 10);
  EXPECT_EQ(r->first_index, 2);
  EXPECT_EQ(r->first_address, 0x1234u);
  EXPECT_EQ(fault::last_report("sum/fault/add_f16"), nullptr);
  EXPECT_EQ(fault::last_report(""), nullptr);
  const fault::Report* elsewhere = r;
  std::thread([&] { elsewhere = fault::last_report("sum/fault/add_bf16"); }).join();
  EXPECT_EQ(elsewhere, nullptr);  // another thread's last run is its own
  fault::set_last_report("mean/fault/add_f16", s);
  EXPECT_EQ(fault::last_report("sum/fault/add_bf16"), nullptr);
  EXPECT_NE(fault::last_report("mean/fault/add_f16"), nullptr);
}

TEST(FaultPlan, DescribeSaysWhereAndHowTheFaultStruck) {
  fault::Report r;  // no address: the site is "?"
  r.kind = Kind::eps_removed;
  EXPECT_EQ(fault::describe(r), "input parameter eps set to 0");
  r.kind = Kind::add_bf16;
  EXPECT_EQ(fault::describe(r), "nothing struck (no eligible operation changed)");
  r.first_index = 7;
  r.strikes = 5;
  r.eligible = 40;
  EXPECT_EQ(fault::describe(r), "? (first of 5 changed operations, at operation 7)");
  r.kind = Kind::perturb_ulps;
  r.strikes = 1;
  EXPECT_EQ(fault::describe(r), "? (operation 7 of 40, value changed)");
  r.strikes = 0;
  EXPECT_EQ(fault::describe(r), "? (operation 7 of 40, value unchanged)");
  r.kind = Kind::sequential_sum;
  r.strikes = 2;
  EXPECT_EQ(fault::describe(r), "? (2 sequential sums)");
}

}  // namespace
}  // namespace stabfuzz
