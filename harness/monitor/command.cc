// `stabfuzz monitor train|sweep`: flags to configurations, progress, outputs.
#include "harness/monitor/command.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/export.h"
#include "harness/onnx/sweep.h"
#include "harness/onnx/train.h"
#endif

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "harness/monitor/output.h"
#include "harness/monitor/sweep.h"
#include "harness/monitor/weights.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

std::string num(double v) {
  char b[48];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

TrainConfig config_from(const MonitorArgs& o, const Dataset& train) {
  TrainConfig c;
  c.spec = spec_for(parse_model(o.model), train);
  c.loss = parse_loss(o.loss);
  if (o.precision != "f32" && o.precision != "f64")
    throw InputError("--precision must be f32 or f64, got '" + o.precision + "'");
  c.f64 = o.precision == "f64";
  c.lr = o.lr;
  c.momentum = o.momentum;
  c.weight_decay = o.weight_decay;
  c.steps = o.steps;
  c.batch = o.batch;
  c.seed = o.seed;
  c.sharpness_every = o.sharpness_every;
  c.delta = o.delta;
  c.cancel_digits = o.cancel_digits;
  check_config(c);
  return c;
}

bool is_onnx(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0;
}

// A run's name for its default output folder: the model file's stem for a graph, and the data
// file's stem for a file pair.
std::string run_name(const MonitorArgs& o) {
  const std::string model =
      is_onnx(o.model) ? std::filesystem::path(o.model).stem().string() : o.model;
  const auto comma = o.data.find(',');
  const std::string data = comma == std::string::npos
                               ? o.data
                               : std::filesystem::path(o.data.substr(0, comma)).stem().string();
  return model + "-" + data;
}

#ifdef STABFUZZ_HAVE_ONNX
onnx::TrainOptions onnx_options(const MonitorArgs& o) {
  onnx::TrainOptions t;
  t.loss = parse_loss(o.loss);
  t.optimizer = onnx::parse_optimizer(o.optimizer.empty() ? "sgd" : o.optimizer);
  t.lr = o.lr;
  t.momentum = o.momentum;
  t.weight_decay = o.weight_decay;
  t.steps = o.steps;
  t.batch = o.batch;
  t.seed = o.seed;
  if (o.precision != "f32" && o.precision != "f64")
    throw InputError("unknown precision '" + o.precision + "' (f32, f64)");
  t.f64 = o.precision == "f64";
  t.delta = o.delta;
  return t;
}

// `monitor train --model M.onnx`: the graph's own weights trained (harness/onnx/train.h).
int train_onnx(const MonitorArgs& o) {
  const onnx::TrainOptions t = onnx_options(o);
  const std::string out = !o.out.empty() ? o.out
                                         : "runs/monitor-" + run_name(o) + "-lr" + num(t.lr) +
                                               "-s" + std::to_string(t.seed);
  return onnx::train_command(o.model, o.data, t, o.max_train, out);
}

// `monitor sweep --model M.onnx`: the sweep's rows through the ONNX trainer.
std::vector<SweepRow> sweep_onnx(const MonitorArgs& o, SweepConfig& s, Split& data) {
  data = onnx::load_training_data(o.data, o.max_train);
  const onnx::Model m = onnx::read_model(o.model);
  onnx::TrainOptions t = onnx_options(o);
  t.sharpness_every = o.sharpness_every;
  s.base.loss = t.loss;
  s.base.f64 = t.f64;
  s.base.steps = t.steps;
  s.base.batch = t.batch;
  s.base.momentum = t.momentum;
  s.base.seed = t.seed;
  s.base.sharpness_every = t.sharpness_every;
  s.model_label = o.model;
  s.init_seeds = 0;  // one graph, one set of initial weights
  return onnx::sweep(m, data, t, s, std::cerr);
}
#endif

}  // namespace

int train_command(const MonitorArgs& o) {
  if (is_onnx(o.model)) {
#ifdef STABFUZZ_HAVE_ONNX
    return train_onnx(o);
#else
    throw InputError("monitor train --model " + o.model +
                     ": built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
  }
  if (!o.optimizer.empty() && o.optimizer != "sgd")
    throw InputError("--optimizer " + o.optimizer +
                     " is for ONNX graphs (--model M.onnx); the "
                     "built-in models train with SGD");
  const Split data = load_dataset(o.data, o.max_train);
  const TrainConfig c = config_from(o, data.train);
  const std::string out = !o.out.empty() ? o.out
                                         : "runs/monitor-" + o.model + "-" + o.data + "-lr" +
                                               num(c.lr) + "-s" + std::to_string(c.seed);
  std::cerr << "stabfuzz monitor: " << o.model << " on " << o.data << " (" << data.train.rows()
            << " train, " << data.test.rows() << " test), lr " << num(c.lr) << ", " << c.steps
            << " steps under CESTAC, seed " << c.seed << std::endl;
  const TrainResult r = train_cestac(c, data);
  write_train_outputs(r, out);
  ModelFile m;
  m.spec = c.spec;
  m.data = o.data;
  m.f64 = c.f64;
  m.loss = o.loss;
  m.lr = c.lr;
  m.steps = c.steps;
  m.seed = c.seed;
  m.test_accuracy_mean = r.test_accuracy_mean;
  m.params = r.final_params;
  write_model_file(m, out + "/model.txt");
#ifdef STABFUZZ_HAVE_ONNX
  // The same weights as an ONNX graph, with the first 32 test rows as its test_data_set.
  const onnx::Model graph = onnx::export_model(m);
  onnx::write_model(graph, out + "/model.onnx");
  onnx::write_test_set(graph, m, data.test, 32, out + "/test_data_set_0");
#endif
  const StepRecord& last = r.steps.back();
  if (r.diverged_at >= 0)
    std::printf("diverged: the loss is not finite at step %lld\n",
                static_cast<long long>(r.diverged_at));
  std::printf(
      "final loss %.6g (%.2f digits), weights' digits min %.2f mean %.2f, rel L1 between samples "
      "%.3g\n",
      last.loss, last.loss_digits, last.weight_digits_min, last.weight_digits_mean, last.rel_l1);
  std::printf("test accuracy per CESTAC sample:");
  for (double a : r.test_accuracy) std::printf(" %.4f", a);
  std::printf("\ntest accuracy of the samples' mean weights (model.txt): %.4f",
              r.test_accuracy_mean);
  std::printf(
      "\nsharpness: lambda0 %.4g (lr*lambda0 %.3g), max |lambda| %.4g (lr*lambda %.3g; limit 2)\n",
      r.lambda0, c.lr * r.lambda0, r.lambda_max, c.lr * r.lambda_max);
  if (c.weight_decay > 0)  // L2 decay adds wd to every Hessian eigenvalue of the trained objective
    std::printf("with weight decay %g: lr*(max |lambda| + wd) %.3g (limit 2)\n", c.weight_decay,
                c.lr * (r.lambda_max + c.weight_decay));
  if (r.polluting) {
    const Pollution& p = *r.polluting;
    std::printf(
        "polluting operation: %s %s %s at %s, step %lld: %.2f digits where its inputs explain "
        "%.2f\n",
        p.layer.c_str(), phase_name(p.phase), p.op.c_str(), p.site.c_str(),
        static_cast<long long>(p.step), p.out_digits, p.explained_digits);
  } else {
    std::printf("polluting operation: none (delta %g)\n", c.delta);
  }
  uint64_t total = 0;
  for (const auto& s : r.sites) total += s.count;
  std::printf("instabilities: %llu at %zu sites; %.1f s; report: %s/report.html\n",
              static_cast<unsigned long long>(total), r.sites.size(), r.seconds, out.c_str());
#ifdef STABFUZZ_HAVE_ONNX
  std::printf("as ONNX: stabfuzz monitor infer --model %s/model.onnx --inputs %s/test_data_set_0\n",
              out.c_str(), out.c_str());
#endif
  return 0;
}

int export_command(const MonitorArgs& o) {
  if (o.out.empty()) throw InputError("monitor export needs --out M.onnx");
#ifdef STABFUZZ_HAVE_ONNX
  const Split data = load_dataset(o.data, 0);
  ModelFile m;
  m.spec = spec_for(parse_model(o.model), data.train);
  m.data = o.data;
  if (o.precision != "f32" && o.precision != "f64")
    throw InputError("unknown precision '" + o.precision + "' (f32, f64)");
  m.f64 = o.precision == "f64";
  m.seed = o.seed;
  m.params = init_params(m.spec, o.seed, !m.f64);
  onnx::write_model(onnx::export_model(m), o.out);
  std::printf(
      "wrote %s: the %s's initial weights (seed %llu, %s, as monitor train starts); "
      "train it with stabfuzz monitor train --model %s\n",
      o.out.c_str(), o.model.c_str(), static_cast<unsigned long long>(o.seed), o.precision.c_str(),
      o.out.c_str());
  return 0;
#else
  throw InputError("monitor export: built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
}

int sweep_command(const MonitorArgs& o) {
  SweepConfig s;
  s.lrs = parse_number_list(o.lr_grid, "lr-grid");
  s.ks.clear();
  for (double k : parse_number_list(o.k_list, "k-list")) {
    if (k != std::floor(k) || k > 1000)
      throw InputError("--k-list: k must be a whole number 1..1000");
    s.ks.push_back(static_cast<int>(k));
  }
  s.wds = parse_number_list(o.wd_grid.empty() ? "0" : o.wd_grid, "wd-grid", true);
  if (o.init_seeds < 0 || o.init_seeds > 100) throw InputError("--init-seeds must be 0..100");
  s.init_seeds = o.init_seeds;
  const std::string out =
      !o.out.empty() ? o.out : "runs/monitor-sweep-" + run_name(o) + "-s" + std::to_string(o.seed);
  std::cerr << "stabfuzz monitor sweep: " << o.model << " on " << o.data << ", " << s.lrs.size()
            << " learning rates x " << s.wds.size() << " weight decays, " << o.steps
            << " steps, seed " << o.seed << std::endl;
  Split data;
  std::vector<SweepRow> rows;
  if (is_onnx(o.model)) {
#ifdef STABFUZZ_HAVE_ONNX
    rows = sweep_onnx(o, s, data);
#else
    throw InputError("monitor sweep --model " + o.model +
                     ": built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
  } else {
    data = load_dataset(o.data, o.max_train);
    s.base = config_from(o, data.train);
    rows = run_sweep(s, data, std::cerr);
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("cannot create output directory " + out + ": " + ec.message());
  reports::write_text_atomically(out + "/sweep.csv", sweep_csv(rows));
  reports::write_json_atomically(out + "/sweep.json", sweep_json(s, rows));
  reports::write_text_atomically(out + "/report.html", render_sweep_html(s, rows));
  std::cout << sweep_table(rows) << "report: " << out << "/report.html\n";
  return 0;
}

}  // namespace stabfuzz::monitor
