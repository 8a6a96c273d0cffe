// Training under CESTAC: SGD (momentum optional) on a monitor model, recording per step the loss
// and its digits, per operation the digits of its output, instabilities, the relative L1
// difference between the CESTAC samples' weights, and the sharpness lambda every M steps.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/monitor/data.h"
#include "harness/monitor/model.h"
#include "harness/monitor/trace.h"
#include "stabfuzz/cestac.h"

namespace stabfuzz::monitor {

struct TrainConfig {
  ModelSpec spec;
  LossKind loss = LossKind::ce;
  bool f64 = false;  // Stoch<double, 3> (else Stoch<float, 3>; native runs likewise)
  double lr = 0.1;
  double momentum = 0;
  double weight_decay =
      0;      // L2: the gradient gains weight_decay * w (every tensor, as torch.optim.SGD)
  int k = 1;  // the k-trick: the update is (lr k) (g / k), equal up to rounding
  int64_t steps = 100;
  int64_t batch = 0;            // 0: full batch (gradient descent)
  uint64_t seed = 1;            // initialisation, batches and CESTAC rounding
  uint64_t init_seed = 0;       // 0: the seed
  int64_t sharpness_every = 0;  // 0: never; else every M steps and at the last step
  int sharpness_iters = 20;
  double delta = 2;  // digits an operation may lose beyond its conditioning
  int cancel_digits = cestac::kDefaultCancelDigits;
  bool trace = true;  // per-operation digits (off: only the loss, samples and accuracy)
};

struct StepRecord {
  int64_t step = 0;
  double loss = 0, loss_digits = 0;
  double rel_l1 = 0;  // sum_i |w_i^(k) - w_i^(0)| / sum_i |w_i^(0)|, mean over samples k > 0
  double weight_digits_min = 0, weight_digits_mean = 0;
  std::array<uint64_t, cestac::kKindCount> instabilities{};  // this step's, by kind
  double lambda = NAN;  // sharpness at this step (before its update), when computed
};

struct SiteRecord {
  std::string kind, site;
  uint64_t count = 0;
};

struct TrainResult {
  TrainConfig config;
  std::string data;
  std::vector<StepRecord> steps;
  std::vector<OpStats> ops;
  std::optional<Pollution> polluting;
  std::vector<SiteRecord> sites;
  std::vector<double> test_accuracy;  // per CESTAC sample (one entry for a native run)
  // The samples' mean weights, rounded to the native scalar (what model.txt stores), and their
  // test accuracy in round to nearest.
  Params<double> final_params;
  double test_accuracy_mean = 0;
  double train_loss_final = 0;
  double lambda0 = NAN, lambda_max = NAN;
  int64_t diverged_at = -1;  // the step whose loss was not finite (training stops there), or -1
  double seconds = 0;
};

// InputError naming the first invalid setting (lr, k, steps, batch, momentum, weight decay).
void check_config(const TrainConfig& cfg);

// Trains under CESTAC (cestac::Run keyed by the seed) and records everything above.
TrainResult train_cestac(const TrainConfig& cfg, const Split& data);

// The same training in native float or double (no trace): final loss and test accuracy.
TrainResult train_native(const TrainConfig& cfg, const Split& data);

// Largest Hessian eigenvalue (by magnitude) of the mean loss over `d` at `p`, by power iteration
// on Hessian-vector products from central differences of gradients, in double.
double sharpness(const ModelSpec& spec, LossKind loss, const Params<double>& p, const Dataset& d,
                 int iters, uint64_t seed);

// The same from a flat weight vector w and the full-batch gradient at any weights (power
// iteration from a random start drawn from `seed`, 20 steps in the monitor).
double power_sharpness(const std::vector<double>& w,
                       const std::function<std::vector<double>(const std::vector<double>&)>& grad,
                       int iters, uint64_t seed);

// The model's initial parameters: uniform in +-1/sqrt(fan_in) (PyTorch's default), each value
// rounded to float when `f32`, so that every scalar type starts from the same exact weights.
Params<double> init_params(const ModelSpec& spec, uint64_t seed, bool f32);

// Sets spec's input size from the data and checks it fits the model.
ModelSpec spec_for(ModelKind kind, const Dataset& d);

}  // namespace stabfuzz::monitor
