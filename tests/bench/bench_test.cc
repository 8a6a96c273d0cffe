// stabfuzz bench (harness/bench/bench.cc): its JSON contract.
#include <gtest/gtest.h>

#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;

TEST(Bench, ReportsRatiosForEveryKernelAndDtype) {
  const std::string path = testing::temp_dir("") + "/bench.json";
  const auto r = run_stabfuzz("bench --budget-s 1 --quiet --json " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  const json::Value j = json::parse(testing::slurp(path));
  const auto& rows = j.at("bench").as_array();
  EXPECT_EQ(rows.size(), 12u);  // 6 kernels x {f64, f32}
  for (const auto& row : rows) {
    EXPECT_GT(row.at("native_ns").as_number(), 0);
    EXPECT_GT(row.at("cestac_ns").as_number(), 0);
    // Three samples with random rounding cannot be cheaper than one native evaluation.
    EXPECT_GT(row.at("ratio").as_number(), 1.0) << row.at("op").as_string();
  }
  EXPECT_GT(j.at("geomean_ratio").as_number(), 1.0);
  // The oracle's cost per element, next to the native stable target, for every family.
  const auto& oracle = j.at("oracle").as_array();
  EXPECT_GE(oracle.size(), 30u);
  for (const auto& row : oracle) {
    EXPECT_GT(row.at("inputs").as_number(), 0) << row.at("family").as_string();
    EXPECT_GT(row.at("oracle_ns").as_number(), 0) << row.at("family").as_string();
  }
  // Fuzz executions per second (CESTAC and oracle on) on rows of at most 64 values.
  const auto& fuzz = j.at("fuzz_throughput").as_array();
  ASSERT_EQ(fuzz.size(), 4u);  // softmax, layer_norm x {f64, f32}
  for (const auto& row : fuzz) {
    EXPECT_GT(row.at("inputs").as_number(), 0) << row.at("impl").as_string();
    EXPECT_LE(row.at("mean_values").as_number(), 64) << row.at("impl").as_string();
    EXPECT_GT(row.at("execs_per_s").as_number(), 0) << row.at("impl").as_string();
  }
}

}  // namespace
}  // namespace stabfuzz
