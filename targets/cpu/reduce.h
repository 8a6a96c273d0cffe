// Reductions shared by the CPU reference targets: pairwise summation (error ~ log2(n) u).
#pragma once

#include <cstddef>
#include <cstdint>

#include "injectors/fault_plan.h"

namespace stabfuzz::targets {

// The fault injector "pairwise reduction made sequential" (injectors/fault_mutants.cc): one loop,
// error bound (n - 1) u. Noinline, so the strike's return address lies in the calling kernel.
template <class T>
[[gnu::noinline]] T sequential_sum_fault(const T* x, size_t n) {
  fault::State& st = *fault::current;
  if (st.first_index < 0) {
    fault::record_strike(st, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
    st.first_index = st.eligible;
  }
  ++st.eligible;
  st.strikes += n > 2;  // sums of two values are the same in either order
  T s = n ? x[0] : T(0);
  for (size_t i = 1; i < n; ++i) s += x[i];
  return s;
}

// Blocks of 8 summed sequentially, blocks combined pairwise: error bound (7 + log2(n/8)) u.
template <class T>
T pairwise_sum(const T* x, size_t n) {
  if (fault::sequential_sums()) [[unlikely]]
    return sequential_sum_fault(x, n);
  if (n <= 8) {
    T s = n ? x[0] : T(0);
    for (size_t i = 1; i < n; ++i) s += x[i];
    return s;
  }
  const size_t h = n / 2;
  return pairwise_sum(x, h) + pairwise_sum(x + h, n - h);
}

}  // namespace stabfuzz::targets
