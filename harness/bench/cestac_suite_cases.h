// The cases of the broad CESTAC calibration suite: for each kernel kind (cestac_suite_kernels.h),
// inputs drawn from (seed, kind, dtype, case index) whose true digits span 0 to the format's full
// precision, and the exact answer of the kernel's mathematical expression on those inputs,
// computed with MPFR at kExactBits bits (cestac_suite_exact.cc), independently of the oracles.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/bench/cestac_suite_kernels.h"
#include "stabfuzz/dtype.h"

namespace stabfuzz::calibrate::suite {

enum class KernelKind : uint8_t {
  horner_root,
  offset_sum,
  shifted_mean,
  var_one_pass,
  var_two_pass,
  quadratic_root,
  integral_recurrence,
  three_term_unstable,
  three_term_stable,
  exp_minus_1,
  expm1,
  log_one_plus,
  log1p,
  dot_cancel,
  softmax_naive,
  softmax_shifted,
  kahan_sum,
  mixed_sum,
  product_ratio,
  sqrt_div_chain,
  exp_log_chain,
  kCount
};
inline constexpr int kKernelKinds = static_cast<int>(KernelKind::kCount);

// One kernel's inputs, every value exactly representable in the case's dtype.
struct Problem {
  std::vector<double> x, y;    // data
  double a = 0, b = 0, c = 0;  // scalars
  int n = 0;                   // an integer parameter: degree, steps, index of an output
};

struct KindInfo {
  KernelKind kind;
  const char* name;
  const char* what;  // one line for the docs: the kernel and how its inputs span the digits
  std::vector<DType> dtypes;
};
const std::vector<KindInfo>& kinds();
const KindInfo* find_kind(const std::string& name);

// ---- exact answers (cestac_suite_exact.cc) ------------------------------------------------------
inline constexpr int kExactBits = 2048;  // exact for every +, - and x the suite's kernels do

// An exact answer as (hi + lo) 2^exp with 1/2 <= |hi| < 1: a double-double significand keeps the
// true digits of an f64 result right to the last bit, and the separate exponent keeps answers
// beyond the double range (a softmax entry below 1e-324) nonzero.
struct Exact {
  double hi = 0, lo = 0;
  long exp = 0;
  bool zero = true;
  double value() const;  // rounded to double (may underflow to 0 or overflow)
};
// The exact value of the kernel's mathematical expression on p's exact inputs.
Exact exact_answer(KernelKind kind, const Problem& p);

// Exact running dot product for the inputs whose conditioning is built (GenDot, GenSum).
class ExactDot {
 public:
  ExactDot();
  ~ExactDot();
  ExactDot(const ExactDot&) = delete;
  ExactDot& operator=(const ExactDot&) = delete;
  void add(double a, double b);  // += a b, exactly
  double value() const;          // rounded to nearest double

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Case `index` of `count` of a kind in one dtype at one seed; the same arguments give the same
// case on every platform (SeededEntropy).
struct Case {
  KernelKind kind;
  DType dtype;
  uint64_t seed = 0;
  int index = 0;
  Problem problem;
  Exact exact;
};
Case make_case(KernelKind kind, DType d, uint64_t seed, int index, int count);
// The CESTAC stream of a case (the Run of a case is keyed by (seed, stream)).
uint64_t case_stream(KernelKind kind, DType d, int index);

// The f64 input of the issue: the school formula's small root, 3.24 true digits.
inline constexpr double kQuadA = 1.9916460914530534, kQuadB = 10749205.790411139,
                        kQuadC = 1.3865150354799098;

// ---- the kernel of a kind for scalar type T ---------------------------------------------------
template <class T>
struct Args {
  std::vector<T> x, y;
  T a{}, b{}, c{};
  int n = 0;
};

// Converts p's values to T (outside any CESTAC run: they are exact in T).
template <class T>
Args<T> args_of(const Problem& p) {
  Args<T> r;
  r.x.reserve(p.x.size());
  for (double v : p.x) r.x.push_back(T(v));
  r.y.reserve(p.y.size());
  for (double v : p.y) r.y.push_back(T(v));
  r.a = T(p.a);
  r.b = T(p.b);
  r.c = T(p.c);
  r.n = p.n;
  return r;
}

template <class T>
T evaluate_kernel(KernelKind kind, const Args<T>& g) {
  namespace k = kernels;
  switch (kind) {
    case KernelKind::horner_root:
      return k::horner(g.x, g.a);
    case KernelKind::offset_sum:
    case KernelKind::mixed_sum:
      return k::sum(g.x);
    case KernelKind::shifted_mean:
      return k::mean(g.x);
    case KernelKind::var_one_pass:
      return k::variance_one_pass(g.x);
    case KernelKind::var_two_pass:
      return k::variance_two_pass(g.x);
    case KernelKind::quadratic_root:
      return k::quadratic_small_root(g.a, g.b, g.c);
    case KernelKind::integral_recurrence:
      return k::integral_recurrence(g.a, g.n);
    case KernelKind::three_term_unstable:
    case KernelKind::three_term_stable:
      return k::three_term(g.c, g.a, g.b, g.n);
    case KernelKind::exp_minus_1:
      return k::exp_minus_one(g.a);
    case KernelKind::expm1:
      return k::expm1_lib(g.a);
    case KernelKind::log_one_plus:
      return k::log_one_plus(g.a);
    case KernelKind::log1p:
      return k::log1p_lib(g.a);
    case KernelKind::dot_cancel:
      return k::dot(g.x, g.y);
    case KernelKind::softmax_naive:
      return k::softmax_naive(g.x, static_cast<std::size_t>(g.n));
    case KernelKind::softmax_shifted:
      return k::softmax_shifted(g.x, static_cast<std::size_t>(g.n));
    case KernelKind::kahan_sum:
      return k::kahan_sum(g.x);
    case KernelKind::product_ratio:
      return k::product_ratio_minus_one(g.x, g.y);
    case KernelKind::sqrt_div_chain:
      return k::sqrt_div_chain(g.a, g.n);
    case KernelKind::exp_log_chain:
      return k::exp_log_chain(g.a, g.n);
    case KernelKind::kCount:
      break;
  }
  return T(0);
}

}  // namespace stabfuzz::calibrate::suite
