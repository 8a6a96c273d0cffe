// The learning-rate sweep (harness/monitor/sweep.cc): `stabfuzz monitor sweep`'s table and files,
// and its number lists.
#include "harness/monitor/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::slurp;

TEST(MonitorCliTest, SweepTable) {
  const std::string out = testing::temp_dir("sweep");
  const auto r = run_stabfuzz(
      "monitor sweep --lr-grid 0.5,8 --steps 8 --max-train 150 --init-seeds 2 "
      "--k-list 1,3 --sharpness-every 4 --out " +
      out);
  ASSERT_EQ(r.code, 0) << r.err;
  const json::Value j = json::parse(slurp(out + "/sweep.json"));
  ASSERT_EQ(j.at("rows").as_array().size(), 2u);
  const auto& row = j.at("rows").as_array()[0];
  EXPECT_EQ(row.at("test_accuracy_k").as_array().size(), 2u);
  EXPECT_EQ(row.at("test_accuracy_seeds").as_array().size(), 2u);
  EXPECT_NE(r.out.find("acc std(k)"), std::string::npos);
  EXPECT_NE(slurp(out + "/report.html").find("<svg"), std::string::npos);
}

TEST(MonitorSweep, NumberListsAreParsedOrNamed) {
  EXPECT_EQ(monitor::parse_number_list("0.5,8,1e-3", "lr-grid"),
            (std::vector<double>{0.5, 8, 1e-3}));
  EXPECT_EQ(monitor::parse_number_list("0,0.01", "wd-grid", true), (std::vector<double>{0, 0.01}));
  for (const char* bad : {"", "0.1,x", "0.1,,2", "-1", "0", "inf", "nan", "1,"}) {
    try {
      monitor::parse_number_list(bad, "lr-grid");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--lr-grid: expected positive numbers", 0), 0u)
          << e.what();
    }
  }
  EXPECT_THROW(monitor::parse_number_list("0,-0.5", "wd-grid", true), InputError);
}

}  // namespace
}  // namespace stabfuzz
