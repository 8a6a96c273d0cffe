// The learning-rate sweep: per lr (and weight decay), a CESTAC run (final weights' digits, relative
// L1 between the samples, test-accuracy spread across samples, lr lambda) and native runs for the
// k-trick (update (lr k)(g / k), k = 1, 3, 5, 7: equal up to rounding) next to initialisation
// seeds.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/monitor/train.h"
#include "reports/json.h"

namespace stabfuzz::monitor {

struct SweepConfig {
  TrainConfig base;
  std::vector<double> lrs;
  std::vector<double> wds{0};  // weight decays: every lr runs with each
  std::vector<int> ks{1, 3, 5, 7};
  int init_seeds = 4;       // native runs with initialisation seeds seed+1 .. seed+init_seeds
  std::string model_label;  // the model's name in the outputs (empty: the built-in model's)
};

struct SweepRow {
  double lr = 0, wd = 0;
  TrainResult cestac;
  std::vector<double> acc_k;      // native test accuracy per k
  std::vector<double> acc_seeds;  // native test accuracy per initialisation seed (k = 1)
  std::vector<double> loss_k;     // native final training loss per k
};

std::vector<SweepRow> run_sweep(const SweepConfig& cfg, const Split& data, std::ostream& progress);

// "a,b,c" -> positive numbers (or, with allow_zero, non-negative); InputError on anything else.
std::vector<double> parse_number_list(const std::string& s, const std::string& flag,
                                      bool allow_zero = false);

std::string sweep_table(const std::vector<SweepRow>& rows);  // the text table for the terminal
std::string sweep_csv(const std::vector<SweepRow>& rows);
json::Value sweep_json(const SweepConfig& cfg, const std::vector<SweepRow>& rows);
std::string render_sweep_html(const SweepConfig& cfg, const std::vector<SweepRow>& rows);

}  // namespace stabfuzz::monitor
