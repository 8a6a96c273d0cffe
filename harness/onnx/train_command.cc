// `stabfuzz monitor train --model M.onnx`: the data, the run and its files (steps.csv, ops.csv,
// monitor.json, model.onnx).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/monitor/output.h"
#include "harness/onnx/npy.h"
#include "harness/onnx/sweep.h"
#include "harness/onnx/train.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::onnx {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every fifth row (rows 4, 9, ...) to the test set, as monitor::load_dataset splits digits.
monitor::Split split_fifths(const monitor::Dataset& all) {
  monitor::Split s;
  s.train = s.test = all;
  s.train.x.clear(), s.train.y.clear(), s.test.x.clear(), s.test.y.clear();
  const auto F = static_cast<size_t>(all.features());
  for (size_t r = 0; r < all.rows(); ++r) {
    monitor::Dataset& d = r % 5 == 4 ? s.test : s.train;
    d.x.insert(d.x.end(), all.x.begin() + static_cast<long>(r * F),
               all.x.begin() + static_cast<long>((r + 1) * F));
    d.y.push_back(all.y[r]);
  }
  return s;
}

}  // namespace

monitor::Split load_training_data(const std::string& data, int64_t max_train) {
  monitor::Split s;
  const auto comma = data.find(',');
  if (comma == std::string::npos) {
    s = monitor::load_dataset(data, max_train);
  } else {
    const std::string a = data.substr(0, comma), b = data.substr(comma + 1);
    if (ends_with(a, ".npy")) {
      s = load_npy_split(a, b);
    } else {
      s = split_fifths(monitor::load_idx(a, b, std::filesystem::path(a).filename().string()));
    }
    if (max_train > 0 && static_cast<size_t>(max_train) < s.train.rows()) {
      s.train.x.resize(static_cast<size_t>(max_train) * static_cast<size_t>(s.train.features()));
      s.train.y.resize(static_cast<size_t>(max_train));
    }
  }
  return s;
}

namespace {

std::string steps_csv(const TrainReport& r) {
  std::ostringstream os;
  os << "step,loss,loss_digits,rel_l1,weight_digits_min,weight_digits_mean,grad_digits_min,"
        "grad_digits_mean\n";
  for (const auto& s : r.steps)
    os << s.step << ',' << num(s.loss) << ',' << num(s.loss_digits) << ',' << num(s.rel_l1) << ','
       << num(s.weight_digits_min) << ',' << num(s.weight_digits_mean) << ','
       << num(s.grad_digits_min) << ',' << num(s.grad_digits_mean) << '\n';
  return os.str();
}

std::string polluting_line(const TrainReport& r) {
  if (!r.polluting) return "polluting node: none (delta " + num(r.options.delta) + ")";
  const auto& p = *r.polluting;
  return "polluting node: " + p.layer + " " + monitor::phase_name(p.phase) + " " + p.op + " at " +
         p.site + ", step " + std::to_string(p.step) + ": " + num(p.out_digits) +
         " digits where its inputs explain " + num(p.explained_digits);
}

}  // namespace

monitor::Split load_npy_split(const std::string& x_path, const std::string& y_path) {
  const HostTensor x = read_npy(x_path), y = read_npy(y_path);
  if (x.shape.empty() || x.shape[0] == 0)
    throw InputError(x_path + ": the rows need a first axis (N x ...)");
  const auto N = static_cast<size_t>(x.shape[0]);
  if (y.shape.size() != 1 || static_cast<size_t>(y.shape[0]) != N || !is_integer(y.elem))
    throw InputError(y_path + ": the labels must be " + std::to_string(N) +
                     " integers, one per row of " + x_path);
  monitor::Dataset all;
  all.name = std::filesystem::path(x_path).stem().string();
  all.height = 1;
  all.width = static_cast<int>(x.size() / N);
  all.x = x.values;
  int classes = 0;
  for (double v : y.values) {
    if (v < 0 || v > 1e6) throw InputError(y_path + ": label " + num(v) + " out of range");
    all.y.push_back(static_cast<int>(v));
    classes = std::max(classes, static_cast<int>(v) + 1);
  }
  all.classes = classes;
  return split_fifths(all);
}

json::Value train_json(const TrainReport& r) {
  json::Value j, cfg;
  const TrainOptions& o = r.options;
  cfg.set("model", r.model);
  cfg.set("data", r.data);
  cfg.set("loss", monitor::loss_name(o.loss));
  cfg.set("optimizer", optimizer_name(o.optimizer));
  cfg.set("precision", r.precision);
  cfg.set("lr", o.lr);
  cfg.set("momentum", o.momentum);
  cfg.set("weight_decay", o.weight_decay);
  cfg.set("steps", o.steps);
  cfg.set("batch", o.batch);
  cfg.set("seed", static_cast<unsigned long long>(o.seed));
  cfg.set("delta", o.delta);
  j.set("config", std::move(cfg));
  json::Value g;
  g.set("input", r.input);
  g.set("logits", r.logits);
  g.set("softmax_skipped", r.softmax_skipped);
  json::Array params;
  for (const auto& p : r.params) params.emplace_back(p);
  g.set("params", std::move(params));
  g.set("param_count", static_cast<unsigned long long>(r.param_count));
  j.set("graph", std::move(g));
  json::Value s;
  const TrainStep& last = r.steps.back();
  s.set("final_loss", last.loss);
  s.set("final_loss_digits", last.loss_digits);
  s.set("final_weight_digits_min", last.weight_digits_min);
  s.set("final_weight_digits_mean", last.weight_digits_mean);
  s.set("final_grad_digits_min", last.grad_digits_min);
  s.set("final_rel_l1", last.rel_l1);
  s.set("diverged_at_step", r.diverged_at >= 0 ? json::Value(r.diverged_at) : json::Value());
  json::Array acc;
  for (double a : r.test_accuracy) acc.emplace_back(a);
  s.set("test_accuracy_per_sample", std::move(acc));
  s.set("test_accuracy_mean_weights", r.test_accuracy_mean);
  s.set("polluting", r.polluting ? monitor::pollution_json(*r.polluting) : json::Value());
  s.set("seconds", r.seconds);
  j.set("summary", std::move(s));
  json::Array steps;
  for (const auto& st : r.steps) {
    json::Value js;
    js.set("step", st.step);
    js.set("loss", st.loss);
    js.set("loss_digits", st.loss_digits);
    js.set("weight_digits_min", st.weight_digits_min);
    js.set("weight_digits_mean", st.weight_digits_mean);
    js.set("grad_digits_min", st.grad_digits_min);
    js.set("grad_digits_mean", st.grad_digits_mean);
    js.set("rel_l1", st.rel_l1);
    steps.push_back(std::move(js));
  }
  j.set("steps", std::move(steps));
  return j;
}

int train_command(const std::string& model, const std::string& data, const TrainOptions& o,
                  int64_t max_train, const std::string& out) {
  const Model m = read_model(model);
  check_trainable(m, o);
  const monitor::Split split = load_training_data(data, max_train);
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("cannot create output directory " + out + ": " + ec.message());
  std::printf("stabfuzz monitor train %s: %s, %zu training rows, %s, lr %s, %lld steps, %s\n",
              model.c_str(), split.train.name.c_str(), split.train.rows(),
              optimizer_name(o.optimizer), num(o.lr).c_str(), static_cast<long long>(o.steps),
              o.f64 ? "Stoch<double, 3>" : "Stoch<float, 3>");
  std::fflush(stdout);
  const TrainReport r = train(m, split, o);
  const TrainStep& last = r.steps.back();
  std::printf(
      "loss %s (%s digits) after %zu steps; weights' digits min %s, mean %s; gradients' "
      "min %s\n",
      num(last.loss).c_str(), num(last.loss_digits).c_str(), r.steps.size(),
      num(last.weight_digits_min).c_str(), num(last.weight_digits_mean).c_str(),
      num(last.grad_digits_min).c_str());
  std::string acc;
  for (double a : r.test_accuracy) acc += (acc.empty() ? "" : " ") + num(a);
  std::printf("test accuracy per sample: %s (mean weights %s)\n", acc.c_str(),
              num(r.test_accuracy_mean).c_str());
  if (r.diverged_at >= 0)
    std::printf("diverged: the loss is not finite at step %lld\n",
                static_cast<long long>(r.diverged_at));
  std::printf("%s\n", polluting_line(r).c_str());
  reports::write_text_atomically(out + "/steps.csv", steps_csv(r));
  reports::write_text_atomically(out + "/ops.csv", monitor::ops_csv(r.ops));
  reports::write_json_atomically(out + "/monitor.json", train_json(r));
  write_model(r.trained, out + "/model.onnx");
  std::printf("wrote %s/steps.csv, ops.csv, monitor.json, model.onnx (%.1f s)\n", out.c_str(),
              r.seconds);
  return 0;
}

}  // namespace stabfuzz::onnx
