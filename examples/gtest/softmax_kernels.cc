// The kernels under test, built as a stabfuzz plugin (stabfuzz::plugin): two softmax
// implementations of an imaginary library "mykernels", one stable and one with the classic bug.
#include <cmath>
#include <cstddef>

#include "stabfuzz/plugin.h"

namespace mykernels {

// Pairwise sum of n >= 1 values: rounding errors grow like log2(n), not n.
template <class T>
T pairwise_sum(const T* x, size_t n) {
  if (n <= 8) {
    T s = x[0];
    for (size_t i = 1; i < n; ++i) s = s + x[i];
    return s;
  }
  const size_t h = n / 2;
  return pairwise_sum(x, h) + pairwise_sum(x + h, n - h);
}

// Stable: subtract the row's maximum first, so every exponent is <= 0 and the sum is >= 1.
struct Softmax {
  static constexpr const char* description = "max-shifted exp, pairwise sum, division";
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    T m = x[0];
    for (size_t i = 1; i < n; ++i)
      if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i] - m);
    const T s = pairwise_sum(y, n);
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

// Planted bug: exp(x) / sum exp(x) as the textbook writes it. exp overflows for logits above
// 88.7 (f32), 709.8 (f64), 11.1 (f16), and inf / inf is NaN.
struct NaiveSoftmax {
  static constexpr const char* description = "exp(x) / sum exp(x), no max subtraction";
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i]);
    const T s = pairwise_sum(y, n);
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

}  // namespace mykernels

STABFUZZ_PLUGIN_TARGET(softmax, "mykernels/stable", mykernels::Softmax);
STABFUZZ_PLUGIN_TARGET(softmax, "mykernels/naive", mykernels::NaiveSoftmax);
