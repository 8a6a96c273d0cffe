// `stabfuzz bench --suite user`: what CESTAC costs on plain user code (user_kernels.h), native
// instantiation against Stoch<T, 3> of the same template, per kernel and dtype, min and median over
// repetitions.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/dtype.h"

namespace stabfuzz::bench {

struct UserSizes {
  std::size_t n = 4096;                        // vector kernels
  std::size_t gemm = 128;                      // m = k = n
  std::size_t seq = 32, head = 32;             // attention
  std::size_t mlp_width = 64, mlp_batch = 16;  // in = hidden = out
};

// One kernel instantiated for one scalar type over fixed inputs, drawn from the same seed for
// every type (so native and CESTAC compute on the same values).
struct UserCase {
  std::string kernel;
  std::function<void()> call;                    // one call; CESTAC cases inside a cestac::Run
  std::function<std::vector<double>()> outputs;  // the last call's outputs (CESTAC: sample means)
};

// The suite's kernels for dtype `d`, natively (double, float, Half, BFloat16) or as Stoch<T, 3>.
// Built outside any cestac::Run: inputs convert to the nearest value of T.
std::vector<UserCase> user_cases(DType d, bool cestac, const UserSizes& sizes = {});
// The same kernels as Stoch<T, 3, Rounding::updown> (CADNA's rounding), to time beside the default.
std::vector<UserCase> user_updown_cases(DType d, const UserSizes& sizes = {});
// Kernel names, in the order user_cases returns them.
std::vector<std::string> user_kernel_names();

struct UserRow {
  std::string kernel;
  std::string dtype;
  int repeats = 0;
  double native_min_us = 0, native_median_us = 0;  // per call, thread CPU time
  double cestac_min_us = 0, cestac_median_us = 0;  // per call, Stoch<T, 3>, detection on
  double ratio_min() const { return cestac_min_us / native_min_us; }
  double ratio_median() const { return cestac_median_us / native_median_us; }
  double updown_min_us = 0, updown_median_us = 0;  // Stoch<T, 3, Rounding::updown>
  double updown_ratio_min() const { return updown_min_us / native_min_us; }
  double updown_ratio_median() const { return updown_median_us / native_median_us; }
};

struct UserOptions {
  double budget_s = 60;  // about the seconds the whole suite takes
  int repeats = 9;       // timed chunks per side; min and median over them
  std::vector<DType> dtypes{DType::f64, DType::f32, DType::f16, DType::bf16};
  UserSizes sizes;
  bool detect = true;  // CESTAC instability detection
};

std::vector<UserRow> run_user_suite(const UserOptions& opts, std::ostream& progress);
// Geometric mean of ratio_median (or ratio_min) over one dtype's rows; of the updown ratios when
// `updown`.
double user_geomean(const std::vector<UserRow>& rows, const std::string& dtype, bool median,
                    bool updown = false);
void print_user_table(const std::vector<UserRow>& rows, std::ostream& os);
json::Value user_to_json(const std::vector<UserRow>& rows);

}  // namespace stabfuzz::bench
