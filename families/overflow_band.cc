// Results clear of the overflow threshold in f16 and bf16 (families/overflow_band.h).
#include "families/overflow_band.h"

#include <algorithm>
#include <cmath>

#include "stabfuzz/lowp.h"

namespace stabfuzz::families::overflow_band {
namespace {

bool in_band(long double r, long double m) { return r >= m / 4 && r <= 4 * m; }

}  // namespace

bool sum_near_overflow(const std::vector<double>& x, long double m) {
  long double s = 0;
  for (double v : x) s += v;
  return in_band(std::fabs(s), m);
}

bool prefix_near_overflow(const std::vector<double>& x, long double m) {
  long double s = 0;
  for (double v : x)
    if (std::fabs(s += v) >= m / 4) return true;
  return false;
}

bool var_near_overflow(const std::vector<double>& x, long double m) {
  long double mean = 0, ss = 0;
  for (double v : x) mean += v;
  mean /= static_cast<long double>(x.size());
  for (double v : x) ss += (v - mean) * (v - mean);
  const long double var = ss / static_cast<long double>(std::max<size_t>(x.size() - 1, 1));
  return in_band(var, m) || in_band(std::sqrt(var), m);
}

bool norm_near_overflow(const std::vector<double>& x, long double m) {
  long double ss = 0;
  for (double v : x) ss += static_cast<long double>(v) * v;
  return in_band(std::sqrt(ss), m);
}

std::function<Input(Entropy&, DType)> clear_of_overflow(std::function<Input(Entropy&, DType)> s,
                                                        NearOverflow near) {
  return [s, near](Entropy& e, DType d) {
    Input in = s(e, d);
    if (d != DType::f16 && d != DType::bf16) return in;
    while (near(in.args[0].values, dtype_format(d).max_finite()))
      for (auto& v : in.args[0].values) v = round_to(d, v * 0.25);
    return in;
  };
}

}  // namespace stabfuzz::families::overflow_band
