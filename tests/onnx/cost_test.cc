// The monitor's cost against native runs (harness/onnx/cost.cc): the ratio, the table and the JSON
// of `stabfuzz bench --suite monitor`.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/cost.h"
#include "reports/json.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
std::vector<onnx::MonitorCost> rows() {
  onnx::MonitorCost a{"mlp", "inference (32 rows)", 0.5, 12.25, 5};
  onnx::MonitorCost b{"cnn", "training step (batch 16)", 0, 3, 5};  // too fast to time natively
  return {a, b};
}

TEST(OnnxCost, RatioIsMonitoredOverNativeAndZeroWithoutANativeTime) {
  EXPECT_DOUBLE_EQ(rows()[0].ratio(), 24.5);
  EXPECT_EQ(rows()[1].ratio(), 0);
}

TEST(OnnxCost, TableHasAHeaderAndOneLinePerRow) {
  std::ostringstream os;
  onnx::print_monitor_costs(rows(), os);
  const std::string t = os.str();
  std::istringstream in(t);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u) << t;
  EXPECT_EQ(lines[0].rfind("model ", 0), 0u) << t;
  EXPECT_NE(lines[0].find("monitored_ms"), std::string::npos) << t;
  EXPECT_EQ(lines[1].rfind("mlp   inference (32 rows)", 0), 0u) << t;
  EXPECT_NE(lines[1].find("0.500"), std::string::npos) << t;
  EXPECT_NE(lines[1].find("12.250"), std::string::npos) << t;
  EXPECT_EQ(lines[1].substr(lines[1].size() - 5), "24.50") << t;
  EXPECT_EQ(lines[2].substr(lines[2].size() - 4), "0.00") << t;
}

TEST(OnnxCost, JsonHasEveryField) {
  const json::Value j = json::parse(json::dump(onnx::monitor_costs_json(rows())));
  const auto& a = j.at("rows").as_array();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].at("model").as_string(), "mlp");
  EXPECT_EQ(a[0].at("what").as_string(), "inference (32 rows)");
  EXPECT_DOUBLE_EQ(a[0].at("native_ms").as_number(), 0.5);
  EXPECT_DOUBLE_EQ(a[0].at("monitored_ms").as_number(), 12.25);
  EXPECT_DOUBLE_EQ(a[0].at("ratio").as_number(), 24.5);
  EXPECT_EQ(a[1].at("repeats").as_number(), 5);
  EXPECT_EQ(a[1].at("ratio").as_number(), 0);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
