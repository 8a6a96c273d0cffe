// softmax/cpu/stable: subtract the row maximum, exponentiate, divide by a pairwise sum.
#pragma once

#include <cmath>
#include <cstddef>

#include "targets/cpu/reduce.h"

namespace stabfuzz::targets {

struct SoftmaxStable {
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    T m = x[0];
    for (size_t i = 1; i < n; ++i)
      if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i] - m);  // every exponent <= 0: no overflow
    const T s = pairwise_sum(y, n);                       // s >= 1: no division by ~0
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

}  // namespace stabfuzz::targets
