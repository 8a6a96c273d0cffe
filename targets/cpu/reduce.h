// Reductions shared by the CPU reference targets: pairwise summation (error ~ log2(n) u).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "stabfuzz/lowp.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::targets {

namespace reduce_detail {

// The binary format of a scalar type (double, float, Half, BFloat16, or Stoch over one of them).
template <class T>
struct FormatOf;
template <>
struct FormatOf<double> {
  static constexpr const Format& value = kF64;
};
template <>
struct FormatOf<float> {
  static constexpr const Format& value = kF32;
};
template <const Format& F>
struct FormatOf<LowFloat<F>> {
  static constexpr const Format& value = F;
};
template <class T, int N, cestac::Rounding R>
struct FormatOf<Stoch<T, N, R>> : FormatOf<T> {};

// v * 2^k in steps whose factors are representable; exact unless the result over- or underflows.
template <class T>
T scale_pow2(T v, long k) {
  constexpr const Format& f = FormatOf<T>::value;
  constexpr long kHi = f.emax, kLo = f.emin - f.p + 1;  // exponents of 2^emax and denorm_min
  // The partial step goes first, so a result that underflows is rounded once, at the end.
  while (k > kHi || k < kLo) {
    const long step = k > kHi ? std::min(k - kHi, kHi) : std::max(k - kLo, kLo);
    v = v * T(std::ldexp(1.0, static_cast<int>(step)));
    k -= step;
  }
  return v * T(std::ldexp(1.0, static_cast<int>(k)));
}

// k with m * 2^k in [1, 2), for finite m > 0, by exact scalings (no frexp, which a Faultable or a
// Stoch has not): each one is an operation of T, counted in *steps. Inputs are exact, so every
// comparison is exact.
template <class T>
long pow2_exponent_by_steps(T m, uint64_t* steps) {
  constexpr int kStep = FormatOf<T>::value.emax / 2;
  const T big = T(std::ldexp(1.0, kStep)), small = T(std::ldexp(1.0, -kStep));
  long k = 0;
  uint64_t n = 0;
  // Each loop ends within the format's exponent range; the bound only matters when the arithmetic
  // itself is faulty (a fault mutant flushing m to 0 must give a wrong answer, not a hang).
  constexpr int kMaxSteps = 4 * FormatOf<T>::value.emax;
  for (int i = 0; m >= big && i < kMaxSteps; ++i, ++n) {
    m = m * small;
    k -= kStep;
  }
  for (int i = 0; m >= T(2) && i < kMaxSteps; ++i, ++n) {
    m = m * T(0.5);
    --k;
  }
  for (int i = 0; m < small && i < kMaxSteps; ++i, ++n) {
    m = m * big;
    k += kStep;
  }
  for (int i = 0; m < T(1) && i < kMaxSteps; ++i, ++n) {
    m = m * T(2);
    ++k;
  }
  *steps = n;
  return k;
}
template <class T>
long pow2_exponent(T m) {
  uint64_t steps;
  return pow2_exponent_by_steps(m, &steps);
}
// Native double and float: the same k from the exponent.
inline long pow2_exponent(double m) { return -static_cast<long>(std::ilogb(m)); }
inline long pow2_exponent(float m) { return -static_cast<long>(std::ilogb(m)); }
// Under CESTAC an exact m (every sample equal, as an input is) takes the same steps in the sample
// type, and the random stream moves as those exact operations would have moved it: the same k
// and the same draws for every later operation, without the up to ~500 scalings of Stoch.
template <class T, int N, cestac::Rounding R>
long pow2_exponent(const Stoch<T, N, R>& m) {
  using S = Stoch<T, N, R>;
  uint64_t steps;
  bool exact = std::isfinite(m.sample(0)) && m.sample(0) > 0;
  for (int i = 1; i < S::kLanes; ++i) exact &= m.sample(i) == m.sample(0);
  if (exact) {
    const long k = pow2_exponent_by_steps(static_cast<T>(m.sample(0)), &steps);
    if (cestac::skip_exact_operations<S>(steps)) return k;
  }
  return pow2_exponent_by_steps(m, &steps);
}

}  // namespace reduce_detail

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

// The summation policy of the operators that take one (Op<Sums>): pairwise_sum. The fault
// injectors instantiate the same operators with their own policy (injectors/faultable.h), so a
// planted fault reaches the operator as a type, not through state the operator reads.
struct PairwiseSums {
  template <class T>
  static T sum(const T* x, size_t n) {
    return pairwise_sum(x, n);
  }
};

}  // namespace stabfuzz::targets
