// CBLAS targets: registered per the catalog, accurate on typical inputs, layouts exact.
#include "tests/libs/library_check.h"
#include "tests/support/asan.h"
#include "tests/support/require.h"

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_BLAS
TEST(BlasTargets, EveryCatalogEntryIsRegistered) {
  const auto targets = registered(libs::blas_catalog());
  EXPECT_EQ(targets.size(), libs::blas_catalog().size());
}

TEST(BlasTargets, EveryFindingOnARegimeSampleIsTriaged) {
  expect_findings_triaged(libs::blas_catalog(), 8);
}

TEST(BlasTargets, AccurateOnTypicalInputs) {
  for (const auto& [f, t] : registered(libs::blas_catalog()))
    for (DType d : t->dtypes) expect_accurate(*f, *t, d, 3, {});
}

void expect_exact_layouts(const std::string& library) {
  Input mm;  // A [2, 3], B [3, 2] row-major: C = [[5, 1], [11, 1]]
  mm.args = {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 2}, {1, 0, -1, -1, 2, 1}}};
  expect_exact(*default_registry().find_target("gemm/" + library + "/gemm").second, mm,
               {5, 1, 11, 1});
  Input dot;
  dot.args = {{{3}, {1, 2, 3}}, {{3}, {4, -5, 0.5}}};
  expect_exact(*default_registry().find_target("dot/" + library + "/dot").second, dot, {-4.5});
  Input norm;
  norm.args = {{{2}, {3, -4}}};
  expect_exact(*default_registry().find_target("l2_norm/" + library + "/nrm2").second, norm, {5});
}

TEST(BlasTargets, LayoutsAreExact) { expect_exact_layouts("blas"); }

// Intel MKL, loaded at run time: its targets when ci/bootstrap --with-mkl unpacked it, else listed
// as unavailable with that command.
TEST(MklTargets, RegisteredAndExactWhenFoundElseListedUnavailable) {
  if (registered(libs::mkl_catalog()).empty()) {
#ifndef STABFUZZ_TEST_ASAN
    expect_listed_unavailable(libs::mkl_catalog(), "ci/bootstrap --with-mkl");
#endif
    STABFUZZ_SKIP_UNLESS_REQUIRED("mkl",
                                  "Intel MKL not found: only the unavailable listing is checked");
  }
  EXPECT_EQ(registered(libs::mkl_catalog()).size(), libs::mkl_catalog().size());
  expect_exact_layouts("mkl");
  for (const auto& [f, t] : registered(libs::mkl_catalog())) {
    EXPECT_NE(t->description.find("Math Kernel Library"), std::string::npos) << t->description;
    for (DType d : t->dtypes) expect_accurate(*f, *t, d, 3, {});
  }
}
#else
TEST(BlasTargets, ListedUnavailableWithTheReason) {
  expect_listed_unavailable(libs::blas_catalog(), "libopenblas-dev");
  STABFUZZ_SKIP_UNLESS_REQUIRED("blas",
                                "built without a CBLAS: only the unavailable listing is checked");
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
