// MPFR helpers shared by every oracle: RAII numbers and decidable rounding to an output dtype.
#pragma once

#include <mpfr.h>

#include <optional>
#include <vector>

#include "stabfuzz/dtype.h"

namespace stabfuzz::oracle {

// An mpfr_t that frees itself.
class Real {
 public:
  explicit Real(mpfr_prec_t prec) { mpfr_init2(v_, prec); }
  Real(mpfr_prec_t prec, double x) : Real(prec) { mpfr_set_d(v_, x, MPFR_RNDN); }
  ~Real() { mpfr_clear(v_); }
  Real(const Real&) = delete;
  Real& operator=(const Real&) = delete;
  Real(Real&& o) noexcept {
    mpfr_init2(v_, MPFR_PREC_MIN);
    mpfr_swap(v_, o.v_);
  }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  operator mpfr_ptr() { return v_; }         // NOLINT: reads like MPFR's own API
  operator mpfr_srcptr() const { return v_; }  // NOLINT

 private:
  mpfr_t v_;
};

// Precision ladder of Ziv's strategy: start, double, give up past the cap.
inline constexpr mpfr_prec_t kStartPrecision = 96;
inline constexpr mpfr_prec_t kPrecisionCap = 4096;

// `approx` is within |approx| * 2^-err_bits of the exact value. Returns the exact value correctly
// rounded to nearest in `d` (subnormals included, no double rounding) when every value in that
// interval rounds to the same result, else nullopt. Unlike mpfr_can_round with the RNDZ trick,
// this also decides results that are exactly representable (softmax of [a, a] is 0.5).
std::optional<double> round_decided(mpfr_srcptr approx, long err_bits, DType d);

// Correct rounding of an MPFR value to the dtype (RNDN), without an error interval.
double round_nearest(mpfr_srcptr x, DType d);

// Exact sum of doubles held in Reals, correctly rounded to `out` (mpfr_sum).
void sum(mpfr_ptr out, const std::vector<Real>& terms);

}  // namespace stabfuzz::oracle
