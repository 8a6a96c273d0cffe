// Half and BFloat16: f16 and bf16 as storage formats for operator templates.
//
// Each operation is computed in double and rounded once to the format (round to nearest even,
// subnormals, overflow to inf). For +, -, x, / and sqrt this is the correctly rounded result:
// double's 53 bits exceed 2p + 2 for p = 11 and p = 8, so the double rounding is innocuous
// (Figueroa). Elementary functions are libm's double result rounded once.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace stabfuzz {

// A binary floating-point format: p significand bits (hidden bit included), normal exponents
// emin..emax (value = 1.m * 2^e).
struct Format {
  int p;
  int emin;
  int emax;
  constexpr double min_normal() const { return std::ldexp(1.0, emin); }
  constexpr double quantum_min() const { return std::ldexp(1.0, emin - p + 1); }  // denorm_min
  constexpr double max_finite() const { return std::ldexp(2.0 - std::ldexp(1.0, 1 - p), emax); }
};
inline constexpr Format kF16{11, -14, 15};
inline constexpr Format kBF16{8, -126, 127};
inline constexpr Format kF32{24, -126, 127};
inline constexpr Format kF64{53, -1022, 1023};

// Spacing of the format at |v| (the subnormal spacing below min_normal).
inline double format_quantum(const Format& f, double v) {
  const double a = std::fabs(v);
  const int e = (a < f.min_normal() || a == 0) ? f.emin : std::ilogb(a);
  return std::ldexp(1.0, e - f.p + 1);
}

// Round half to even of |t| < 2^52, whatever the thread's rounding mode (nearbyint follows it, and
// CESTAC runs in round toward +inf): floor and the fraction are exact.
inline double round_half_even(double t) {
  const double fl = std::floor(t);
  const double frac = t - fl;
  const double r =
      frac > 0.5 ? fl + 1 : (frac < 0.5 ? fl : (std::fmod(fl, 2.0) == 0 ? fl : fl + 1));
  return std::copysign(r, t);
}

// Round to nearest even in the format, with subnormals and overflow to infinity.
inline double round_to_format(const Format& f, double v) {
  if (!std::isfinite(v) || v == 0) return v;
  const double q = format_quantum(f, v);
  const double r = round_half_even(v / q) * q;  // v / q and the product are exact (powers of two)
  if (std::fabs(r) > f.max_finite()) return std::copysign(INFINITY, v);
  return r;
}

// The neighbour of a representable r on the side of `dir` (> 0: toward +inf, < 0: toward -inf).
inline double format_neighbour(const Format& f, double r, double dir) {
  if (r == 0) return std::copysign(f.quantum_min(), dir);
  if (!std::isfinite(r)) return r;
  const bool away = (r > 0) == (dir > 0);
  double q = format_quantum(f, r);
  // Stepping toward zero from the bottom of a binade lands in the binade below (half the spacing).
  if (!away && std::fabs(r) > f.min_normal() && std::fabs(r) == std::ldexp(1.0, std::ilogb(r)))
    q /= 2;
  const double n = r + (r > 0 ? 1 : -1) * (away ? q : -q);
  if (std::fabs(n) > f.max_finite()) return std::copysign(INFINITY, r);
  return n;
}

// Index of a representable value on a line where neighbours differ by one (for ULP distances).
inline int64_t format_ordinal(const Format& f, double v) {
  const double a = std::fabs(v);
  int64_t idx;
  if (a < f.min_normal()) {
    idx = static_cast<int64_t>(a / f.quantum_min());
  } else {
    const int e = std::ilogb(a);
    const double m = std::ldexp(a, f.p - 1 - e);  // in [2^(p-1), 2^p)
    idx = (static_cast<int64_t>(e - f.emin + 1) << (f.p - 1)) + static_cast<int64_t>(m) -
          (int64_t{1} << (f.p - 1));
  }
  return v < 0 ? -idx : idx;
}

// A value of format F held exactly in a float, every operation rounded back to F.
template <const Format& F>
class LowFloat {
 public:
  static constexpr const Format& kFormat = F;

  LowFloat() = default;
  LowFloat(double v) : v_(static_cast<float>(round_to_format(F, v))) {}  // NOLINT: like a float
  template <class U,
            std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, double>, int> = 0>
  LowFloat(U v) : LowFloat(static_cast<double>(v)) {}  // NOLINT
  explicit operator double() const { return v_; }
  explicit operator float() const { return v_; }
  double value() const { return v_; }

#define SF_LOWP_BINARY(op)                                                   \
  friend LowFloat operator op(LowFloat a, LowFloat b) {                      \
    return LowFloat(static_cast<double>(a.v_) op static_cast<double>(b.v_)); \
  }                                                                          \
  LowFloat& operator op##=(LowFloat b) { return *this = *this op b; }
  SF_LOWP_BINARY(+)
  SF_LOWP_BINARY(-)
  SF_LOWP_BINARY(*)
  SF_LOWP_BINARY(/)
#undef SF_LOWP_BINARY
  friend LowFloat operator-(LowFloat a) { return LowFloat(-static_cast<double>(a.v_)); }

  friend bool operator<(LowFloat a, LowFloat b) { return a.v_ < b.v_; }
  friend bool operator>(LowFloat a, LowFloat b) { return a.v_ > b.v_; }
  friend bool operator<=(LowFloat a, LowFloat b) { return a.v_ <= b.v_; }
  friend bool operator>=(LowFloat a, LowFloat b) { return a.v_ >= b.v_; }
  friend bool operator==(LowFloat a, LowFloat b) { return a.v_ == b.v_; }
  friend bool operator!=(LowFloat a, LowFloat b) { return a.v_ != b.v_; }

#define SF_LOWP_UNARY(fn) \
  friend LowFloat fn(LowFloat a) { return LowFloat(std::fn(static_cast<double>(a.v_))); }
  SF_LOWP_UNARY(sqrt)
  SF_LOWP_UNARY(exp)
  SF_LOWP_UNARY(expm1)
  SF_LOWP_UNARY(log)
  SF_LOWP_UNARY(log1p)
  SF_LOWP_UNARY(log2)
  SF_LOWP_UNARY(log10)
  SF_LOWP_UNARY(exp2)
  SF_LOWP_UNARY(tanh)
  SF_LOWP_UNARY(erf)
  SF_LOWP_UNARY(erfc)
  SF_LOWP_UNARY(sin)
  SF_LOWP_UNARY(cos)
  SF_LOWP_UNARY(atan)
  SF_LOWP_UNARY(fabs)
  SF_LOWP_UNARY(abs)
  SF_LOWP_UNARY(floor)
  SF_LOWP_UNARY(ceil)
  SF_LOWP_UNARY(round)
#undef SF_LOWP_UNARY
  friend LowFloat pow(LowFloat a, LowFloat b) {
    return LowFloat(std::pow(static_cast<double>(a.v_), static_cast<double>(b.v_)));
  }
  friend LowFloat max(LowFloat a, LowFloat b) { return a < b ? b : a; }
  friend LowFloat min(LowFloat a, LowFloat b) { return b < a ? b : a; }
  friend LowFloat fmax(LowFloat a, LowFloat b) { return LowFloat(std::fmax(a.v_, b.v_)); }
  friend LowFloat fmin(LowFloat a, LowFloat b) { return LowFloat(std::fmin(a.v_, b.v_)); }
  friend bool isfinite(LowFloat a) { return std::isfinite(a.v_); }
  friend bool isinf(LowFloat a) { return std::isinf(a.v_); }
  friend bool isnan(LowFloat a) { return std::isnan(a.v_); }

 private:
  float v_ = 0;
};

using Half = LowFloat<kF16>;
using BFloat16 = LowFloat<kBF16>;

template <class T>
inline constexpr bool is_low_precision_v = false;
template <const Format& F>
inline constexpr bool is_low_precision_v<LowFloat<F>> = true;

}  // namespace stabfuzz
