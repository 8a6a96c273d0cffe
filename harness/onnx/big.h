// Big: an MPFR number of kBigBits bits as a scalar type for the ONNX interpreter (eval.h), the
// graph's high-precision evaluation that per-node digits are judged against. Every operation rounds
// to nearest at 256 bits: far below any float or double's error, so the graph's true values to
// the digits that matter (not correctly rounded results; the families' oracles give those).
#pragma once

#include <mpfr.h>

#include <utility>

namespace stabfuzz::onnx {

inline constexpr mpfr_prec_t kBigBits = 256;

class Big {
 public:
  Big() { mpfr_init2(v_, kBigBits), mpfr_set_zero(v_, 1); }
  Big(double x) { mpfr_init2(v_, kBigBits), mpfr_set_d(v_, x, MPFR_RNDN); }  // NOLINT: a scalar
  Big(const Big& o) { mpfr_init2(v_, kBigBits), mpfr_set(v_, o.v_, MPFR_RNDN); }
  Big(Big&& o) noexcept { mpfr_init2(v_, kBigBits), mpfr_swap(v_, o.v_); }
  Big& operator=(const Big& o) {
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  Big& operator=(Big&& o) noexcept {
    mpfr_swap(v_, o.v_);
    return *this;
  }
  ~Big() { mpfr_clear(v_); }

  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }
  mpfr_srcptr get() const { return v_; }

  friend Big operator+(const Big& a, const Big& b) { return op(mpfr_add, a, b); }
  friend Big operator-(const Big& a, const Big& b) { return op(mpfr_sub, a, b); }
  friend Big operator*(const Big& a, const Big& b) { return op(mpfr_mul, a, b); }
  friend Big operator/(const Big& a, const Big& b) { return op(mpfr_div, a, b); }
  friend Big operator-(const Big& a) { return fn(mpfr_neg, a); }
  friend bool operator<(const Big& a, const Big& b) { return mpfr_less_p(a.v_, b.v_) != 0; }
  friend Big exp(const Big& a) { return fn(mpfr_exp, a); }
  friend Big log(const Big& a) { return fn(mpfr_log, a); }
  friend Big log1p(const Big& a) { return fn(mpfr_log1p, a); }
  friend Big tanh(const Big& a) { return fn(mpfr_tanh, a); }
  friend Big sqrt(const Big& a) { return fn(mpfr_sqrt, a); }
  friend Big erf(const Big& a) { return fn(mpfr_erf, a); }
  friend Big fabs(const Big& a) { return fn(mpfr_abs, a); }
  friend Big pow(const Big& a, const Big& b) { return op(mpfr_pow, a, b); }
  friend Big expm1(const Big& a) { return fn(mpfr_expm1, a); }
  friend Big floor(const Big& a) { return fn1(mpfr_floor, a); }
  friend Big ceil(const Big& a) { return fn1(mpfr_ceil, a); }

 private:
  template <class F>
  static Big op(F f, const Big& a, const Big& b) {
    Big r;
    f(r.v_, a.v_, b.v_, MPFR_RNDN);
    return r;
  }
  template <class F>
  static Big fn(F f, const Big& a) {
    Big r;
    f(r.v_, a.v_, MPFR_RNDN);
    return r;
  }
  template <class F>
  static Big fn1(F f, const Big& a) {  // the functions without a rounding mode
    Big r;
    f(r.v_, a.v_);
    return r;
  }
  mpfr_t v_;
};

inline double value_of(const Big& x) { return x.to_double(); }

}  // namespace stabfuzz::onnx
