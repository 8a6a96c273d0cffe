// `stabfuzz monitor sweep --model M.onnx`: the learning-rate x weight-decay sweep of
// monitor/sweep.h on an ONNX graph's own weights, through the ONNX trainer (train.h): per cell a
// CESTAC run with the sharpness along the way, and native runs of the k-trick. A graph has one set
// of initial weights, so there are no initialisation seeds.
#pragma once

#include <iosfwd>
#include <vector>

#include "harness/monitor/sweep.h"
#include "harness/onnx/model.h"
#include "harness/onnx/train.h"

namespace stabfuzz::onnx {

// The rows of cfg.lrs x cfg.wds (cfg.ks for the k-trick; cfg.init_seeds ignored), each from
// `base` with its learning rate and weight decay.
std::vector<monitor::SweepRow> sweep(const Model& m, const monitor::Split& data,
                                     const TrainOptions& base, const monitor::SweepConfig& cfg,
                                     std::ostream& progress);

// The data `monitor train --model M.onnx --data D` reads: digits, fashion-mnist, X.npy,Y.npy or
// IMAGES,LABELS (IDX); max_train > 0 keeps the first training rows.
monitor::Split load_training_data(const std::string& data, int64_t max_train);

}  // namespace stabfuzz::onnx
