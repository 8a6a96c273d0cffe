// softmax/cpu/stable: subtract the row maximum, exponentiate, divide by a pairwise sum.
#pragma once

#include <cmath>
#include <cstddef>

#include "targets/cpu/reduce.h"

namespace stabfuzz::targets {

// Sums: the summation policy (reduce.h), pairwise here.
template <class Sums = PairwiseSums>
struct SoftmaxStableWith {
  template <class S>
  using WithSums = SoftmaxStableWith<S>;
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    T m = x[0];
    for (size_t i = 1; i < n; ++i)
      if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i] - m);  // every exponent <= 0: no overflow
    const T s = Sums::sum(y, n);                          // s >= 1: no division by ~0
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};
using SoftmaxStable = SoftmaxStableWith<>;

}  // namespace stabfuzz::targets
