// A hand-made training run of the monitor for its output tests: two steps of an MLP on digits,
// three traced operations, one of them polluting, and one instability site.
#pragma once

#include <cmath>
#include <string>

#include "harness/monitor/train.h"

namespace stabfuzz::testing {

inline monitor::TrainResult hand_train_result(bool polluting) {
  monitor::TrainResult r;
  r.config.lr = 0.5;
  r.config.seed = 4;
  r.config.steps = 2;
  r.data = "digits";
  monitor::StepRecord s0;
  s0.loss = 2.25;
  s0.loss_digits = 6.5;
  s0.weight_digits_min = 7;
  s0.weight_digits_mean = 7.5;
  s0.lambda = 3;
  s0.instabilities[0] = 2;
  monitor::StepRecord s1 = s0;
  s1.step = 1;
  s1.loss = 1.5;
  s1.rel_l1 = 1e-7;
  s1.lambda = NAN;
  s1.instabilities[0] = 0;
  r.steps = {s0, s1};
  for (int64_t step = 0; step < 2; ++step) {
    monitor::OpStats fc{
        step, "fc1", "matmul", "harness/monitor/model.h:10", monitor::Phase::forward, 6, 6.5,
        7,    64,    0};
    monitor::OpStats loss{step,
                          "loss",
                          "cross_entropy_naive",
                          "harness/monitor/model.h:20",
                          monitor::Phase::forward,
                          1,
                          1.5,
                          2,
                          8,
                          step};
    monitor::OpStats upd{
        step, "fc1", "sgd_w", "harness/monitor/model.h:30", monitor::Phase::update, 7, 7, 7, 64, 0};
    r.ops.insert(r.ops.end(), {fc, loss, upd});
  }
  if (polluting)
    r.polluting = monitor::Pollution{1,
                                     "loss",
                                     "cross_entropy_naive",
                                     "harness/monitor/model.h:20",
                                     monitor::Phase::forward,
                                     3,
                                     1,
                                     7.5,
                                     -0.25};
  r.sites = {{"cancellation", "harness/monitor/model.h:20", 2}};
  r.test_accuracy = {0.5, 0.625, 0.75};
  r.lambda0 = 3;
  r.lambda_max = 3;
  r.seconds = 0.25;
  return r;
}

}  // namespace stabfuzz::testing
