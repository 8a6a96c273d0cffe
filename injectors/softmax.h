// Planted unstable softmax formulations (the puzzles every detector must solve).
#pragma once

#include <cmath>
#include <cstddef>

#include "stabfuzz/family.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz::injectors {

// softmax/injected/no_max_subtract plants e^x_i / sum_j e^x_j without the max shift:
// x > ~88.7 (f32) / ~709.8 (f64) overflows to inf/inf = NaN, and rows of very negative logits
// underflow to 0/0 = NaN or lose their digits in subnormals.
struct SoftmaxNoMaxSubtract {
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i]);
    const T s = targets::pairwise_sum(y, n);
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

// The injected softmax targets, joined into the softmax family's list.
std::vector<Target> softmax_injected_targets();

}  // namespace stabfuzz::injectors
