// Prop: first-order error propagation as a scalar type for the ONNX interpreter and its backward
// (eval.h, grad.h). A Prop holds a value and the absolute error its inputs' errors explain,
// sum_j |x_j df/dx_j| e_j to first order, accumulated operation by operation with absolute values
// (so an operator's internal paths never cancel each other: a bound on the operator's
// conditioning, never less). It also carries the largest relative error among the inputs that
// reached it: first-order propagation holds only while every input keeps a few digits.
//
// The training monitor (train.h) runs one node, forward or backward, on Props seeded with the
// CESTAC run's per-element errors, to learn what each output element's inputs explain.
#pragma once

#include <algorithm>
#include <cmath>

namespace stabfuzz::onnx {

struct Prop {
  double v = 0;  // the value (the CESTAC samples' mean)
  double a = 0;  // the absolute error explained by the inputs' errors
  double w = 0;  // the largest relative error among the inputs that reached this value

  Prop() = default;
  Prop(double x) : v(x) {}  // NOLINT: a constant carries no error
  Prop(double x, double abs_err, double worst) : v(x), a(abs_err), w(worst) {}
  // An input of relative error e.
  static Prop seeded(double x, double e) { return {x, std::fabs(x) * e, e}; }
  // The relative error explained (infinite when an error reaches an exact zero).
  double rel() const { return v == 0 ? (a == 0 ? 0.0 : INFINITY) : a / std::fabs(v); }

  friend Prop operator+(const Prop& x, const Prop& y) {
    return {x.v + y.v, x.a + y.a, std::max(x.w, y.w)};
  }
  friend Prop operator-(const Prop& x, const Prop& y) {
    return {x.v - y.v, x.a + y.a, std::max(x.w, y.w)};
  }
  friend Prop operator*(const Prop& x, const Prop& y) {
    return {x.v * y.v, std::fabs(y.v) * x.a + std::fabs(x.v) * y.a, std::max(x.w, y.w)};
  }
  friend Prop operator/(const Prop& x, const Prop& y) {
    const double q = x.v / y.v;
    return {q, (x.a + std::fabs(q) * y.a) / std::fabs(y.v), std::max(x.w, y.w)};
  }
  friend Prop operator-(const Prop& x) { return {-x.v, x.a, x.w}; }
  Prop& operator+=(const Prop& y) { return *this = *this + y; }
  Prop& operator-=(const Prop& y) { return *this = *this - y; }
  Prop& operator*=(const Prop& y) { return *this = *this * y; }
  friend bool operator<(const Prop& x, const Prop& y) { return x.v < y.v; }
  friend bool operator>(const Prop& x, const Prop& y) { return x.v > y.v; }
  friend bool operator<=(const Prop& x, const Prop& y) { return x.v <= y.v; }
  friend bool operator>=(const Prop& x, const Prop& y) { return x.v >= y.v; }
  friend bool operator==(const Prop& x, const Prop& y) { return x.v == y.v; }
  friend bool operator!=(const Prop& x, const Prop& y) { return x.v != y.v; }

  // f(x) with |f'(x)| the factor of x's error.
  static Prop chain(const Prop& x, double fx, double dfdx) {
    return {fx, std::fabs(dfdx) * x.a, x.w};
  }
  friend Prop exp(const Prop& x) {
    const double e = std::exp(x.v);
    return chain(x, e, e);
  }
  friend Prop expm1(const Prop& x) { return chain(x, std::expm1(x.v), std::exp(x.v)); }
  friend Prop log(const Prop& x) { return chain(x, std::log(x.v), 1 / x.v); }
  friend Prop log1p(const Prop& x) { return chain(x, std::log1p(x.v), 1 / (1 + x.v)); }
  friend Prop tanh(const Prop& x) {
    const double t = std::tanh(x.v);
    return chain(x, t, 1 - t * t);
  }
  friend Prop sqrt(const Prop& x) {
    const double s = std::sqrt(x.v);
    return chain(x, s, 0.5 / s);
  }
  friend Prop erf(const Prop& x) {
    return chain(x, std::erf(x.v), 1.1283791670955126 * std::exp(-x.v * x.v));
  }
  friend Prop fabs(const Prop& x) { return {std::fabs(x.v), x.a, x.w}; }
  friend Prop floor(const Prop& x) { return {std::floor(x.v), 0, x.w}; }
  friend Prop ceil(const Prop& x) { return {std::ceil(x.v), 0, x.w}; }
  friend Prop pow(const Prop& x, const Prop& y) {
    const double p = std::pow(x.v, y.v);
    const double dx = x.v == 0 ? 0 : std::fabs(y.v * p / x.v) * x.a;
    const double dy = p > 0 ? std::fabs(p * std::log(x.v)) * y.a : 0;
    return {p, dx + dy, std::max(x.w, y.w)};
  }
};

inline double value_of(const Prop& x) { return x.v; }

}  // namespace stabfuzz::onnx
