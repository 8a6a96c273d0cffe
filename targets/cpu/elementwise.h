// Stable elementwise operators (exp, log, activations), written once over the scalar type.
//
// Each function struct has `template <class T> static T eval(T x)`; ElementwiseOp<Fn> applies it
// to every value of the one input row. The formulations never form e^|x| (no overflow), never
// subtract two nearly equal values, and take infinite inputs to their limits.
#pragma once

#include <cmath>
#include <vector>

#include "stabfuzz/op.h"

namespace stabfuzz::targets {

template <class Fn>
struct ElementwiseOp {
  template <class T>
  static std::vector<T> run(const OpArgs<T>& a) {
    std::vector<T> y;
    y.reserve(a.x.at(0).size());
    for (const T& x : a.x[0]) y.push_back(Fn::template eval<T>(x));
    return y;
  }
};

namespace ew {

inline constexpr double kSqrtHalf = 0.70710678118654752440;  // 1/sqrt(2)
// gelu_tanh's constants: 2 sqrt(2/pi) (the tanh argument doubled: 1 + tanh(u) = 2 sigmoid(2u))
// and the cubic coefficient 0.044715 of its definition.
inline constexpr double kTwoSqrtTwoOverPi = 1.59576912160573071175;
inline constexpr double kGeluTanhCubic = 0.044715;

// 1 / (1 + e^-x) from e = e^-|x| <= 1: x >= 0 gives 1/(1+e), x < 0 gives e/(1+e). Relative error
// <= 4u with a 1-ulp exp: e's error reaches the result damped by e/(1+e) <= 1, plus the add and
// the division.
template <class T>
T sigmoid(T x) {
  using std::exp;
  using std::fabs;
  const T e = exp(-fabs(x));
  const T d = T(1) + e;
  // One division on its own line (not a select of two), so that a fault planted in it has a site.
  const T num = x >= T(0) ? T(1) : e;
  return num / d;
}

}  // namespace ew

struct ExpStable {
  template <class T>
  static T eval(T x) {
    using std::exp;
    return exp(x);
  }
};

struct LogStable {
  template <class T>
  static T eval(T x) {
    using std::log;
    return log(x);  // log(0) = -inf, the pole's exact value
  }
};

struct Log1pStable {
  template <class T>
  static T eval(T x) {
    using std::log1p;
    return log1p(x);
  }
};

struct Expm1Stable {
  template <class T>
  static T eval(T x) {
    using std::expm1;
    return expm1(x);
  }
};

struct TanhStable {
  template <class T>
  static T eval(T x) {
    using std::tanh;
    return tanh(x);
  }
};

struct ErfStable {
  template <class T>
  static T eval(T x) {
    using std::erf;
    return erf(x);
  }
};

struct SigmoidStable {
  template <class T>
  static T eval(T x) {
    return ew::sigmoid(x);
  }
};

// log sigmoid(x) = -log(1 + e^-x) = min(x, 0) - log1p(e^-|x|): both terms <= 0, no overflow.
struct LogSigmoidStable {
  template <class T>
  static T eval(T x) {
    using std::exp;
    using std::fabs;
    using std::fmin;
    using std::log1p;
    return fmin(x, T(0)) - log1p(exp(-fabs(x)));
  }
};

// softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): both terms >= 0, no overflow.
struct SoftplusStable {
  template <class T>
  static T eval(T x) {
    using std::exp;
    using std::fabs;
    using std::fmax;
    using std::log1p;
    return fmax(x, T(0)) + log1p(exp(-fabs(x)));
  }
};

// silu(x) = x sigmoid(x); -inf * 0 would be NaN, so infinities take their limits (-0, +inf).
struct SiluStable {
  template <class T>
  static T eval(T x) {
    using std::isinf;
    if (isinf(x)) return x > T(0) ? x : T(-0.0);
    return x * ew::sigmoid(x);
  }
};

// gelu(x) = x/2 (1 + erf(x/sqrt 2)). For x < 0, 1 + erf(x/sqrt 2) cancels (all digits are gone
// below x ~ -6 in f32); erfc(-x/sqrt 2) is the same value without the subtraction.
struct GeluStable {
  template <class T>
  static T eval(T x) {
    using std::erf;
    using std::erfc;
    using std::isinf;
    if (isinf(x)) return x > T(0) ? x : T(-0.0);
    // Each product on one line (the compiler merges equal operations of two branches, and a
    // merged one has no line for a fault's site).
    const T half_x = T(0.5) * x;
    const T scaled = x * T(ew::kSqrtHalf);
    const T s = x >= T(0) ? T(1) + erf(scaled) : erfc(-scaled);
    return half_x * s;
  }
};

// gelu_tanh(x) = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as x sigmoid(2u):
// 1 + tanh(u) cancels for u << 0, and sigmoid does not. u = x (1 + 0.044715 x^2) keeps x^3 out.
// z is formed from x clamped to [-64, 64]: z(64) = 18806 is finite in every format (f16 max
// 65504) and sigmoid(+-18806) is exactly 1 or 0 in each, so the result is unchanged, and no
// intermediate overflows (under CESTAC, samples of z straddling the overflow threshold would
// disagree on inf, an invalid run although the output is exact).
struct GeluTanhStable {
  template <class T>
  static T eval(T x) {
    using std::isinf;
    if (isinf(x)) return x > T(0) ? x : T(-0.0);
    const T c = x > T(64) ? T(64) : (x < T(-64) ? T(-64) : x);
    const T z = T(ew::kTwoSqrtTwoOverPi) * (c * (T(1) + T(ew::kGeluTanhCubic) * (c * c)));
    return x * ew::sigmoid(z);
  }
};

}  // namespace stabfuzz::targets
