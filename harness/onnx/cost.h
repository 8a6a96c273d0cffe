// `stabfuzz bench --suite monitor`: what monitoring an ONNX graph costs against running it
// natively in the same interpreter: one inference (the graph under CESTAC with every node's
// digits, against the native graph) and one training step (forward, loss, backward, update with
// every node traced, against the native step), for the example models.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::onnx {

struct MonitorCost {
  std::string model, what;  // what: "inference (N rows)" or "training step (batch B)"
  double native_ms = 0, monitored_ms = 0;  // the minimum over the repeats
  int repeats = 0;
  double ratio() const { return native_ms > 0 ? monitored_ms / native_ms : 0; }
};

// The models under `examples` (mlp/ and cnn/: model.onnx and test_data_set_0; empty: ./examples/
// models, else the source tree's), each timed `repeats` times per side, training on the first
// rows of the digits dataset.
std::vector<MonitorCost> monitor_costs(std::string examples, int repeats, std::ostream& progress);
void print_monitor_costs(const std::vector<MonitorCost>& rows, std::ostream& os);
json::Value monitor_costs_json(const std::vector<MonitorCost>& rows);

}  // namespace stabfuzz::onnx
