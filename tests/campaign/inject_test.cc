// Fault injection and `stabfuzz inject`: every fault strikes and names its site, a plan acts only
// inside its scope, the uniform baseline, and the command's JSON.
#include "harness/campaign/inject.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <sstream>
#include <thread>

#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "injectors/fault_mutants.h"
#include "injectors/fault_plan.h"
#include "injectors/faultable.h"
#include "stabfuzz/op.h"
#include "targets/cpu/reduce.h"
#include "tests/support/run_binary.h"

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
      EXPECT_NE(cestac::symbolize(st.first_address).find("inject_test.cc"), std::string::npos)
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

TEST(Faults, RegistryFaultMutantsReportWhereTheyStruck) {
  const Registry& reg = default_registry();
  int mutants = 0;
  std::set<std::string> kinds_run;  // one run per fault kind keeps the test fast
  for (const auto& f : reg.families())
    for (const auto& t : f.targets) {
      if (t.id.find("/fault/") == std::string::npos) continue;
      ++mutants;
      if (!kinds_run.insert(t.id.substr(t.id.rfind('/'))).second) continue;
      EXPECT_EQ(t.kind, TargetKind::injected) << t.id;
      ASSERT_TRUE(t.injection) << t.id;
      EXPECT_FALSE(t.injection->plants.empty() || t.injection->fails_where.empty() ||
                   t.injection->fix.empty());
      const Input in = pipeline::make_case(f, t.dtypes[0], 1, 0);
      t.native(in);
      const fault::Report* r = fault::last_report(t.id);
      ASSERT_NE(r, nullptr) << t.id;
      EXPECT_FALSE(fault::describe(*r).empty());
    }
  EXPECT_GE(mutants, 10);
  EXPECT_GE(kinds_run.size(), 10u);
  // A report belongs to the fault mutant that ran last on the thread, to no other target.
  const auto [fam, t] = reg.find_target("softmax/fault/perturb_ulps");
  ASSERT_NE(t, nullptr);
  t->native(pipeline::make_case(*fam, DType::f64, 1, 0));
  EXPECT_NE(fault::last_report("softmax/fault/perturb_ulps"), nullptr);
  EXPECT_EQ(fault::last_report("softmax/fault/add_f16"), nullptr);
}

TEST(Faults, EpsRemovedBreaksAConstantRow) {
  const auto [fam, t] = default_registry().find_target("layer_norm/fault/eps_removed");
  ASSERT_NE(t, nullptr);
  Input in;
  in.dtype = DType::f64;
  in.args.push_back(Tensor{{4}, {2, 2, 2, 2}});
  ASSERT_FALSE(fam->validate(in));
  const Verdict v = pipeline::evaluate(*fam, *t, in, CestacRequest{});
  EXPECT_TRUE(v.finding());
  const auto [fam2, stable] = default_registry().find_target("layer_norm/cpu/stable");
  EXPECT_FALSE(pipeline::evaluate(*fam2, *stable, in, CestacRequest{}).finding());
}

TEST(Inject, UniformBaselineKeepsShapesAndDrawsFromTheUnitInterval) {
  const Family* f = default_registry().find_family("softmax");
  for (int64_t k = 0; k < 20; ++k) {
    const Input r = campaign::generate_case(*f, campaign::Generator::regimes, DType::f32, 3, k);
    const Input u = campaign::generate_case(*f, campaign::Generator::uniform, DType::f32, 3, k);
    const Input u2 = campaign::generate_case(*f, campaign::Generator::uniform, DType::f32, 3, k);
    ASSERT_EQ(r.args[0].shape, u.args[0].shape);
    EXPECT_EQ(u.args[0].values, u2.args[0].values);  // reproducible from the seed
    EXPECT_FALSE(f->validate(u));
    for (double v : u.args[0].values) {
      EXPECT_GE(v, -1.0);
      EXPECT_LE(v, 1.0);
    }
  }
}

TEST(Inject, CommandWritesTheRecallJson) {
  const std::string out = testing::temp_dir("inject");
  const auto o =
      testing::run_stabfuzz("inject --family softmax --budget-s 1 --seed 1 --json - --out " + out);
  ASSERT_TRUE(o.code == 0 || o.code == 1) << o.err;
  const json::Value j = json::parse(o.out);
  for (const char* key :
       {"mutants", "recall", "recall_cestac", "recall_oracle", "false_positive_targets"})
    EXPECT_NE(j.get(key), nullptr) << key;
  ASSERT_GE(j.at("mutants").as_array().size(), 2u);
  bool no_max = false;
  for (const auto& m : j.at("mutants").as_array()) {
    for (const char* key :
         {"id", "family", "detected", "detector", "inputs_to_detect", "seconds_to_detect"})
      EXPECT_NE(m.get(key), nullptr) << key;
    EXPECT_EQ(m.at("family").as_string(), "softmax");
    if (m.at("id").as_string() == "softmax/injected/no_max_subtract") {
      no_max = true;
      EXPECT_TRUE(m.at("detected").as_bool());
      EXPECT_GE(m.at("inputs_to_detect").as_number(), 1);
    }
  }
  EXPECT_TRUE(no_max);
  EXPECT_EQ(j.at("false_positive_targets").as_number(), 0);
  EXPECT_NE(testing::slurp(out + "/inject.json").find("\"recall\""), std::string::npos);
  EXPECT_EQ(testing::run_stabfuzz("inject --family nosuch --budget-s 1").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family softmax --budget-s 1 --generator bogus").code,
            2);
}

// --faults all: every fault planted in the reference target, the registry's pairs marked, each
// missed pair with why; var computes no elementary function, so libm_low_precision has no effect
// there whatever the budget.
TEST(Inject, FaultMatrixCoversEveryFaultAndSaysWhyAPairIsMissed) {
  const Family* var = default_registry().find_family("var");
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(injectors::fault_matrix(*var).size(), static_cast<size_t>(fault::kKindCount) - 1)
      << "every fault but eps_removed (var has no eps)";
  const Family* ln = default_registry().find_family("layer_norm");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(injectors::fault_matrix(*ln).size(), static_cast<size_t>(fault::kKindCount));
  EXPECT_TRUE(injectors::registered_fault_mutant("var/fault/perturb_ulps"));
  EXPECT_FALSE(injectors::registered_fault_mutant("var/fault/add_bf16"));

  campaign::InjectOptions o;
  o.family = "var";
  o.budget_s = 0.2;
  o.seed = 2;
  o.fault_matrix = true;
  o.references = false;
  std::ostringstream progress;
  const campaign::InjectResult r = campaign::run_inject(default_registry(), o, progress);
  std::set<std::string> faults;
  for (const auto& m : r.mutants) {
    SCOPED_TRACE(m.id);
    if (m.origin != "fault") continue;
    faults.insert(m.id);
    EXPECT_EQ(m.registered, injectors::registered_fault_mutant(m.id));
    EXPECT_EQ(m.detected, m.why_undetected.empty());
    if (m.id == "var/fault/libm_low_precision") {
      EXPECT_FALSE(m.detected);
      EXPECT_EQ(m.changed_inputs, 0);
      EXPECT_NE(m.why_undetected.find("no effect"), std::string::npos);
    }
  }
  EXPECT_EQ(faults.size(), static_cast<size_t>(fault::kKindCount) - 1);
  EXPECT_TRUE(r.stable.empty());
  const std::string md = campaign::inject_markdown({r}, "stabfuzz inject ...", {1});
  EXPECT_NE(md.find("| var |"), std::string::npos) << md;
  EXPECT_NE(md.find("no effect"), std::string::npos);
  EXPECT_NE(md.find("`var/fault/libm_low_precision`: seed 2: no effect"), std::string::npos);

  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seeds 0").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seeds 1,x").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --seed 1 --seeds 2").code, 2);
  EXPECT_EQ(testing::run_stabfuzz("inject --family var --budget-s 1 --faults bogus").code, 2);
}

}  // namespace
}  // namespace stabfuzz
