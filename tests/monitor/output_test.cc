// The monitor's training outputs (harness/monitor/output.cc): steps.csv, ops.csv and monitor.json
// of a run, the polluting operation as JSON, and the mean and standard deviation of the sweeps.
#include "harness/monitor/output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "reports/json.h"
#include "tests/support/monitor_result.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::monitor {
namespace {

TEST(MonitorOutput, MeanAndSampleStandardDeviation) {
  EXPECT_DOUBLE_EQ(mean_of({1, 2, 6}), 3);
  EXPECT_TRUE(std::isnan(mean_of({})));
  EXPECT_DOUBLE_EQ(std_of({1, 2, 6}), std::sqrt(7.0));  // (4 + 1 + 9) / 2
  EXPECT_EQ(std_of({5}), 0);
  EXPECT_EQ(std_of({}), 0);
}

TEST(MonitorOutput, CsvHasAHeaderAndOneRowPerStepAndOperation) {
  const TrainResult r = testing::hand_train_result(true);
  const std::string steps = steps_csv(r);
  EXPECT_EQ(steps.rfind("step,loss,loss_digits,rel_l1,weight_digits_min,weight_digits_mean,lambda,"
                        "lr_lambda,",
                        0),
            0u)
      << steps;
  EXPECT_EQ(testing::count_lines(steps), 3);
  EXPECT_NE(steps.find("\n0,2.25,6.5,0,7,7.5,3,1.5,2,"), std::string::npos) << steps;
  EXPECT_NE(steps.find("\n1,1.5,6.5,1e-07,7,7.5,,,0,"), std::string::npos) << steps;  // no lambda
  const std::string ops = ops_csv(r);
  EXPECT_EQ(testing::count_lines(ops), 7);
  EXPECT_NE(
      ops.find("\n1,loss,forward,cross_entropy_naive,harness/monitor/model.h:20,8,1,1.5,2,1\n"),
      std::string::npos)
      << ops;
  EXPECT_NE(ops.find("\n0,fc1,update,sgd_w,harness/monitor/model.h:30,64,7,7,7,0\n"),
            std::string::npos)
      << ops;
}

TEST(MonitorOutput, JsonCarriesTheConfigSummaryAndSteps) {
  const json::Value j = json::parse(json::dump(train_json(testing::hand_train_result(true))));
  EXPECT_EQ(j.at("config").at("model").as_string(), "mlp");
  EXPECT_EQ(j.at("config").at("loss").as_string(), "ce");
  EXPECT_EQ(j.at("config").at("precision").as_string(), "f32");
  const json::Value& s = j.at("summary");
  EXPECT_EQ(s.at("final_loss").as_number(), 1.5);
  EXPECT_TRUE(s.at("diverged_at_step").is_null());
  EXPECT_EQ(s.at("lr_lambda0").as_number(), 1.5);
  EXPECT_EQ(s.at("test_accuracy_per_sample").as_array().size(), 3u);
  const json::Value& p = s.at("polluting");
  EXPECT_EQ(p.at("layer").as_string(), "loss");
  EXPECT_EQ(p.at("phase").as_string(), "forward");
  EXPECT_EQ(p.at("op").as_string(), "cross_entropy_naive");
  EXPECT_EQ(p.at("element").as_number(), 3);
  EXPECT_EQ(p.at("explained_digits").as_number(), 7.5);
  EXPECT_EQ(s.at("instability_sites").as_array()[0].at("count").as_number(), 2);
  const auto& steps = j.at("steps").as_array();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].at("lambda").as_number(), 3);
  EXPECT_EQ(steps[1].get("lambda"), nullptr);  // not computed at step 1
  EXPECT_TRUE(steps[1].at("instabilities").is_object());
  EXPECT_TRUE(json::parse(json::dump(train_json(testing::hand_train_result(false))))
                  .at("summary")
                  .at("polluting")
                  .is_null());
}

TEST(MonitorOutput, WritesTheFourFiles) {
  const std::string dir = testing::temp_dir("out/nested");
  write_train_outputs(testing::hand_train_result(false), dir);
  for (const char* f : {"steps.csv", "ops.csv", "monitor.json", "report.html"})
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + f)) << f;
  EXPECT_EQ(testing::slurp(dir + "/ops.csv"), ops_csv(testing::hand_train_result(false)));
}

}  // namespace
}  // namespace stabfuzz::monitor
