// The monitor's cost against the native interpreter, for `stabfuzz bench --suite monitor`.
#include "harness/onnx/cost.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "harness/monitor/data.h"
#include "harness/monitor/trace.h"
#include "harness/onnx/eval.h"
#include "harness/onnx/train.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::onnx {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

template <class T>
typename Interpreter<T>::Values start(const Model& m,
                                      const std::map<std::string, HostTensor>& inputs) {
  typename Interpreter<T>::Values v;
  for (const auto& [name, t] : m.initializers) v[name] = Interpreter<T>::convert(t);
  for (const auto& [name, t] : inputs) v[name] = Interpreter<T>::convert(t);
  return v;
}

// One inference natively, and under CESTAC with every node's output digits (min and median, as
// `monitor infer` reports them), each the minimum over the repeats.
MonitorCost inference(const Model& m, const std::map<std::string, HostTensor>& inputs,
                      const std::string& name, int repeats) {
  using S = Stoch<float, 3>;
  MonitorCost c{name, "inference", 1e300, 1e300, repeats};
  size_t rows = 0;
  for (const auto& [in, t] : inputs) rows = t.shape.empty() ? 1 : static_cast<size_t>(t.shape[0]);
  c.what = "inference (" + std::to_string(rows) + " rows)";
  double sink = 0;
  for (int r = 0; r < repeats; ++r) {
    auto vn = start<float>(m, inputs);
    const auto tn = Clock::now();
    Interpreter<float>::run(m, vn);
    c.native_ms = std::min(c.native_ms, ms_since(tn));
    auto vs = start<S>(m, inputs);
    const auto ts = Clock::now();
    {
      cestac::Run run(1, 0, cestac::Config{cestac::kDefaultCancelDigits, true});
      Interpreter<S>::run(m, vs);
    }
    for (const Node& n : m.nodes) {  // the per-node digits, in round to nearest
      std::vector<double> d;
      for (const S& x : vs.at(n.out[0]).v) d.push_back(monitor::value_digits(x));
      std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
      sink += d.empty() ? 0 : d[d.size() / 2] + *std::min_element(d.begin(), d.end());
    }
    c.monitored_ms = std::min(c.monitored_ms, ms_since(ts));
  }
  if (sink < 0) c.what += " ";  // keeps the digits computed
  return c;
}

// One training step natively and under CESTAC with every node traced, each the mean of `steps`
// steps, the minimum over the repeats.
MonitorCost training(const Model& m, const monitor::Split& data, const std::string& name,
                     int repeats) {
  TrainOptions o;
  o.lr = 0.1;
  o.steps = 3;
  o.batch = 64;
  MonitorCost c{name, "training step (batch 64)", 1e300, 1e300, repeats};
  for (int r = 0; r < repeats; ++r) {
    double native_s = 0;
    train_native(m, data, o, &native_s);
    c.native_ms = std::min(c.native_ms, native_s * 1e3);
    c.monitored_ms = std::min(c.monitored_ms, train(m, data, o).seconds_per_step * 1e3);
  }
  return c;
}

}  // namespace

std::vector<MonitorCost> monitor_costs(std::string examples, int repeats, std::ostream& progress) {
  if (examples.empty()) {
    examples = "examples/models";
#ifdef STABFUZZ_EXAMPLES_DIR
    if (!std::filesystem::is_directory(examples)) examples = STABFUZZ_EXAMPLES_DIR;
#endif
  }
  const monitor::Split data = monitor::load_dataset("digits", 256);
  std::vector<MonitorCost> rows;
  for (const char* name : {"mlp", "cnn"}) {
    const std::string dir = examples + "/" + name;
    const Model m = read_model(dir + "/model.onnx");
    rows.push_back(inference(m, read_inputs(m, dir + "/test_data_set_0"), name, repeats));
    rows.push_back(training(m, data, name, repeats));
    progress << "  " << name << ": inference " << rows[rows.size() - 2].ratio() << "x, training "
             << rows.back().ratio() << "x" << std::endl;
  }
  return rows;
}

void print_monitor_costs(const std::vector<MonitorCost>& rows, std::ostream& os) {
  os << std::left << std::setw(6) << "model" << std::setw(28) << "what" << std::right
     << std::setw(12) << "native_ms" << std::setw(14) << "monitored_ms" << std::setw(9) << "ratio"
     << "\n";
  for (const auto& r : rows)
    os << std::left << std::setw(6) << r.model << std::setw(28) << r.what << std::right
       << std::fixed << std::setprecision(3) << std::setw(12) << r.native_ms << std::setw(14)
       << r.monitored_ms << std::setprecision(2) << std::setw(9) << r.ratio() << "\n"
       << std::defaultfloat;
}

json::Value monitor_costs_json(const std::vector<MonitorCost>& rows) {
  json::Array a;
  for (const auto& r : rows) {
    json::Value j;
    j.set("model", r.model);
    j.set("what", r.what);
    j.set("native_ms", r.native_ms);
    j.set("monitored_ms", r.monitored_ms);
    j.set("ratio", r.ratio());
    j.set("repeats", r.repeats);
    a.push_back(std::move(j));
  }
  json::Value j;
  j.set("rows", std::move(a));
  return j;
}

}  // namespace stabfuzz::onnx
