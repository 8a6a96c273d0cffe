// Cases (harness/pipeline/case.cc): the input with index k of a run, from (family, dtype, seed,
// index) alone, its regime, and its CESTAC rounding stream.
#include "harness/pipeline/case.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

const Family& softmax() {
  const Family* f = default_registry().find_family("softmax");
  EXPECT_NE(f, nullptr);
  return *f;
}

TEST(Runner, InputsAreTheSameForEveryImplementation) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  const Input a = pipeline::make_case(*f, DType::f64, 9, 4);
  const Input b = pipeline::make_case(*f, DType::f64, 9, 4);
  const Input c = pipeline::make_case(*f, DType::f64, 9, 5);
  EXPECT_EQ(a.args[0].values, b.args[0].values);
  EXPECT_NE(a.args[0].values, c.args[0].values);
}

TEST(Case, RegimesCycleWithTheIndex) {
  const Family& f = softmax();
  const auto n = static_cast<int64_t>(f.regimes.size());
  ASSERT_GT(n, 1);
  for (int64_t i = 0; i < 3 * n; ++i)
    EXPECT_EQ(&pipeline::case_regime(f, i), &f.regimes[static_cast<size_t>(i % n)]) << i;
}

TEST(Case, SeedAndDtypeChangeTheInput) {
  const Family& f = softmax();
  const Input a = pipeline::make_case(f, DType::f64, 9, 4);
  EXPECT_NE(a.args[0].values, pipeline::make_case(f, DType::f64, 10, 4).args[0].values);
  const Input b = pipeline::make_case(f, DType::f32, 9, 4);
  EXPECT_EQ(a.dtype, DType::f64);
  EXPECT_EQ(b.dtype, DType::f32);
  for (double v : b.args[0].values)
    if (std::isfinite(v)) EXPECT_EQ(static_cast<double>(static_cast<float>(v)), v);
}

TEST(Case, TheShrinkableStartsFromTheCase) {
  const Family& f = softmax();
  const auto sh = pipeline::case_shrinkable(f, DType::f64, 3, 2);
  EXPECT_EQ(sh.value().args[0].values, pipeline::make_case(f, DType::f64, 3, 2).args[0].values);
}

TEST(CestacRequest, StreamNamesTargetDtypeAndIndex) {
  Target t;
  t.id = "softmax/cpu/stable";
  Target u;
  u.id = "softmax/injected/no_max_subtract";
  cestac::Config config;
  config.cancel_digits = 5;
  const CestacRequest r = pipeline::cestac_request(t, DType::f64, 42, 7, config);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.config.cancel_digits, 5);
  EXPECT_EQ(r.stream, pipeline::cestac_request(t, DType::f64, 1, 7, config).stream);  // not seed
  std::set<uint64_t> streams{r.stream};
  streams.insert(pipeline::cestac_request(u, DType::f64, 42, 7, config).stream);
  streams.insert(pipeline::cestac_request(t, DType::f32, 42, 7, config).stream);
  streams.insert(pipeline::cestac_request(t, DType::f64, 42, 8, config).stream);
  EXPECT_EQ(streams.size(), 4u);
}

}  // namespace
}  // namespace stabfuzz
