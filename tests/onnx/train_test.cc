// Training ONNX graphs (harness/onnx/train.h): the same losses as the monitor's hand-written MLP
// from the same weights, the planted naive cross-entropy named and the stable one not, Adam's
// first step, and the errors of graphs and data it cannot train.
#include <gtest/gtest.h>

#ifdef STABFUZZ_HAVE_ONNX
#include <cmath>
#include <filesystem>

#include "harness/monitor/train.h"
#include "harness/monitor/weights.h"
#include "harness/onnx/export.h"
#include "harness/onnx/npy.h"
#include "harness/onnx/train.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"
#endif

namespace stabfuzz::testing {
namespace {

#ifdef STABFUZZ_HAVE_ONNX
// The first 150 training rows of digits and its test set.
monitor::Split small_digits() {
  monitor::Split s = monitor::load_dataset("digits", 150);
  return s;
}

// The built-in model `kind` with its initial weights (seed 1), as the graph export_model writes.
onnx::Model initial_graph(monitor::ModelKind kind, const monitor::Dataset& d, bool f64) {
  monitor::ModelFile m;
  m.spec = monitor::spec_for(kind, d);
  m.f64 = f64;
  m.params = monitor::init_params(m.spec, 1, !f64);
  onnx::Model g = onnx::export_model(m);
  g.path = std::string(monitor::model_name(kind)) + ".onnx";
  return g;
}

TEST(OnnxTrain, LossesMatchTheHandWrittenModelsFromTheSameWeights) {
  const monitor::Split data = small_digits();
  for (auto kind : {monitor::ModelKind::mlp, monitor::ModelKind::cnn}) {
    SCOPED_TRACE(monitor::model_name(kind));
    monitor::TrainConfig c;
    c.spec = monitor::spec_for(kind, data.train);
    c.f64 = true;
    c.lr = 0.5;
    c.momentum = 0.5;
    c.weight_decay = 1e-3;
    c.steps = 6;
    c.seed = 1;
    const monitor::TrainResult hand = monitor::train_native(c, data);
    onnx::TrainOptions o;
    o.f64 = true;
    o.lr = 0.5;
    o.momentum = 0.5;
    o.weight_decay = 1e-3;
    o.steps = 6;
    const auto losses = onnx::train_native(initial_graph(kind, data.train, true), data, o);
    ASSERT_EQ(losses.size(), hand.steps.size());
    for (size_t k = 0; k < losses.size(); ++k)
      EXPECT_NEAR(losses[k], hand.steps[k].loss, 1e-12 * hand.steps[k].loss) << "step " << k;
  }
}

TEST(OnnxTrain, ThePlantedNaiveCrossEntropyIsNamedAndTheStableOneIsNot) {
  const monitor::Split data = small_digits();
  const onnx::Model trained =
      onnx::read_model(std::string(STABFUZZ_SOURCE_DIR) + "/examples/models/mlp/model.onnx");
  onnx::TrainOptions o;
  o.lr = 0.5;
  o.steps = 4;
  o.loss = monitor::LossKind::ce_naive;
  const onnx::TrainReport naive = onnx::train(trained, data, o);
  ASSERT_TRUE(naive.polluting.has_value());
  EXPECT_EQ(naive.polluting->layer, "loss");
  EXPECT_EQ(naive.polluting->op, "cross_entropy_naive");
  o.loss = monitor::LossKind::ce;
  const onnx::TrainReport stable = onnx::train(trained, data, o);
  EXPECT_FALSE(stable.polluting.has_value())
      << stable.polluting->layer << " " << stable.polluting->op;
  EXPECT_TRUE(stable.softmax_skipped);
  EXPECT_EQ(stable.logits, "logits");
  EXPECT_EQ(stable.params.size(), 4u);
  // Every node ran forward and the parameters' nodes backward, per step.
  std::set<std::string> seen;
  for (const auto& s : stable.ops) seen.insert(s.layer + "|" + monitor::phase_name(s.phase));
  for (const char* k : {"fc1|forward", "tanh1|forward", "fc2|forward", "fc2|backward",
                        "tanh1|backward", "fc1|backward", "w1|update", "b2|update"})
    EXPECT_TRUE(seen.count(k)) << k;
  EXPECT_GT(stable.test_accuracy_mean, 0.9);
  EXPECT_EQ(stable.test_accuracy.size(), 3u);
}

TEST(OnnxTrain, AdamsFirstStepMovesEachWeightByTheLearningRate) {
  const monitor::Split data = small_digits();
  const onnx::Model g = initial_graph(monitor::ModelKind::mlp, data.train, true);
  onnx::TrainOptions o;
  o.optimizer = onnx::Optimizer::adam;
  o.lr = 1e-3;
  o.steps = 1;
  o.f64 = true;
  const onnx::TrainReport r = onnx::train(g, data, o);
  // m^ = g, v^ = g^2 after one step: w - lr g / (|g| + eps), a step of lr where |g| >> eps.
  size_t moved = 0, total = 0;
  for (const auto& name : r.params) {
    const auto& before = g.initializers.at(name).values;
    const auto& after = r.trained.initializers.at(name).values;
    for (size_t i = 0; i < before.size(); ++i, ++total) {
      const double step = std::fabs(after[i] - before[i]);
      EXPECT_LE(step, 1e-3 * (1 + 1e-9)) << name << "[" << i << "]";
      moved += step > 0.999e-3;
    }
  }
  EXPECT_GT(moved, total / 2);  // weights with a gradient far above eps
}

TEST(OnnxTrain, GraphsAndDataItCannotTrainAreOneClearError) {
  const monitor::Split data = small_digits();
  onnx::Model g = initial_graph(monitor::ModelKind::mlp, data.train, false);
  onnx::TrainOptions o;
  o.steps = 1;
  auto error_of = [&](const onnx::Model& m, const monitor::Split& d) -> std::string {
    try {
      onnx::train(m, d, o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  onnx::Model gather = g;
  gather.nodes[1].op = "Floor";  // tanh1 -> a node with no backward
  EXPECT_NE(error_of(gather, data).find("ONNX node 'tanh1' (Floor): training has no backward"),
            std::string::npos);
  monitor::Split bad = data;
  bad.train.y[3] = 12;
  EXPECT_NE(error_of(g, bad).find("label 12 is outside the graph's 10 outputs"), std::string::npos);
  onnx::Model wide = g;
  wide.input_shapes["x"] = {-1, 65};
  EXPECT_NE(error_of(wide, data).find("the data's rows have 64 values"), std::string::npos);
  o.lr = -1;
  EXPECT_NE(error_of(g, data).find("--lr must be positive"), std::string::npos);
}

// Slow tier: both built-in models as ONNX graphs from their initial weights, full digits, three
// learning rates below the stability limit, 200 steps under CESTAC: no node is named.
TEST(OnnxTrain, StableFullDataRunsNameNoPollutingNode) {
  const monitor::Split data = monitor::load_dataset("digits");
  for (auto kind : {monitor::ModelKind::mlp, monitor::ModelKind::cnn})
    for (double lr : {0.25, 0.5, 1.0}) {
      SCOPED_TRACE(std::string(monitor::model_name(kind)) + " lr " + std::to_string(lr));
      onnx::TrainOptions o;
      o.lr = lr;
      o.steps = 200;
      const onnx::TrainReport r = onnx::train(initial_graph(kind, data.train, false), data, o);
      EXPECT_EQ(r.diverged_at, -1);
      EXPECT_FALSE(r.polluting.has_value())
          << r.polluting->layer << " " << monitor::phase_name(r.polluting->phase) << " "
          << r.polluting->op << " step " << r.polluting->step << ": " << r.polluting->out_digits
          << " digits, explained " << r.polluting->explained_digits;
      EXPECT_GT(r.test_accuracy_mean, 0.85);
    }
}

TEST(OnnxTrain, TheCommandTrainsFromNumpyFilesAndWritesItsFiles) {
  const std::string dir = temp_dir("");
  const monitor::Split data = small_digits();
  onnx::HostTensor x{onnx::Elem::float32, {150, 64}, data.train.x};
  onnx::HostTensor y{onnx::Elem::int64, {150}, {}};
  for (int v : data.train.y) y.values.push_back(v);
  onnx::write_npy(dir + "/x.npy", x);
  onnx::write_npy(dir + "/y.npy", y);
  const auto r = run_stabfuzz("monitor train --model '" + std::string(STABFUZZ_SOURCE_DIR) +
                              "/examples/models/mlp/model.onnx' --data " + dir + "/x.npy," + dir +
                              "/y.npy --steps 3 --optimizer adam --lr 0.001 --out " + dir + "/out");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("polluting node: none"), std::string::npos) << r.out;
  for (const char* f : {"steps.csv", "ops.csv", "monitor.json", "model.onnx"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/out/" + f)) << f;
  // The trained graph reads back and runs.
  const onnx::Model back = onnx::read_model(dir + "/out/model.onnx");
  EXPECT_EQ(back.input_shapes.at("x"), (std::vector<int64_t>{-1, 64}));
}
#endif

}  // namespace
}  // namespace stabfuzz::testing
