// The monitor's outputs: steps.csv, ops.csv, monitor.json and report.html of a training run, and
// the learning-rate sweep's table (sweep.csv, sweep.json, report.html).
#pragma once

#include <string>
#include <vector>

#include "harness/monitor/train.h"
#include "reports/json.h"

namespace stabfuzz::monitor {

json::Value train_json(const TrainResult& r);
std::string steps_csv(const TrainResult& r);
std::string ops_csv(const TrainResult& r);
// One row per operation and step: step,layer,phase,op,site,elements,digits_min,p10,mean,polluted.
std::string ops_csv(const std::vector<OpStats>& ops);
// The polluting operation: step, layer, phase, op, site, element, value, digits, explained.
json::Value pollution_json(const Pollution& p);
// Weights' digits vs step per layer, lambda lr vs the limit 2, loss vs step, and the
// (layer, phase, operation) x step heatmap of digits with the polluting operation marked.
std::string render_train_html(const TrainResult& r);
// Writes the four files under `dir` (created).
void write_train_outputs(const TrainResult& r, const std::string& dir);

// Mean and (sample) standard deviation.
double mean_of(const std::vector<double>& v);
double std_of(const std::vector<double>& v);

}  // namespace stabfuzz::monitor
