// The monitor's training report (harness/monitor/html.cc): the summary, the polluting operation,
// the instability sites and the digits heatmap.
#include <gtest/gtest.h>

#include <string>

#include "harness/monitor/output.h"
#include "tests/support/monitor_result.h"

namespace stabfuzz::monitor {
namespace {

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

TEST(MonitorHtml, NamesThePollutingOperationAndMarksItInTheHeatmap) {
  const std::string html = render_train_html(testing::hand_train_result(true));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>stabfuzz monitor: mlp on digits, lr 0.5, seed 4</title>"),
            std::string::npos);
  EXPECT_NE(html.find("<b>loss forward cross_entropy_naive</b> at "
                      "<code>harness/monitor/model.h:20</code>, step 1, element 3"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<svg class=\"heatmap\""), std::string::npos);
  // Three operations: one row each; the polluting one framed, its polluted step dotted.
  EXPECT_NE(html.find(">fc1 forward matmul</text>"), std::string::npos);
  EXPECT_NE(html.find(">fc1 update sgd_w</text>"), std::string::npos);
  EXPECT_GE(count(html, "<rect class=\"polluting\""), 1u);
  EXPECT_GE(count(html, "<circle class=\"marker\""), 1u);
  EXPECT_NE(html.find("<td>cancellation</td><td><code>harness/monitor/model.h:20</code>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("0.5000 0.6250 0.7500"), std::string::npos);
}

TEST(MonitorHtml, StableAndNativeRunsSayNone) {
  monitor::TrainResult r = testing::hand_train_result(false);
  std::string html = render_train_html(r);
  EXPECT_NE(html.find("<p id=\"polluting\">None: no operation lost more than 2 digits"),
            std::string::npos);
  EXPECT_EQ(count(html, "<rect class=\"polluting\""), 0u);
  r.ops.clear();
  r.diverged_at = 1;
  html = render_train_html(r);
  EXPECT_NE(html.find("No operation was traced (native run)."), std::string::npos);
  EXPECT_NE(html.find("diverged at step 1: "), std::string::npos);
}

}  // namespace
}  // namespace stabfuzz::monitor
