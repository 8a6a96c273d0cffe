// `stabfuzz monitor train --model M.onnx`: training an ONNX graph under CESTAC. The graph's
// floating-point initializers are the trained parameters; each step runs the graph's nodes
// forward (eval.h), a loss on its logits, every node backward (grad.h) and an optimizer update,
// all on Stoch<F, 3>, and records per step the digits of the loss, the weights and the gradients
// and per node and phase the digits of what it wrote. A node pollutes when its output loses
// `delta` digits beyond what its inputs' errors explain through its local conditioning (prop.h:
// the node run again on first-order error bounds); the first polluting node is named by its ONNX
// node name, operator and phase (monitor/trace.h's rule).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/monitor/data.h"
#include "harness/monitor/model.h"
#include "harness/monitor/trace.h"
#include "harness/onnx/model.h"
#include "reports/json.h"

namespace stabfuzz::onnx {

enum class Optimizer { sgd, adam };
Optimizer parse_optimizer(const std::string& s);
const char* optimizer_name(Optimizer o);

struct TrainOptions {
  monitor::LossKind loss = monitor::LossKind::ce;  // on the logits (ce, mse, planted ce-naive)
  Optimizer optimizer = Optimizer::sgd;
  double lr = 0.1;
  double momentum = 0;      // SGD
  double weight_decay = 0;  // L2: the gradient gains weight_decay w (torch.optim's weight_decay)
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam
  int64_t steps = 100;
  int64_t batch = 0;  // 0: full batch
  uint64_t seed = 1;  // batches and CESTAC streams
  bool f64 = false;   // Stoch<double, 3> (else Stoch<float, 3>)
  double delta = 2;   // digits a node may lose beyond what its inputs explain
  bool trace = true;  // per-node digits (off: loss, weights, gradients only)
  int k = 1;          // the k-trick: the update is (lr k) (step / k), equal up to rounding
  int64_t sharpness_every = 0;  // 0: never; else lambda every M steps and at the last step
  int sharpness_iters = 20;
};

struct TrainStep {
  int64_t step = 0;
  double loss = 0, loss_digits = 0;
  double weight_digits_min = 0, weight_digits_mean = 0;
  double grad_digits_min = 0, grad_digits_mean = 0;
  double rel_l1 = 0;  // sum |w^(k) - w^(0)| / sum |w^(0)| over the weights, mean over samples k > 0
  double lambda = NAN;  // sharpness of the data loss at this step's weights, when computed
};

struct TrainReport {
  std::string model, data, precision;
  TrainOptions options;
  std::string input;                // the graph input the rows feed
  std::string logits;               // the value the loss reads
  bool softmax_skipped = false;     // the graph ends in Softmax: the loss reads its input
  std::vector<std::string> params;  // the trained initializers
  size_t param_count = 0;
  std::vector<TrainStep> steps;
  std::vector<monitor::OpStats> ops;
  std::optional<monitor::Pollution> polluting;
  std::vector<double> test_accuracy;  // per CESTAC sample's weights, natively
  double test_accuracy_mean = 0;      // of the samples' mean weights
  int64_t diverged_at = -1;
  double seconds = 0;
  double seconds_per_step = 0;  // the CESTAC steps alone, traced
  Model trained;                // the graph with the samples' mean weights
};

// Checks the graph can be trained (one float input, every node on the path to the logits
// differentiable) and the options; InputError naming what is not.
void check_trainable(const Model& m, const TrainOptions& o);

// Trains `m` on data.train under CESTAC and measures the samples' test accuracy on data.test.
TrainReport train(const Model& m, const monitor::Split& data, const TrainOptions& o);

// The same training natively (float or double): the loss per step, the mean seconds per step and
// the test accuracy of the final weights.
std::vector<double> train_native(const Model& m, const monitor::Split& data, const TrainOptions& o,
                                 double* seconds_per_step = nullptr,
                                 double* test_accuracy = nullptr);

// Rows from NumPy files: X (N x ...) and integer labels Y (N); every fifth row is the test set.
monitor::Split load_npy_split(const std::string& x_path, const std::string& y_path);

json::Value train_json(const TrainReport& r);

// The command: `data` is digits, fashion-mnist, X.npy,Y.npy or IMAGES,LABELS (IDX files); writes
// OUT/steps.csv, ops.csv, summary.json and model.onnx (the trained weights). Returns 0.
int train_command(const std::string& model, const std::string& data, const TrainOptions& o,
                  int64_t max_train, const std::string& out);

}  // namespace stabfuzz::onnx
