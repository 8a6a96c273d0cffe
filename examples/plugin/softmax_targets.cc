// Example plugin, numerical part: softmax targets of an imaginary library "mylib" — a stable
// template, a template with a planted overflow, and a black-box float/double pair.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stabfuzz/plugin.h"

namespace mylib {

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

// Written once over the scalar type: stabfuzz runs it in f64, f32, f16, bf16 and under CESTAC.
struct StableSoftmax {
  static constexpr const char* description = "max subtraction, exp, pairwise sum, division";
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    T m = x[0];
    for (size_t i = 1; i < n; ++i)
      if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; ++i) y[i] = exp(x[i] - m);  // exponents <= 0: no overflow
    const T s = pairwise_sum(y, n);                       // s >= 1
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

// Planted bug: no max subtraction. exp overflows for logits above 88.7 (f32) or 709.8 (f64), and
// inf / inf gives NaN: the oracle sees a non-finite output, CESTAC the overflow at the line below.
struct FastSoftmax {
  static constexpr const char* description = "exp without max subtraction (planted overflow)";
  static constexpr uint32_t dtypes =
      STABFUZZ_DTYPE_BIT(STABFUZZ_F64) | STABFUZZ_DTYPE_BIT(STABFUZZ_F32);
  template <class T>
  static void run(const T* x, T* y, size_t n) {
    using std::exp;
    T s = 0;
    for (size_t i = 0; i < n; ++i) {
      y[i] = exp(x[i]);
      s = s + y[i];
    }
    for (size_t i = 0; i < n; ++i) y[i] = y[i] / s;
  }
};

// A vendor kernel seen as a black box: plain float and double functions (the f32 one accumulates
// in double). stabfuzz can only run them natively, so the oracle alone judges them.
template <class T>
void softmax_acc_double(const T* x, T* y, size_t n) {
  double m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, static_cast<double>(x[i]));
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i]) - m);
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<T>(std::exp(static_cast<double>(x[i]) - m) / s);
}
void softmax_f32(const float* x, float* y, size_t n) { softmax_acc_double(x, y, n); }
// The general form, for operators with several tensors or parameters: a.x[k], a.shape(k),
// a.param("eps", default).
std::vector<double> softmax_f64(const stabfuzz::plugin::Args<double>& a) {
  std::vector<double> y(static_cast<size_t>(a.shape(0).at(0)));
  softmax_acc_double(a.x.at(0).data(), y.data(), y.size());
  return y;
}

}  // namespace mylib

STABFUZZ_PLUGIN_TARGET(softmax, "mylib/stable", mylib::StableSoftmax);
STABFUZZ_PLUGIN_TARGET(softmax, "mylib/fast", mylib::FastSoftmax);
STABFUZZ_PLUGIN_BLACKBOX(softmax, "mylib/blackbox", mylib::softmax_f32, mylib::softmax_f64);
