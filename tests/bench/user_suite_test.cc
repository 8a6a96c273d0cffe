// The user-code suite (`stabfuzz bench --suite user`): its kernels compute the same values natively
// and under CESTAC, and it reports one row per kernel and dtype. Timings are never asserted here.
#include "harness/bench/user_suite.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "stabfuzz/cestac.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using bench::UserSizes;

// Largest |native - CESTAC mean| over a kernel's outputs, relative to its largest |output|.
double relative_gap(const std::vector<double>& native, const std::vector<double>& cestac) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < native.size(); ++i) {
    gap = std::max(gap, std::fabs(native[i] - cestac[i]));
    scale = std::max(scale, std::fabs(native[i]));
  }
  return scale > 0 ? gap / scale : gap;
}

void expect_agreement(DType d, const UserSizes& sizes, double tolerance) {
  const auto native = bench::user_cases(d, false, sizes);
  const auto cestac = bench::user_cases(d, true, sizes);
  ASSERT_EQ(native.size(), cestac.size());
  for (std::size_t i = 0; i < native.size(); ++i) {
    native[i].call();
    {
      cestac::Run run(5, 0);
      cestac[i].call();
    }
    const auto a = native[i].outputs(), b = cestac[i].outputs();
    ASSERT_EQ(a.size(), b.size()) << native[i].kernel;
    ASSERT_FALSE(a.empty()) << native[i].kernel;
    for (double v : a) ASSERT_TRUE(std::isfinite(v)) << native[i].kernel << " " << dtype_name(d);
    EXPECT_LE(relative_gap(a, b), tolerance) << native[i].kernel << " " << dtype_name(d);
  }
}

// The suite's own sizes in f64 and f32; small ones in f16 and bf16, where a sum of 4096 values
// stagnates under round to nearest while random rounding keeps adding (the two then differ by
// design, not by a bug). Largest gaps measured (seed 5): f64 8e-15 (softmax), f32 9e-6 (softmax),
// f16 5e-3 (softmax), bf16 0.07 (softmax: 64 values summed with 8 bits).
TEST(UserSuite, NativeAndCestacMeanAgree) {
  expect_agreement(DType::f64, UserSizes{}, 1e-12);
  expect_agreement(DType::f32, UserSizes{}, 1e-4);
  const UserSizes small{64, 16, 8, 8, 8, 4};
  expect_agreement(DType::f16, small, 0.03);
  expect_agreement(DType::bf16, small, 0.2);
}

TEST(UserSuite, OneRowPerKernelAndDtype) {
  bench::UserOptions opts;
  opts.budget_s = 0.01;  // one call per chunk: this checks the rows, not the times
  opts.repeats = 2;
  opts.sizes = UserSizes{64, 8, 8, 8, 8, 2};
  std::ostringstream progress;
  const auto rows = bench::run_user_suite(opts, progress);
  const auto kernels = bench::user_kernel_names();
  EXPECT_GE(kernels.size(), 10u);
  ASSERT_EQ(rows.size(), kernels.size() * 4);
  for (DType d : kAllDTypes)
    for (const auto& k : kernels) {
      const auto it = std::find_if(rows.begin(), rows.end(), [&](const bench::UserRow& r) {
        return r.kernel == k && r.dtype == dtype_name(d);
      });
      ASSERT_NE(it, rows.end()) << k << " " << dtype_name(d);
      EXPECT_GT(it->native_min_us, 0) << k;
      EXPECT_GT(it->cestac_min_us, 0) << k;
      EXPECT_LE(it->native_min_us, it->native_median_us) << k;
      EXPECT_LE(it->cestac_min_us, it->cestac_median_us) << k;
    }
  const json::Value j = bench::user_to_json(rows);
  EXPECT_EQ(j.at("rows").as_array().size(), rows.size());
  for (DType d : kAllDTypes)
    EXPECT_GT(j.at("geomean_ratio").at(std::string(dtype_name(d))).at("median").as_number(), 0);
}

TEST(UserSuite, BadSuiteOrDtypeIsAnInputError) {
  for (const char* args : {"bench --suite nope --quiet", "bench --suite user --dtype f8 --quiet",
                           "bench --dtype f64 --quiet"}) {
    const auto r = testing::run_stabfuzz(args);
    EXPECT_NE(r.code, 0) << args;
    EXPECT_NE(r.err.find("--"), std::string::npos) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace stabfuzz
