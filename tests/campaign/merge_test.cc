// Merging campaign results (harness/campaign/merge.cc): what makes two findings the same, and
// summary rows combined across units.
#include "harness/campaign/merge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "reports/json.h"

namespace stabfuzz::campaign {
namespace {

TEST(Identity, InputAndDtypeMakeAFinding) {
  const json::Value a = json::parse(
      R"({"impl":"x/cpu/y","dtype":"f32","case":3,"seed":1,"input":[{"shape":[2],"values":["0x1p+0","0x1p+1"]}],"params":{}})");
  json::Value b = a;
  b.set("case", 9);  // another case, another seed: the same input is the same finding
  b.set("seed", 5);
  EXPECT_EQ(finding_identity(a), finding_identity(b));
  json::Value c = a;
  c.set("dtype", "f64");
  EXPECT_NE(finding_identity(a), finding_identity(c));
  json::Value d = json::parse(
      R"({"impl":"x/cpu/y","dtype":"f32","input":[{"shape":[2],"values":["0x1p+0","0x1p+2"]}],"params":{}})");
  EXPECT_NE(finding_identity(a), finding_identity(d));
  const json::Value e =
      json::parse(R"({"impl":"x/cpu/y","dtype":"f32","replay":"stabfuzz --target x"})");
  EXPECT_NE(finding_identity(a), finding_identity(e));
}

TEST(Rows, CombineCountsMaximaAndMinima) {
  RowMerger m;
  m.add(json::parse(
      R"({"impl":"a","dtype":"f32","inputs":10,"failing_inputs":1,"findings":1,"max_ulp":4,"max_error_over_tolerance":0.5,"min_digits":5,"seconds":1,"inputs_per_regime":{"r":10}})"));
  m.add(json::parse(
      R"({"impl":"a","dtype":"f32","inputs":5,"failing_inputs":2,"findings":2,"max_ulp":"inf","max_error_over_tolerance":0.25,"min_digits":3,"seconds":2,"inputs_per_regime":{"r":2,"s":3}})"));
  m.add(json::parse(
      R"({"impl":"a","dtype":"f64","inputs":7,"failing_inputs":0,"findings":0,"max_ulp":1})"));
  std::map<std::string, int64_t> per_pair{{"a f32", 2}};
  const auto rows = m.rows(&per_pair);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("inputs").as_number(), 15);
  EXPECT_EQ(rows[0].at("failing_inputs").as_number(), 3);
  EXPECT_EQ(rows[0].at("findings").as_number(), 2);  // deduplicated count, not 1 + 2
  EXPECT_TRUE(std::isinf(rows[0].at("max_ulp").as_number()));
  EXPECT_EQ(rows[0].at("max_error_over_tolerance").as_number(), 0.5);
  EXPECT_EQ(rows[0].at("min_digits").as_number(), 3);
  EXPECT_EQ(rows[0].at("units").as_number(), 2);
  EXPECT_EQ(rows[0].at("inputs_per_regime").at("r").as_number(), 12);
  EXPECT_EQ(rows[0].at("inputs_per_regime").at("s").as_number(), 3);
  EXPECT_EQ(rows[1].at("findings").as_number(), 0);
}

}  // namespace
}  // namespace stabfuzz::campaign
