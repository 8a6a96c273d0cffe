// Planted unstable variance: the one-pass textbook formula E[x^2] - E[x]^2.
#pragma once

#include <vector>

#include "stabfuzz/op.h"
#include "stabfuzz/params.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::injectors {

// variance/injected/naive_one_pass plants var = (sum x^2 - (sum x)^2 / n) / (n - unbiased):
// rows shifted by a mean much larger than their spread (1e4 + N(0,1) in f32) cancel every
// digit, and the result can even go negative ([2281.5, 2281.25] gives 0 in f32).
struct VarianceNaive {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    const std::vector<T>& x = a.x.at(0);
    const size_t n = x.size();
    std::vector<T> sq(n);
    for (size_t i = 0; i < n; ++i) sq[i] = x[i] * x[i];
    const T s = targets::pairwise_sum(x.data(), n);
    const T s2 = targets::pairwise_sum(sq.data(), n);
    const T nn = T(static_cast<double>(n));
    return {(s2 - s * s / nn) /
            T(static_cast<double>(n) - a.param("unbiased", params::kUnbiasedDefault))};
  }
};

}  // namespace stabfuzz::injectors
