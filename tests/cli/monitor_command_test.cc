// `stabfuzz monitor train|sweep|infer|onnx-tests` (harness/cli/monitor_command.cc): each
// subcommand's own flags and defaults, and its bad command lines.
#include <gtest/gtest.h>

#include <string>

#include "harness/cli/command.h"
#include "harness/cli/flags.h"
#include "tests/support/cli.h"

namespace stabfuzz {
namespace {

using testing::dispatch_error;

bool has_flag(const char* command, const char* flag) {
  auto c = cli::make_command(command);
  EXPECT_NE(c, nullptr) << command;
  return c && c->options().find_nothrow(flag, false) != nullptr;
}

TEST(MonitorCommand, TrainAndSweepShareTrainsFlagsSweepAddsItsGrids) {
  for (const char* f : {"model", "data", "lr", "steps", "loss", "batch", "seed", "out"}) {
    EXPECT_TRUE(has_flag("monitor train", f)) << f;
    EXPECT_TRUE(has_flag("monitor sweep", f)) << f;
  }
  for (const char* f : {"lr-grid", "k-list", "init-seeds"}) {
    EXPECT_TRUE(has_flag("monitor sweep", f)) << f;
    EXPECT_FALSE(has_flag("monitor train", f)) << f;
  }
}

TEST(MonitorCommand, InferReadsAModelAndItsInputs) {
  for (const char* f : {"model", "inputs", "fuzz", "budget-s", "data", "precision", "seed", "out"})
    EXPECT_TRUE(has_flag("monitor infer", f)) << f;
  for (const char* f : {"steps", "lr", "loss"}) EXPECT_FALSE(has_flag("monitor infer", f)) << f;
}

TEST(MonitorCommand, TrainDefaults) {
  auto c = cli::make_command("monitor train");
  const auto d = c->options();
  EXPECT_EQ(cli::flag::default_of<std::string>(d, "model"), "mlp");
  EXPECT_EQ(cli::flag::default_of<std::string>(d, "data"), "digits");
  EXPECT_EQ(cli::flag::default_of<double>(d, "lr"), 0.5);
  EXPECT_EQ(cli::flag::default_of<int64_t>(d, "steps"), 200);
  EXPECT_EQ(cli::flag::default_of<std::string>(d, "loss"), "ce");
}

TEST(MonitorCommand, BadCommandLines) {
  EXPECT_EQ(dispatch_error({"monitor", "train", "extra"}), "monitor: unexpected argument 'extra'");
  EXPECT_EQ(dispatch_error({"monitor", "train", "--lr", "fast"}).rfind("monitor train: ", 0), 0u);
  const std::string e = dispatch_error({"monitor", "onnx-tests", "--data", "/nonexistent/onnx"});
  EXPECT_EQ(e.rfind("monitor onnx-tests: ", 0), 0u) << e;
}

}  // namespace
}  // namespace stabfuzz
