// The elementwise families as declared: registration, contracts, tolerances, oracle bindings and
// the ranges of their shared regimes.
#include "oracles/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "families/all_families.h"
#include "families/regimes.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

using oracle::Unary;
using regime::row_input;

constexpr Unary kAll[] = {Unary::exp,      Unary::log,  Unary::log1p,   Unary::expm1,
                          Unary::tanh,     Unary::erf,  Unary::sigmoid, Unary::log_sigmoid,
                          Unary::softplus, Unary::silu, Unary::gelu,    Unary::gelu_tanh};
constexpr double kInf = INFINITY, kMax = std::numeric_limits<double>::max();

const Family& family(Unary f) {
  if (const Family* fam = default_registry().find_family(oracle::unary_name(f))) return *fam;
  throw std::logic_error("no family " + std::string(oracle::unary_name(f)));
}
const Target& stable(Unary f) {
  return *default_registry().find_target(family(f).name + "/cpu/stable").second;
}

TEST(ElementwiseFamilies, EveryFamilyIsRegisteredWithAStableTarget) {
  for (Unary f : kAll) {
    const Family& fam = family(f);
    EXPECT_GE(fam.regimes.size(), 4u) << fam.name;
    EXPECT_LE(fam.regimes.size(), 7u) << fam.name;
    const Target& t = stable(f);
    EXPECT_EQ(t.kind, TargetKind::reference);
    EXPECT_EQ(t.dtypes, (std::vector<DType>{DType::f64, DType::f32, DType::f16, DType::bf16}));
    EXPECT_TRUE(static_cast<bool>(t.cestac)) << t.id;
    // Tolerances do not grow with n: one evaluation per output.
    for (DType d : kAllDTypes)
      EXPECT_EQ(fam.tolerance_ulps(d, 1), fam.tolerance_ulps(d, 4096)) << fam.name;
  }
}

TEST(ElementwiseFamilies, ValidationRejectsWhatIsOutsideTheContract) {
  for (Unary f : kAll) {
    const Family& fam = family(f);
    for (DType d : {DType::f64, DType::f32}) {
      EXPECT_FALSE(fam.validate(row_input(d, {0.5}))) << fam.name;  // length 1
      EXPECT_FALSE(fam.validate(row_input(d, {kInf, 0.0, -0.0}))) << fam.name;
      EXPECT_TRUE(fam.validate(row_input(d, {1.0, NAN}))) << fam.name;
      EXPECT_TRUE(fam.validate(row_input(d, {}))) << fam.name;
    }
    Input two_d = row_input(DType::f64, {1, 2, 3, 4});
    two_d.args[0].shape = {2, 2};
    EXPECT_TRUE(fam.validate(two_d)) << fam.name;
    Input with_param = row_input(DType::f64, {1});
    with_param.set_param("beta", 2);
    EXPECT_TRUE(fam.validate(with_param)) << fam.name;
    Input f32 = row_input(DType::f32, {1});
    f32.args[0].values[0] = 0.1;  // not a float
    EXPECT_TRUE(fam.validate(f32)) << fam.name;
  }
  const Family& log = family(Unary::log);
  EXPECT_FALSE(log.validate(row_input(DType::f64, {0.0, -0.0, 1e-320})));
  auto msg = log.validate(row_input(DType::f64, {-1e-300}));
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("x >= 0"), std::string::npos) << *msg;
  EXPECT_TRUE(log.validate(row_input(DType::f64, {-kInf})));
  const Family& log1p = family(Unary::log1p);
  EXPECT_FALSE(log1p.validate(row_input(DType::f32, {-1.0, -0.5})));
  EXPECT_TRUE(log1p.validate(row_input(DType::f32, {-1.5})));
  EXPECT_TRUE(log1p.validate(row_input(DType::f64, {std::nextafter(-1.0, -2.0)})));
  EXPECT_FALSE(family(Unary::exp).validate(row_input(DType::f64, {-kInf, kMax})));
}

// What each family states: tolerances in ULPs (f64, then f32, f16 and bf16) and whether its
// outputs are finite for every valid input.
struct Declared {
  Unary f;
  double tol_f64, tol_f32;
  bool finite_outputs;
};

TEST(ElementwiseFamilies, TolerancesAndOutputConventionsAsDeclared) {
  const Declared declared[] = {
      {Unary::exp, 2, 2, false},      {Unary::log, 2, 2, false},
      {Unary::log1p, 2, 2, false},    {Unary::expm1, 2, 2, false},
      {Unary::tanh, 3, 3, true},      {Unary::erf, 2, 2, true},
      {Unary::sigmoid, 5, 5, true},   {Unary::log_sigmoid, 6, 6, false},
      {Unary::softplus, 6, 6, false}, {Unary::silu, 6, 6, false},
      {Unary::gelu, 16, 11, false},   {Unary::gelu_tanh, 17, 17, false},
  };
  std::vector<std::string> names;
  for (const Family& f : families::elementwise_families()) names.push_back(f.name);
  ASSERT_EQ(names.size(), std::size(declared));
  for (size_t k = 0; k < std::size(declared); ++k) {
    const Declared& c = declared[k];
    const Family& fam = family(c.f);
    EXPECT_EQ(names[k], fam.name);  // declared in this order
    EXPECT_EQ(fam.tolerance_ulps(DType::f64, 16), c.tol_f64) << fam.name;
    for (DType d : {DType::f32, DType::f16, DType::bf16})
      EXPECT_EQ(fam.tolerance_ulps(d, 16), c.tol_f32) << fam.name << " " << dtype_name(d);
    EXPECT_EQ(fam.finite_outputs, c.finite_outputs) << fam.name;
  }
}

// Each family's oracle evaluates its own function: the values at x = 2 are all distinct.
TEST(ElementwiseFamilies, EachOracleIsBoundToItsFunction) {
  const double at2[] = {7.38905609893065,   0.6931471805599453,  1.0986122886681098,
                        6.38905609893065,   0.9640275800758169,  0.9953222650189527,
                        0.8807970779778823, -0.1269280110429725, 2.1269280110429727,
                        1.7615941559557646, 1.9544997361036416,  1.954597694087775};
  for (size_t k = 0; k < std::size(kAll); ++k) {
    const OracleResult r = family(kAll[k]).oracle(row_input(DType::f64, {2.0}));
    ASSERT_TRUE(r.decidable);
    EXPECT_NEAR(r.exact.at(0), at2[k], 4e-16 * std::fabs(at2[k])) << oracle::unary_name(kAll[k]);
  }
}

// The shared "tiny" regime: |x| from max(1e-30, smallest subnormal) to max(1e-5, u).
TEST(ElementwiseFamilies, TinyRegimeSpansWhereLog1pAndExpm1Matter) {
  for (DType d : kAllDTypes) {
    const double lo = d == DType::f16 ? 0x1p-24 : 1e-30;
    const double hi = d == DType::f16 ? 0x1p-11 : (d == DType::bf16 ? 0x1p-8 : 1e-5);
    double smallest = kInf, largest = 0;
    for (Unary f : kAll)
      for (const Regime& r : family(f).regimes) {
        if (r.name != "tiny") continue;
        SeededEntropy e(3, static_cast<uint64_t>(f));
        const Input in = r.sample(e, d);
        for (double x : in.args[0].values) {
          smallest = std::fmin(smallest, std::fabs(x));
          largest = std::fmax(largest, std::fabs(x));
        }
      }
    EXPECT_GE(smallest, lo * (1 - 0x1p-7)) << dtype_name(d);
    EXPECT_LE(largest, hi * (1 + 0x1p-7)) << dtype_name(d);
    EXPECT_GT(largest, hi / 4) << dtype_name(d);  // the range reaches its top
  }
}

}  // namespace
}  // namespace stabfuzz
