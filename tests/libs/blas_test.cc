// CBLAS targets: registered per the catalog, accurate on typical inputs, layouts exact.
#include "tests/libs/library_check.h"

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_BLAS
TEST(BlasTargets, EveryCatalogEntryIsRegistered) {
  const auto targets = registered(libs::blas_catalog());
  EXPECT_EQ(targets.size(), libs::blas_catalog().size());
}

TEST(BlasTargets, AccurateOnTypicalInputs) {
  for (const auto& [f, t] : registered(libs::blas_catalog()))
    for (DType d : t->dtypes) expect_accurate(*f, *t, d, 3, {});
}

TEST(BlasTargets, LayoutsAreExact) {
  Input mm;  // A [2, 3], B [3, 2] row-major: C = [[5, 1], [11, 1]]
  mm.args = {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {1, 0, -1, -1, 2, 1}}};
  expect_exact(*default_registry().find_target("gemm/blas/gemm").second, mm, {5, 1, 11, 1});
  Input dot;
  dot.args = {{{3}, {1, 2, 3}}, {{3}, {4, -5, 0.5}}};
  expect_exact(*default_registry().find_target("dot/blas/dot").second, dot, {-4.5});
  Input norm;
  norm.args = {{{2}, {3, -4}}};
  expect_exact(*default_registry().find_target("l2_norm/blas/nrm2").second, norm, {5});
}
#else
TEST(BlasTargets, ListedUnavailableWithTheReason) {
  expect_listed_unavailable(libs::blas_catalog(), "libopenblas-dev");
  GTEST_SKIP() << "built without a CBLAS: only the unavailable listing is checked";
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
