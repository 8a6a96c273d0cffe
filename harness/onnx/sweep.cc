// The learning-rate x weight-decay sweep of an ONNX graph: ONNX training runs as the monitor's
// sweep rows, so the built-in models' table, CSV, JSON and page serve them.
#include "harness/onnx/sweep.h"

#include <cmath>
#include <ostream>

namespace stabfuzz::onnx {
namespace {

// The ONNX run as the monitor's TrainResult (what the sweep's outputs read).
monitor::TrainResult as_result(const TrainReport& r, const TrainOptions& o) {
  monitor::TrainResult t;
  t.config.lr = o.lr;
  t.config.weight_decay = o.weight_decay;
  t.config.steps = o.steps;
  t.config.f64 = o.f64;
  t.data = r.data;
  for (const TrainStep& s : r.steps) {
    monitor::StepRecord q;
    q.step = s.step;
    q.loss = s.loss;
    q.loss_digits = s.loss_digits;
    q.rel_l1 = s.rel_l1;
    q.weight_digits_min = s.weight_digits_min;
    q.weight_digits_mean = s.weight_digits_mean;
    q.lambda = s.lambda;
    if (!std::isnan(s.lambda)) {
      if (std::isnan(t.lambda0)) t.lambda0 = s.lambda;
      if (std::isnan(t.lambda_max) || std::fabs(s.lambda) > std::fabs(t.lambda_max))
        t.lambda_max = s.lambda;
    }
    t.steps.push_back(q);
  }
  t.test_accuracy = r.test_accuracy;
  t.test_accuracy_mean = r.test_accuracy_mean;
  t.train_loss_final = r.steps.back().loss;
  t.diverged_at = r.diverged_at;
  t.seconds = r.seconds;
  return t;
}

}  // namespace

std::vector<monitor::SweepRow> sweep(const Model& m, const monitor::Split& data,
                                     const TrainOptions& base, const monitor::SweepConfig& cfg,
                                     std::ostream& progress) {
  std::vector<monitor::SweepRow> rows;
  for (double lr : cfg.lrs)
    for (double wd : cfg.wds) {
      monitor::SweepRow row;
      row.lr = lr;
      row.wd = wd;
      TrainOptions o = base;
      o.lr = lr;
      o.weight_decay = wd;
      o.trace = false;  // the sweep needs the weights and samples, not every node's digits
      row.cestac = as_result(train(m, data, o), o);
      progress << "  lr " << lr << (wd > 0 ? ", weight decay " : "") << (wd > 0 ? wd : 0.0)
               << ": CESTAC " << row.cestac.seconds << " s, loss " << row.cestac.train_loss_final
               << std::endl;
      TrainOptions n = o;
      n.sharpness_every = 0;
      for (int k : cfg.ks) {
        n.k = k;
        double acc = 0;
        const auto losses = train_native(m, data, n, nullptr, &acc);
        row.acc_k.push_back(acc);
        row.loss_k.push_back(losses.back());
      }
      rows.push_back(std::move(row));
    }
  return rows;
}

}  // namespace stabfuzz::onnx
