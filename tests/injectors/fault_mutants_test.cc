// Fault mutants (injectors/fault_mutants.cc): the registry's pairs of family and fault, what each
// mutant runs on and reports, and the unscreened fault matrix.
#include "injectors/fault_mutants.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "injectors/fault_plan.h"

namespace stabfuzz {
namespace {

using fault::Kind;

// A copy of a registered family without its fault mutants.
Family without_faults(const char* name) {
  const Family* f = default_registry().find_family(name);
  if (!f) throw std::logic_error(std::string("no family ") + name);
  Family copy = *f;
  std::erase_if(copy.targets,
                [](const Target& t) { return t.id.find("/fault/") != std::string::npos; });
  return copy;
}

std::vector<std::string> fault_ids(const Family& f) {
  std::vector<std::string> out;
  for (const auto& t : f.targets)
    if (t.id.find("/fault/") != std::string::npos) out.push_back(t.id);
  return out;
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

TEST(FaultMutants, AttachedPerTheFamilysRowOfTheTable) {
  Family var = without_faults("var");
  ASSERT_TRUE(fault_ids(var).empty());
  injectors::attach_fault_mutants(var);
  EXPECT_EQ(fault_ids(var), (std::vector<std::string>{"var/fault/perturb_ulps",
                                                      "var/fault/div_approx_reciprocal"}));
  EXPECT_EQ(fault_ids(*default_registry().find_family("var")), fault_ids(var));
  // A family without a row gets none, and so does one without a reference target to plant in.
  Family entropy = without_faults("entropy");
  const size_t before = entropy.targets.size();
  injectors::attach_fault_mutants(entropy);
  EXPECT_EQ(entropy.targets.size(), before);
  Family sum = without_faults("sum");
  std::erase_if(sum.targets, [](const Target& t) { return t.kind == TargetKind::reference; });
  injectors::attach_fault_mutants(sum);
  EXPECT_TRUE(fault_ids(sum).empty());
  EXPECT_TRUE(injectors::fault_matrix(sum).empty());
}

TEST(FaultMutants, RegisteredFaultMutantNamesTheTablesPairsOnly) {
  int registered = 0;
  for (const auto& f : default_registry().families())
    for (const auto& id : fault_ids(f)) {
      EXPECT_TRUE(injectors::registered_fault_mutant(id)) << id;
      EXPECT_EQ(id.find("round_toward_zero"), std::string::npos) << id << ": attached nowhere";
      ++registered;
    }
  EXPECT_GE(registered, 30);
  EXPECT_TRUE(injectors::registered_fault_mutant("softmax/fault/sequential_sum"));
  EXPECT_FALSE(injectors::registered_fault_mutant("softmax/fault/add_bf16"));
  EXPECT_FALSE(injectors::registered_fault_mutant("softmax/fault/"));
  EXPECT_FALSE(injectors::registered_fault_mutant("nosuch/fault/add_bf16"));
  EXPECT_FALSE(injectors::registered_fault_mutant("softmax/injected/no_max_subtract"));
}

// Scalar faults need Faulty<T> (f64 and f32) and CESTAC does not model them; a sequential sum and
// eps = 0 change the computation's structure, which CESTAC simulates.
TEST(FaultMutants, ScalarFaultsAreOracleOnlyOnF64AndF32) {
  const Family* softmax = default_registry().find_family("softmax");
  const Target& stable = softmax->targets.at(0);
  ASSERT_EQ(stable.kind, TargetKind::reference);
  const std::vector<Target> matrix = injectors::fault_matrix(*softmax);
  EXPECT_EQ(matrix.size(), static_cast<size_t>(fault::kKindCount) - 1) << "no eps in softmax";
  for (const auto& t : matrix) {
    SCOPED_TRACE(t.id);
    const Kind k = [&] {
      for (int i = 0; i < fault::kKindCount; ++i)
        if (t.id == "softmax/fault/" + std::string(fault::kind_name(static_cast<Kind>(i))))
          return static_cast<Kind>(i);
      ADD_FAILURE() << "no fault named by the id";
      return Kind::kCount;
    }();
    EXPECT_EQ(t.kind, TargetKind::injected);
    ASSERT_TRUE(t.injection);
    EXPECT_EQ(t.injection->expected_detection, "oracle");
    EXPECT_NE(t.injection->plants.find(stable.id), std::string::npos);
    if (fault::scalar_fault(k)) {
      EXPECT_EQ(t.dtypes, (std::vector<DType>{DType::f64, DType::f32}));
      EXPECT_FALSE(t.cestac);
      EXPECT_NE(t.description.find("oracle only"), std::string::npos);
    } else {
      EXPECT_EQ(t.dtypes, stable.dtypes);
      EXPECT_TRUE(t.cestac);
    }
  }
  // eps = 0: CESTAC sees it in the normalizations, not in cosine_similarity (0 / 0 in every
  // sample).
  for (const auto& [family, expected] : std::vector<std::pair<std::string, std::string>>{
           {"layer_norm", "both"}, {"rms_norm", "both"}, {"cosine_similarity", "oracle"}}) {
    const auto [f, t] = default_registry().find_target(family + "/fault/eps_removed");
    ASSERT_NE(t, nullptr) << family;
    EXPECT_EQ(t->injection->expected_detection, expected) << family;
  }
}

TEST(FaultMutants, ASingleSiteFaultStrikesOneOperationChosenByTheInput) {
  const auto [fam, t] = default_registry().find_target("softmax/fault/perturb_ulps");
  ASSERT_NE(t, nullptr);
  const Input in = pipeline::make_case(*fam, DType::f64, 2, 3);
  const std::vector<double> first = t->native(in);
  const fault::Report* ra = fault::last_report(t->id);
  ASSERT_NE(ra, nullptr);
  const fault::Report a = *ra;
  EXPECT_EQ(t->native(in), first);  // the same input strikes the same operation
  const fault::Report* b = fault::last_report(t->id);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->first_index, a.first_index);
  EXPECT_EQ(a.kind, Kind::perturb_ulps);
  EXPECT_LE(a.strikes, 1);
  ASSERT_GT(a.eligible, 0);
  EXPECT_GE(a.first_index, 0);
  EXPECT_LT(a.first_index, a.eligible);
  // eps = 0 acts on a copy of the input, and says so.
  const auto [lf, eps] = default_registry().find_target("layer_norm/fault/eps_removed");
  ASSERT_NE(eps, nullptr);
  Input row;
  row.dtype = DType::f64;
  row.args.push_back(Tensor{{2}, {1, 3}});
  row.set_param("eps", 0.25);
  const std::vector<double> y = eps->native(row);
  EXPECT_EQ(y, (std::vector<double>{-1, 1}));  // (x - 2) / sqrt(1 + 0), not / sqrt(1.25)
  EXPECT_EQ(row.param("eps", 0), 0.25);
  ASSERT_NE(fault::last_report(eps->id), nullptr);
  EXPECT_EQ(fault::describe(*fault::last_report(eps->id)), "input parameter eps set to 0");
}

}  // namespace
}  // namespace stabfuzz
