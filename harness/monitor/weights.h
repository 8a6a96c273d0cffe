// The trained-model file of `stabfuzz monitor`: the samples' mean weights as exact hex floats.
//
// Format 1 (text, one item per line):
//   stabfuzz-monitor-model 1
//   model mlp|cnn            data NAME              precision f32|f64
//   height H  width W  hidden N  channels N  classes N          (one "key value" per line)
//   loss ce|mse|ce-naive  lr X  steps N  seed S  test_accuracy_mean A   (provenance, informative)
//   tensor w1|b1|w2|b2 COUNT, then COUNT lines of C99 hex floats (%a), in the order w1 b1 w2 b2
//   end
// Hex floats round-trip exactly, so infer runs the very weights train evaluated.
#pragma once

#include <cstdint>
#include <string>

#include "harness/monitor/model.h"

namespace stabfuzz::monitor {

inline constexpr int kModelFormat = 1;

struct ModelFile {
  ModelSpec spec;
  std::string data;  // the dataset it was trained on (digits, fashion-mnist)
  bool f64 = false;  // the scalar it was trained in; f32 weights are exact floats
  std::string loss = "ce";
  double lr = 0;
  int64_t steps = 0;
  uint64_t seed = 0;
  double test_accuracy_mean = 0;  // train's test accuracy of these weights (round to nearest)
  Params<double> params;
};

std::string model_file_text(const ModelFile& m);
void write_model_file(const ModelFile& m, const std::string& path);
// InputError naming the file and the problem (missing, wrong header or version, bad value,
// wrong tensor size, truncated).
ModelFile parse_model_file(const std::string& text, const std::string& path);
ModelFile read_model_file(const std::string& path);

}  // namespace stabfuzz::monitor
