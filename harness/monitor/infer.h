// `stabfuzz monitor infer`: a trained model's forward pass under CESTAC over the test set —
// digits per logit, predictions whose argmax differs between samples, margin vs digits, and the
// digits of every layer's output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/monitor/data.h"
#include "harness/monitor/trace.h"
#include "harness/monitor/weights.h"
#include "reports/json.h"

namespace stabfuzz::monitor {

struct InferRow {
  int64_t row = 0;
  int label = 0;
  int pred = 0;                   // argmax of the samples' mean logits
  std::vector<int> sample_preds;  // argmax per CESTAC sample
  bool flip = false;              // the samples' argmaxes differ
  double margin = 0;              // top1 - top2 of the mean logits
  double margin_digits = 0;       // digits of that difference under CESTAC
  double logit_digits_min = 0;    // the row's least accurate logit
};

struct MarginBucket {
  double lo = 0, hi = 0;  // margin in [lo, hi)
  int64_t rows = 0, flips = 0;
  double logit_digits_min = 0, logit_digits_mean = 0, margin_digits_min = 0, margin_digits_mean = 0;
};

struct DigitsSummary {
  double min = 0, p10 = 0, mean = 0;
};

struct InferResult {
  std::string model_path, data;
  bool f64 = false;
  uint64_t seed = 0;
  ModelFile model;
  double accuracy_native = 0;               // round to nearest, as train evaluated the weights
  std::vector<double> accuracy_per_sample;  // each CESTAC sample's argmax
  DigitsSummary logits;
  std::vector<InferRow> rows;
  std::vector<MarginBucket> buckets;
  std::vector<OpStats> layers;  // forward operations' output digits (min/p10/mean)
  int64_t flips = 0;
  double seconds = 0;
};

// Runs the forward pass of `m` over `test` under CESTAC (Stoch<F, 3>, F from `f64`), keyed by seed.
InferResult run_infer(const ModelFile& m, const Dataset& test, bool f64, uint64_t seed);

json::Value infer_json(const InferResult& r);
std::string infer_csv(const InferResult& r);
std::string render_infer_html(const InferResult& r);

// The settings of `monitor infer`, as the flags give them.
struct InferArgs {
  std::string model;      // the model file (train's model.txt), or an ONNX graph (.onnx)
  std::string inputs;     // with an ONNX graph: its test_data_set folder (input_0.pb, ...)
  bool fuzz = false;      // with an ONNX graph: also search inputs that break it
  double budget_s = 10;   // the search's seconds
  std::string data;       // empty: the model file's dataset
  std::string precision;  // f32 | f64; empty: the model file's
  uint64_t seed = 1;
  std::string out;  // empty: runs/monitor-infer-...
};

// The subcommand: the summary on stdout, infer.json, infer.csv, report.html under the output
// directory.
int infer_command(const InferArgs& o);

}  // namespace stabfuzz::monitor
