// Row lengths, exp thresholds and row construction for value regimes.
#include "families/regimes.h"

#include <cmath>
#include <limits>

#include "stabfuzz/lowp.h"

namespace stabfuzz::regime {

size_t row_length(Entropy& e, size_t max_n) {
  const double l = e.uniform(0.0, std::log(static_cast<double>(max_n) + 1.0));
  const auto n = static_cast<size_t>(std::exp(l));
  return n < 1 ? 1 : (n > max_n ? max_n : n);
}

double exp_overflow_threshold(DType d) { return std::log(dtype_format(d).max_finite()); }

double exp_underflow_threshold(DType d) { return std::log(dtype_min_normal(d)); }

Input row_input(DType d, std::vector<double> values) {
  for (auto& v : values) v = round_to(d, v);
  Input in;
  in.dtype = d;
  in.args.push_back(Tensor{{static_cast<int64_t>(values.size())}, std::move(values)});
  return in;
}

Input make_input(DType d, std::vector<Tensor> tensors,
                 std::vector<std::pair<std::string, double>> params) {
  Input in;
  in.dtype = d;
  for (auto& t : tensors)
    for (auto& v : t.values) v = round_to(d, v);
  in.args = std::move(tensors);
  in.params = std::move(params);
  return in;
}

}  // namespace stabfuzz::regime
