// `stabfuzz monitor infer --model M.onnx --inputs DIR`: an ONNX graph run natively, under CESTAC
// (one pass, Stoch<F, 3>) and at 256 bits (Big); per node the digits of its output, the digits its
// conditioning explains, the loss beyond that, a kind, and the polluting nodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/onnx/model.h"
#include "reports/json.h"

namespace stabfuzz::onnx {

// Digits lost beyond what the graph's conditioning explains, from which a node is named.
inline constexpr double kPollutingDigits = 2.0;

struct NodeReport {
  std::string name, op, value;  // the node, its operator, its (first) output
  size_t elements = 0;
  double digits_min = 0, digits_median = 0;  // CESTAC's estimate, per element of the output
  double true_min = 0, true_median = 0;      // of the CESTAC mean, against the 256-bit values
  double explained_min = 0;  // min over elements of full - log10(cond): what a backward-stable
                             // evaluation of the graph up to here keeps
  double lost = 0;           // max over elements of explained - digits (>= 0)
  double lost_before = 0;    // the largest `lost` among the node's inputs
  std::string kind;          // "", accuracy, overflow, nan, underflow
  bool polluting = false;
  std::string worst;  // the worst element: index, computed, 256-bit value
};

struct OutputReport {
  std::string name;
  size_t elements = 0;
  double digits_min = 0, true_min = 0;
  double max_rel_error_native = 0;  // the native run against the 256-bit evaluation
};

struct InferReport {
  std::string model, inputs, precision;
  uint64_t seed = 1;
  std::string cond_method;  // how the condition numbers were obtained
  double full_digits = 0;
  std::vector<NodeReport> nodes;
  std::vector<OutputReport> outputs;
  std::vector<std::string> polluting;             // node names
  double native_seconds = 0, cestac_seconds = 0;  // the two runs of the graph, timed alike
  double seconds = 0;
};

// Runs `m` on `inputs`; `f64`: Stoch<double, 3> and double, else float.
InferReport infer(const Model& m, const std::map<std::string, HostTensor>& inputs, bool f64,
                  uint64_t seed);

json::Value infer_json(const InferReport& r);
std::string infer_text(const InferReport& r);
// A self-contained page: the per-node table and the digits per node in graph order.
std::string infer_html(const InferReport& r);

// The command: reads the model and the test_data_set folder, prints the per-node table, writes
// OUT/summary.json. Returns the exit status (0; 1 when a node pollutes and fail_on_polluting).
// With `fuzz`, then searches inputs for `budget_s` seconds (fuzz.h) and lists each break with the
// command that replays it; exit status 1 when the search broke a node.
int infer_command(const std::string& model, const std::string& inputs, const std::string& out,
                  const std::string& precision, uint64_t seed, bool fuzz = false,
                  double budget_s = 10);

}  // namespace stabfuzz::onnx
