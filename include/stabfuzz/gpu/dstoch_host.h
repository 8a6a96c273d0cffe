// Host versions of the device's directed-rounding intrinsics (__dadd_ru, __fmul_rd, __dsqrt_ru,
// __fma_rd, ...), so that DStoch compiles and runs as host code (dstoch.cuh without nvcc): tests
// replay device streams on the CPU and compare DStoch with the CPU engine sample by sample.
//
// Each result is the correctly rounded value in the chosen direction: the round-to-nearest result
// r and the sign of its error x - r from an error-free transformation (TwoSum for +, the fma
// remainder ab - r for x, a - qb for /, a - q^2 for sqrt, an exact expansion of ab + c - r for
// fma), then one step to the neighbour when the direction asks for it. Operands near the bottom
// of the range, where a remainder would underflow, are scaled by powers of two first (exact);
// an fma whose product lies below 2^(emin + p + 1) asks the hardware instead (fesetround).
// Requires the thread's rounding mode to be round to nearest (the default; not inside a
// cestac::Run, which rounds toward +inf).
#pragma once

#include <cfenv>
#include <cmath>
#include <limits>

// The transformations need every product rounded on its own: GCC contracts across statements by
// default (-ffp-contract=fast) when the target has fma, so it is switched off here; clang's
// default contracts only within one expression, and no expression below feeds a product to a sum.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace stabfuzz::gpu::host_rounding {

template <class T>
constexpr int kPrecision = std::numeric_limits<T>::digits;
template <class T>
constexpr int kEmin = std::numeric_limits<T>::min_exponent - 1;  // -1022, -126

// r = RN(x) moved to its neighbour toward +inf (up) or -inf when the error x - r has that sign.
template <class T>
T step(T r, T err, bool up) {
  if (up ? err > 0 : err < 0) return std::nextafter(r, up ? INFINITY : -INFINITY);
  return r;
}
// A round-to-nearest overflow (+-inf from finite operands) rounded up or down instead.
template <class T>
T overflowed(T r, bool up) {
  constexpr T kMax = std::numeric_limits<T>::max();
  return r > 0 ? (up ? r : kMax) : (up ? -kMax : r);
}
template <class T>
bool finite(T a, T b) {
  return std::isfinite(a) && std::isfinite(b);
}

template <class T>
T two_sum_err(T a, T b, T s) {
  const T bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

template <class T>
T add(T a, T b, bool up) {
  const T s = a + b;
  if (!std::isfinite(s)) return finite(a, b) ? overflowed(s, up) : s;
  // An exact zero sum is -0 in round toward -inf unless both operands are +0 (IEEE 754 6.3).
  if (s == 0) return up ? s : (std::signbit(a) || std::signbit(b) ? -T(0) : T(0));
  T e = two_sum_err(a, b, s);
  if (!std::isfinite(e)) e = two_sum_err(a * T(0.5), b * T(0.5), s * T(0.5));  // near overflow
  return step(s, e, up);
}

// Sign of ab - p for a product p = RN(ab) too small for the fma remainder to be exact: with
// a = ma 2^ea, b = mb 2^eb (|ma|, |mb| in [0.5, 1)), ab 2^-(ea + eb) = hi + lo exactly and p is
// scaled up exactly; hi and the scaled p lie within a factor 2 (Sterbenz), so (hi - ps) is exact
// and the rounded (hi - ps) + lo has the exact sign.
template <class T>
T tiny_product_error(T a, T b, T p) {
  int ea, eb;
  const T ma = std::frexp(a, &ea), mb = std::frexp(b, &eb);
  const T hi = ma * mb, lo = std::fma(ma, mb, -hi);
  return (hi - std::ldexp(p, -(ea + eb))) + lo;
}

template <class T>
T mul(T a, T b, bool up) {
  const T p = a * b;
  if (!std::isfinite(p)) return finite(a, b) ? overflowed(p, up) : p;
  if (a == 0 || b == 0) return p;  // exact, signed as in every direction
  const T kSafe = std::ldexp(T(1), kEmin<T> + kPrecision<T> + 1);  // the remainder is exact above
  return step(p, std::fabs(p) >= kSafe ? std::fma(a, b, -p) : tiny_product_error(a, b, p), up);
}

template <class T>
T div(T a, T b, bool up) {
  const T q = a / b;
  if (!std::isfinite(q)) return finite(a, b) && b != 0 ? overflowed(q, up) : q;
  if (a == 0 || std::isinf(b)) return q;  // exact zero
  constexpr T kMin = std::numeric_limits<T>::min();
  if (std::fabs(q) >= kMin && std::fabs(b) >= kMin &&
      std::ilogb(q) + std::ilogb(b) >= kEmin<T> + kPrecision<T> + 1) {
    const T r = std::fma(-q, b, a);  // a - qb exactly: sign(a/b - q) = sign(r) sign(b)
    return step(q, std::signbit(b) ? -r : r, up);
  }
  // Tiny quotient or divisor: the same remainder on a, b scaled to [0.5, 1) and q scaled alike.
  int ea, eb;
  const T ma = std::frexp(a, &ea), mb = std::frexp(b, &eb);
  const T r = std::fma(-std::ldexp(q, eb - ea), mb, ma);
  return step(q, std::signbit(mb) ? -r : r, up);
}

template <class T>
T sqrt(T a, bool up) {
  const T q = std::sqrt(a);
  if (!(a > 0) || std::isinf(a)) return q;  // zeros, negative, NaN, inf: exact (or NaN)
  constexpr int k = kPrecision<T> + 4;
  const bool tiny = a < std::ldexp(T(1), kEmin<T> + kPrecision<T> + 2);
  // a - q^2, exact (scaled by 2^2k for tiny a, where q^2's quantum falls below the subnormals').
  const T r = tiny ? std::fma(-std::ldexp(q, k), std::ldexp(q, k), std::ldexp(a, 2 * k))
                   : std::fma(-q, q, a);
  return step(q, r, up);
}

// Hardware directed rounding, for the rare fma of a tiny product.
template <class T>
[[gnu::noinline]] T fma_hardware(T a, T b, T c, bool up) {
  const int saved = std::fegetround();
  std::fesetround(up ? FE_UPWARD : FE_DOWNWARD);
  volatile T va = a, vb = b, vc = c;
  volatile T r = std::fma(va, vb, vc);
  std::fesetround(saved);
  return r;
}

// Sign of the exact sum of x[0..n): a nonoverlapping expansion grown term by term (Shewchuk's
// Grow-Expansion, every step a TwoSum), whose largest nonzero component carries the sign; NaN
// when a partial sum overflowed.
template <class T, int n>
T exact_sum_sign(const T (&x)[n]) {
  T e[n];
  int m = 0;
  for (int k = 0; k < n; ++k) {
    T q = x[k];
    for (int i = 0; i < m; ++i) {
      const T s = q + e[i];
      e[i] = two_sum_err(q, e[i], s);
      q = s;
    }
    e[m++] = q;
  }
  for (int i = 0; i < m; ++i)
    if (!std::isfinite(e[i])) return std::numeric_limits<T>::quiet_NaN();  // a step overflowed
  for (int i = m - 1; i >= 0; --i)
    if (e[i] != 0) return e[i] > 0 ? T(1) : T(-1);
  return 0;
}

template <class T>
T fma(T a, T b, T c, bool up) {
  const T r = std::fma(a, b, c);
  if (!std::isfinite(r)) return finite(a, b) && std::isfinite(c) ? overflowed(r, up) : r;
  if (a == 0 || b == 0) return add(a * b, c, up);  // the product is an exact (signed) zero
  const T p = a * b;
  const T kSafe = std::ldexp(T(1), kEmin<T> + kPrecision<T> + 1);
  if (!(std::fabs(p) >= kSafe) || std::isinf(p)) return fma_hardware(a, b, c, up);
  if (r == 0) {  // exact zero (a nonzero ab + c never rounds to 0 with ab this large)
    return up ? r : (std::signbit(p) || std::signbit(c) ? -T(0) : T(0));
  }
  const T terms[4] = {p, c, -r, std::fma(a, b, -p)};  // ab + c - r, exactly
  const T sign = exact_sum_sign(terms);
  if (!std::isfinite(sign)) return fma_hardware(a, b, c, up);
  return step(r, sign, up);
}

}  // namespace stabfuzz::gpu::host_rounding

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
