// Planted unstable elementwise formulations (exp, log, activations): one puzzle per struct.
//
// Each struct has `template <class T> static T eval(T x)` and runs through
// targets::ElementwiseOp, like the stable elementwise targets.
#pragma once

#include <cmath>
#include <vector>

#include "stabfuzz/family.h"
#include "targets/cpu/elementwise.h"

namespace stabfuzz::injectors {

// log1p/injected/log_one_plus: log(1 + x); 1 + x rounds to 1 for |x| below u, result 0.
struct Log1pNaive {
  template <class T>
  static T eval(T x) {
    using std::log;
    return log(T(1) + x);
  }
};

// expm1/injected/exp_minus_one: e^x - 1 cancels for small |x|.
struct Expm1Naive {
  template <class T>
  static T eval(T x) {
    using std::exp;
    return exp(x) - T(1);
  }
};

// tanh/injected/exp_ratio: (e^2x - 1) / (e^2x + 1): e^2x - 1 cancels near 0, and inf/inf = NaN
// once e^2x overflows (x > 354.9 f64, 44.4 f32).
struct TanhExpRatio {
  template <class T>
  static T eval(T x) {
    using std::exp;
    const T e = exp(T(2) * x);
    return (e - T(1)) / (e + T(1));
  }
};

// sigmoid/injected/exp_over_one_plus_exp: e^x / (1 + e^x) for every x: inf/inf = NaN once e^x
// overflows (x > 709.8 f64, 88.7 f32).
struct SigmoidExpRatio {
  template <class T>
  static T eval(T x) {
    using std::exp;
    const T e = exp(x);
    return e / (T(1) + e);
  }
};

// log_sigmoid/injected/neg_log_one_plus_exp: -log(1 + e^-x): -inf where e^-x overflows (x < -709.8
// f64), 0 where 1 + e^-x rounds to 1 (x > 37 f64, 17 f32) while the result is -e^-x.
struct LogSigmoidNaive {
  template <class T>
  static T eval(T x) {
    using std::exp;
    using std::log;
    return -log(T(1) + exp(-x));
  }
};

// softplus/injected/log_one_plus_exp: log(1 + e^x): inf where e^x overflows, 0 where 1 + e^x
// rounds to 1 (x < -37 f64, -17 f32) while the result is e^x.
struct SoftplusNaive {
  template <class T>
  static T eval(T x) {
    using std::exp;
    using std::log;
    return log(T(1) + exp(x));
  }
};

// silu/injected/x_exp_over_one_plus_exp: x e^x / (1 + e^x): inf/inf = NaN once e^x overflows.
struct SiluExpRatio {
  template <class T>
  static T eval(T x) {
    using std::exp;
    const T e = exp(x);
    return x * e / (T(1) + e);
  }
};

// gelu/injected/one_plus_erf: x/2 (1 + erf(x / sqrt 2)) for every x: 1 + erf cancels for x < 0,
// every digit gone below x ~ -6 (f32) / -8.3 (f64) where the result is still far from 0.
struct GeluOnePlusErf {
  template <class T>
  static T eval(T x) {
    using std::erf;
    return T(0.5) * x * (T(1) + erf(x * T(targets::ew::kSqrtHalf)));
  }
};

// gelu_tanh/injected/one_plus_tanh: the textbook x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))):
// 1 + tanh(u) cancels for x << 0.
struct GeluTanhOnePlusTanh {
  template <class T>
  static T eval(T x) {
    using std::tanh;
    const T u =
        T(targets::ew::kTwoSqrtTwoOverPi / 2) * (x + T(targets::ew::kGeluTanhCubic) * x * x * x);
    return T(0.5) * x * (T(1) + tanh(u));
  }
};

// erf/injected/one_minus_erfc: 1 - erfc(x); erfc(x) ~ 1 for small |x|, so every digit of erf
// (~1.13 x) cancels.
struct ErfOneMinusErfc {
  template <class T>
  static T eval(T x) {
    using std::erfc;
    return T(1) - erfc(x);
  }
};

// exp/injected/repeated_squaring: (e^(x / 1024))^1024 by ten squarings: each squaring doubles the
// relative error of e^(x/1024), so the result errs by ~1024 u, where a well-conditioned exp
// (|x| < 1, cond = |x|) errs by one ulp.
struct ExpRepeatedSquaring {
  template <class T>
  static T eval(T x) {
    using std::exp;
    T y = exp(x * T(0x1p-10));
    for (int i = 0; i < 10; ++i) y = y * y;
    return y;
  }
};

// log/injected/neg_log_reciprocal: -log(1/x): 1/x overflows for x below 1/max (every subnormal),
// giving -inf for a finite log.
struct LogNegReciprocal {
  template <class T>
  static T eval(T x) {
    using std::log;
    return -log(T(1) / x);
  }
};

// The injected elementwise targets, attached to their families by all_injectors.cc.
std::vector<Target> elementwise_mutants();

}  // namespace stabfuzz::injectors
