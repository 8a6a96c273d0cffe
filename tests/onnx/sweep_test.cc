// The lr x weight-decay sweep through the ONNX trainer (harness/onnx/sweep.h) against the
// hand-written models' sweep from the same initial weights, and `monitor export`'s graphs.
#include <gtest/gtest.h>

#ifdef STABFUZZ_HAVE_ONNX
#include <cmath>
#include <sstream>

#include "harness/monitor/sweep.h"
#include "harness/monitor/weights.h"
#include "harness/onnx/export.h"
#include "harness/onnx/sweep.h"
#include "tests/support/run_binary.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
TEST(OnnxSweep, MatchesTheHandWrittenSweepFromTheSameWeights) {
  const monitor::Split data = monitor::load_dataset("digits", 200);
  monitor::SweepConfig cfg;
  cfg.lrs = {0.5};
  cfg.wds = {0, 0.01};
  cfg.ks = {1, 3};
  cfg.init_seeds = 0;
  cfg.base.spec = monitor::spec_for(monitor::ModelKind::mlp, data.train);
  cfg.base.steps = 12;
  cfg.base.seed = 1;
  cfg.base.sharpness_every = 6;
  std::ostringstream quiet;
  const auto hand = monitor::run_sweep(cfg, data, quiet);

  monitor::ModelFile m;
  m.spec = cfg.base.spec;
  m.params = monitor::init_params(m.spec, 1, true);
  onnx::Model g = onnx::export_model(m);
  g.path = "mlp-init.onnx";
  onnx::TrainOptions o;
  o.steps = 12;
  o.sharpness_every = 6;
  const auto graph = onnx::sweep(g, data, o, cfg, quiet);

  ASSERT_EQ(graph.size(), hand.size());
  for (size_t r = 0; r < hand.size(); ++r) {
    SCOPED_TRACE("weight decay " + std::to_string(hand[r].wd));
    EXPECT_EQ(graph[r].wd, hand[r].wd);
    // Below the stability limit the two CESTAC runs agree to the digits they keep.
    EXPECT_NEAR(graph[r].cestac.train_loss_final, hand[r].cestac.train_loss_final,
                1e-5 * hand[r].cestac.train_loss_final);
    // Sharpness in double from weights equal to float precision: a few parts per thousand.
    EXPECT_NEAR(graph[r].cestac.lambda0, hand[r].cestac.lambda0,
                5e-3 * std::fabs(hand[r].cestac.lambda0));
    EXPECT_NEAR(graph[r].cestac.lambda_max, hand[r].cestac.lambda_max,
                5e-3 * std::fabs(hand[r].cestac.lambda_max));
    ASSERT_EQ(graph[r].loss_k.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {  // native f32, the k-trick: equal up to rounding
      EXPECT_NEAR(graph[r].loss_k[k], hand[r].loss_k[k], 1e-4 * hand[r].loss_k[k]);
      EXPECT_NEAR(graph[r].acc_k[k], hand[r].acc_k[k], 0.01);
    }
    EXPECT_TRUE(graph[r].acc_seeds.empty());
  }
  // The table marks the missing seeds column.
  EXPECT_NE(monitor::sweep_table(graph).find("           -"), std::string::npos);
}

TEST(OnnxSweep, ExportWritesTheInitialGraphAndTheSweepRunsIt) {
  const std::string dir = temp_dir("");
  const auto e = run_stabfuzz("monitor export --model cnn --out " + dir + "/cnn.onnx");
  ASSERT_EQ(e.code, 0) << e.out << e.err;
  const onnx::Model g = onnx::read_model(dir + "/cnn.onnx");
  EXPECT_EQ(g.initializers.size(), 4u);
  EXPECT_EQ(g.input_shapes.at("x"), (std::vector<int64_t>{-1, 1, 8, 8}));
  EXPECT_EQ(run_stabfuzz("monitor export --model mlp").code, 2);  // no --out
  const auto s = run_stabfuzz("monitor sweep --model " + dir +
                              "/cnn.onnx --lr-grid 0.5 --steps 3 --max-train 64 --k-list 1 "
                              "--sharpness-every 0 --out " +
                              dir + "/sweep");
  ASSERT_EQ(s.code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("0.5       0"), std::string::npos) << s.out;
  EXPECT_NE(slurp(dir + "/sweep/sweep.json").find("cnn.onnx"), std::string::npos);
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
