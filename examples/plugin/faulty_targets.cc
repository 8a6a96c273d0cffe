// Example plugin, failures: a kernel that crashes on long rows and one that hangs on masked
// logits. stabfuzz runs plugin targets in a child process, so each is a finding (crash, timeout)
// with its input, and the campaign goes on.
#include <cmath>
#include <cstddef>

#include "stabfuzz/plugin.h"

namespace mylib {

// Planted crash: a fixed scratch buffer of 1024 entries whose absence on longer rows goes
// unchecked, so a row of more than 1024 logits writes through a null pointer (SIGSEGV).
void scratch_softmax_f64(const double* x, double* y, size_t n) {
  static double scratch[1024];
  double* volatile buf = n <= 1024 ? scratch : nullptr;  // volatile: the null store really happens
  double m = x[0];
  for (size_t i = 1; i < n; ++i) m = std::fmax(m, x[i]);
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += (buf[i] = std::exp(x[i] - m));
  for (size_t i = 0; i < n; ++i) y[i] = buf[i] / s;
}

// Planted hang: centred on the mean instead of the max, then renormalized "until the total is 1".
// A -inf logit (a masked position) makes the mean -inf and -inf - -inf a NaN, and a NaN total is
// never 1: the loop spins forever.
void iterative_softmax_f64(const double* x, double* y, size_t n) {
  double mean = 0;
  for (size_t i = 0; i < n; ++i) mean += x[i] / static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = x[i] - mean;
    y[i] = std::exp(t > 700 ? 700 : t);  // clamped against overflow; a NaN passes through
  }
  static volatile unsigned long iterations;  // observable progress: the loop is not optimized out
  for (;;) {
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += y[i];
    if (std::fabs(total - 1) <= 1e-12) break;
    for (size_t i = 0; i < n; ++i) y[i] /= total;
    iterations = iterations + 1;
  }
}

}  // namespace mylib

STABFUZZ_PLUGIN_BLACKBOX(softmax, "mylib/scratch", mylib::scratch_softmax_f64);
STABFUZZ_PLUGIN_BLACKBOX(softmax, "mylib/iterative", mylib::iterative_softmax_f64);
