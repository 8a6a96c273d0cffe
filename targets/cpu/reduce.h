// Reductions shared by the CPU reference targets: pairwise summation (error ~ log2(n) u).
#pragma once

#include <cstddef>

namespace stabfuzz::targets {

// Blocks of 8 summed sequentially, blocks combined pairwise: error bound (7 + log2(n/8)) u.
template <class T>
T pairwise_sum(const T* x, size_t n) {
  if (n <= 8) {
    T s = n ? x[0] : T(0);
    for (size_t i = 1; i < n; ++i) s += x[i];
    return s;
  }
  const size_t h = n / 2;
  return pairwise_sum(x, h) + pairwise_sum(x + h, n - h);
}

}  // namespace stabfuzz::targets
