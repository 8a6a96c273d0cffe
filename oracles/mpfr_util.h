// MPFR helpers shared by every oracle: RAII numbers and decidable rounding to an output dtype.
#pragma once

#include <mpfr.h>

#include <functional>
#include <optional>
#include <vector>

#include "stabfuzz/dtype.h"
#include "stabfuzz/family.h"

namespace stabfuzz::oracle {

namespace detail {
// Significand storage of Real: per-thread free lists by limb count, so that the oracles' many
// short-lived numbers cost no malloc/free (an oracle call allocates a few per element and Ziv
// attempt; through mpfr_init2 that was about 15 % of a layer_norm fuzz execution).
void* take_significand(mpfr_prec_t prec);
void give_significand(void* p, mpfr_prec_t prec);
}  // namespace detail

// An mpfr_t that frees itself. Its significand comes from detail::take_significand
// (mpfr_custom_init_set): change its precision with set_prec, never mpfr_set_prec or mpfr_clear.
// mpfr_swap of two Reals is fine (each returns the storage it holds at destruction).
class Real {
 public:
  explicit Real(mpfr_prec_t prec) {
    mpfr_custom_init_set(v_, MPFR_NAN_KIND, 0, prec, detail::take_significand(prec));
  }
  Real(mpfr_prec_t prec, double x) : Real(prec) { mpfr_set_d(v_, x, MPFR_RNDN); }
  ~Real() { release(); }
  Real(const Real&) = delete;
  Real& operator=(const Real&) = delete;
  Real(Real&& o) noexcept {
    *v_ = *o.v_;
    o.v_->_mpfr_d = nullptr;
  }
  // A new precision; the value becomes NaN (as mpfr_set_prec).
  void set_prec(mpfr_prec_t prec) {
    release();
    mpfr_custom_init_set(v_, MPFR_NAN_KIND, 0, prec, detail::take_significand(prec));
  }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  operator mpfr_ptr() { return v_; }           // NOLINT: reads like MPFR's own API
  operator mpfr_srcptr() const { return v_; }  // NOLINT

 private:
  void release() {
    if (v_->_mpfr_d) detail::give_significand(mpfr_custom_get_significand(v_), mpfr_get_prec(v_));
  }
  mpfr_t v_;
};

// Precision ladder of Ziv's strategy: start, double, give up past the cap.
inline constexpr mpfr_prec_t kStartPrecision = 96;
inline constexpr mpfr_prec_t kPrecisionCap = 4096;
// Holds any double exactly.
inline constexpr mpfr_prec_t kExactDoublePrecision = 53;

// Where Ziv's ladder starts on this thread: kStartPrecision unless a StartPrecisionOverride is
// alive. An oracle whose error bounds are honest answers the same from any start (tests check
// that with starts 64 bits apart: tests/oracles/all_families_test.cc).
mpfr_prec_t start_precision();
class StartPrecisionOverride {
 public:
  explicit StartPrecisionOverride(mpfr_prec_t start);
  ~StartPrecisionOverride();
  StartPrecisionOverride(const StartPrecisionOverride&) = delete;
  StartPrecisionOverride& operator=(const StartPrecisionOverride&) = delete;

 private:
  mpfr_prec_t previous_;
};

// `approx` is within |approx| * 2^-err_bits of the exact value. Returns the exact value correctly
// rounded to nearest in `d` (subnormals included, no double rounding) when every value in that
// interval rounds to the same result, else nullopt. Unlike mpfr_can_round with the RNDZ trick,
// this also decides results that are exactly representable (softmax of [a, a] is 0.5).
std::optional<double> round_decided(mpfr_srcptr approx, long err_bits, DType d);

// x truncated to long double's 64-bit significand (within one of its ulps): for condition numbers,
// where mpfr_get_ld's correct rounding (and its temporary number) is not needed.
long double approx_long_double(mpfr_srcptr x);

// Correct rounding of an MPFR value to the dtype (RNDN), without an error interval.
double round_nearest(mpfr_srcptr x, DType d);

// Exact sum of doubles held in Reals, correctly rounded to `out` (mpfr_sum).
void sum(mpfr_ptr out, const std::vector<Real>& terms);

// Ziv's strategy for a whole operator: `attempt(p, out)` evaluates every output at working
// precision p and returns false as soon as one cannot be rounded (round_decided). The precision
// doubles from start_precision() to kPrecisionCap; past the cap the result is undecidable.
OracleResult ziv(const std::function<bool(mpfr_prec_t, OracleResult&)>& attempt);

// Elementwise operators y_i = f(x_i): `f` evaluates into y at y's precision with an error of at
// most 2^-err_bits relative (err_bits = p - 1 for a correctly rounded MPFR function), and `cond`
// gives |x f'(x) / f(x)| at x (a few correct digits suffice).
OracleResult elementwise(const Input& in, const std::function<void(mpfr_ptr y, mpfr_srcptr x)>& f,
                         long err_margin_bits, const std::function<double(double x)>& cond);

}  // namespace stabfuzz::oracle
