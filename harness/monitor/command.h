// `stabfuzz monitor train|sweep`: the subcommands' entry points (harness/cli/ reads the command
// line into MonitorArgs).
#pragma once

#include <cstdint>
#include <string>

namespace stabfuzz::monitor {

// The settings of `monitor train` and `monitor sweep`, as the flags give them.
struct MonitorArgs {
  std::string model;      // mlp | cnn | an ONNX graph (.onnx)
  std::string data;       // digits | fashion-mnist | X.npy,Y.npy | IMAGES,LABELS (IDX)
  std::string optimizer;  // sgd | adam (ONNX graphs)
  std::string loss;       // ce | mse | ce-naive
  std::string precision;  // f32 | f64
  double lr = 0, momentum = 0, weight_decay = 0, delta = 0;
  int64_t steps = 0, batch = 0, sharpness_every = 0, max_train = 0;
  uint64_t seed = 1;
  int cancel_digits = 0;
  std::string out;  // empty: runs/monitor-...
  // monitor sweep
  std::string lr_grid, k_list, wd_grid;
  int init_seeds = 0;
};

// Each returns the process exit code (0); throws InputError on bad settings or data.
int train_command(const MonitorArgs& a);
int sweep_command(const MonitorArgs& a);
// `monitor export`: a built-in model with its initial weights as an ONNX graph (a.out).
int export_command(const MonitorArgs& a);

}  // namespace stabfuzz::monitor
