// The monitor's built-in models (monitor train's model.txt: the MLP and the CNN) as ONNX graphs,
// and dataset rows as a test_data_set, so that every model runs through one path: the ONNX
// interpreter of `monitor infer --model M.onnx` (docs/monitor.md).
#pragma once

#include <string>

#include "harness/monitor/data.h"
#include "harness/monitor/weights.h"
#include "harness/onnx/model.h"

namespace stabfuzz::onnx {

// MLP: x [N, F] -> Gemm (w1 [F, H], b1) -> Tanh -> Gemm (w2 [H, C], b2) -> Softmax.
// CNN: x [N, 1, H, W] -> Conv (w1 [K, 1, 3, 3], b1) -> Tanh -> Flatten -> Gemm -> Softmax.
// Outputs `probabilities`; float, or double for an f64 model.
Model export_model(const monitor::ModelFile& m);

// The first `rows` rows of `d` as DIR/input_0.pb, and the graph's outputs on them from the native
// interpreter as DIR/output_0.pb (the test_data_set layout ONNX runtimes read).
void write_test_set(const Model& g, const monitor::ModelFile& m, const monitor::Dataset& d,
                    size_t rows, const std::string& dir);

}  // namespace stabfuzz::onnx
