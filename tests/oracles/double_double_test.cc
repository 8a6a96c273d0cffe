// The double-double primitives of the oracles' fast paths (oracles/double_double.h): each stays
// within the relative error bound it states, measured against MPFR at 320 bits on arguments
// spread over its whole domain, and the rounding of a double-double decides only what every value
// within its bound rounds to.
#include "oracles/double_double.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "stabfuzz/entropy.h"
#include "stabfuzz/lowp.h"

namespace stabfuzz {
namespace {

using oracle::Real;
using oracle::dd::DD;

constexpr mpfr_prec_t kP = 320;

// log2 of |q - exact| / |exact|, with q = hi + lo.
double log2_rel_error(DD q, mpfr_srcptr exact) {
  Real d(kP);
  mpfr_set_d(d, q.hi, MPFR_RNDN);
  mpfr_add_d(d, d, q.lo, MPFR_RNDN);
  mpfr_sub(d, d, exact, MPFR_RNDN);
  if (mpfr_zero_p(d)) return -1000;
  mpfr_div(d, d, exact, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  return mpfr_get_d(d, MPFR_RNDN) == 0 ? -1000 : std::log2(mpfr_get_d(d, MPFR_RNDN));
}

// Uniform in [a, b], and log-uniform magnitudes in [2^lo, 2^hi] with a random sign.
double uniform(SeededEntropy& e, double a, double b) { return a + (b - a) * e.uniform(); }
double log_uniform(SeededEntropy& e, double lo, double hi, bool signed_) {
  const double v = std::exp2(uniform(e, lo, hi));
  return signed_ && e.uniform() < 0.5 ? -v : v;
}

struct Worst {
  double bits = -1000;
  std::string where;
  ~Worst() { std::printf("worst log2 relative error %.2f at %s\n", bits, where.c_str()); }
  void see(double b, double arg) {
    if (b > bits) {
      bits = b;
      where = std::to_string(arg);
    }
  }
};

TEST(DoubleDouble, ExpStaysWithinItsBound) {
  SeededEntropy e(1, 1);
  Worst w;
  Real x(kP), y(kP);
  for (int i = 0; i < 20000; ++i) {
    const double a = i % 2 ? uniform(e, oracle::dd::kMinExpArg, oracle::dd::kMaxExpArg)
                           : log_uniform(e, -60, 2, true);
    const double b = i % 3 == 0 ? a * 0x1p-60 : 0;  // a double-double argument
    const DD arg = oracle::dd::fast_two_sum(a, b);
    mpfr_set_d(x, arg.hi, MPFR_RNDN);
    mpfr_add_d(x, x, arg.lo, MPFR_RNDN);
    mpfr_exp(y, x, MPFR_RNDN);
    w.see(log2_rel_error(oracle::dd::exp_dd(arg), y), a);
  }
  EXPECT_LT(w.bits, -90.5) << w.where;
}

TEST(DoubleDouble, Expm1StaysWithinItsBound) {
  SeededEntropy e(1, 2);
  Worst small, big;
  Real x(kP), y(kP);
  for (int i = 0; i < 20000; ++i) {
    const double a = log_uniform(e, -900, std::log2(oracle::dd::kExpm1SmallArg), true);
    mpfr_set_d(x, a, MPFR_RNDN);
    mpfr_expm1(y, x, MPFR_RNDN);
    small.see(log2_rel_error(oracle::dd::expm1_small(a), y), a);
    const double b =
        i % 4 ? uniform(e, -40, 40) : uniform(e, oracle::dd::kMinExpArg, oracle::dd::kMaxExpArg);
    if (std::fabs(b) < 0x1p-900) continue;
    mpfr_set_d(x, b, MPFR_RNDN);
    mpfr_expm1(y, x, MPFR_RNDN);
    big.see(log2_rel_error(oracle::dd::expm1_dd(b), y), b);
  }
  EXPECT_LT(small.bits, -98.5) << small.where;
  EXPECT_LT(big.bits, -89.5) << big.where;
}

TEST(DoubleDouble, LogStaysWithinItsBound) {
  SeededEntropy e(1, 3);
  Worst l1p, lg;
  Real x(kP), y(kP);
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    // log1p on [-0.5, 1], with double-double arguments too.
    const double t = i % 2 ? uniform(e, -0.5, 1) : log_uniform(e, -800, 0, true) * 0.5;
    const DD td = i % 3 == 0 ? oracle::dd::fast_two_sum(t, t * 0x1p-57) : DD{t, 0};
    mpfr_set_d(x, td.hi, MPFR_RNDN);
    mpfr_add_d(x, x, td.lo, MPFR_RNDN);
    mpfr_log1p(y, x, MPFR_RNDN);
    if (const auto q = oracle::dd::log1p_dd(td))
      l1p.see(log2_rel_error(*q, y), t);
    else
      ++refused;
    // log over the whole range, near 1, and double-double arguments (1 + tiny).
    double v = log_uniform(e, -1074, 1023.9, false);
    if (i % 5 == 0) v = 1 + uniform(e, -0.5, 1);
    const DD vd = i % 7 == 0 ? oracle::dd::two_sum(1, log_uniform(e, -200, 300, true)) : DD{v, 0};
    if (!(vd.hi > 0)) continue;
    mpfr_set_d(x, vd.hi, MPFR_RNDN);
    mpfr_add_d(x, x, vd.lo, MPFR_RNDN);
    mpfr_log(y, x, MPFR_RNDN);
    if (mpfr_zero_p(y)) continue;
    if (const auto q = oracle::dd::log_dd(vd))
      lg.see(log2_rel_error(*q, y), vd.hi);
    else
      ++refused;
  }
  EXPECT_LT(l1p.bits, -97.8) << l1p.where;
  EXPECT_LT(lg.bits, -95.4) << lg.where;
  EXPECT_LT(refused, 100);  // libm's log1p is a good first guess: the residual check rarely fails
}

TEST(DoubleDouble, SqrtStaysWithinItsBound) {
  SeededEntropy e(1, 5);
  Worst w;
  Real x(kP), y(kP);
  for (int i = 0; i < 20000; ++i) {
    const double h = log_uniform(e, -900, 1000, false);  // both words normal
    const DD a = oracle::dd::fast_two_sum(h, h * uniform(e, -0x1p-53, 0x1p-53));
    mpfr_set_d(x, a.hi, MPFR_RNDN);
    mpfr_add_d(x, x, a.lo, MPFR_RNDN);
    mpfr_sqrt(y, x, MPFR_RNDN);
    w.see(log2_rel_error(oracle::dd::sqrt_dd(a), y), h);
  }
  EXPECT_LT(w.bits, -106 + std::log2(3.0)) << w.where;
}

TEST(DoubleDouble, RoundingDecidesOnlyWhatTheWholeIntervalRoundsTo) {
  // Around every format's representable values and midpoints: a double-double q within delta
  // decides when both ends of [q - delta, q + delta] round alike, and then to their rounding.
  SeededEntropy e(1, 4);
  int decided = 0, undecided = 0;
  for (DType d : kAllDTypes) {
    const Format& f = dtype_format(d);
    for (int i = 0; i < 4000; ++i) {
      const double r = round_to_format(f, log_uniform(e, f.emin - f.p + 2, f.emax, true));
      if (!std::isfinite(r) || r == 0) continue;
      const double nb = format_neighbour(f, r, 1.0);
      const double mid = d == DType::f64 ? r : (r + nb) / 2;  // exact for the narrow formats
      const double off = std::ldexp(uniform(e, -4, 4), std::ilogb(r) - 53 - (i % 40));
      const DD q = oracle::dd::two_sum(mid, off);
      const double delta = std::fabs(q.hi) * std::exp2(-60 - (i % 50));
      const auto got = oracle::dd::round_double_double(q, delta, d);
      if (!got) {
        ++undecided;
        continue;
      }
      ++decided;
      Real lo(2200), hi(2200), c(2200);
      mpfr_set_d(c, q.hi, MPFR_RNDN);
      mpfr_add_d(c, c, q.lo, MPFR_RNDN);
      mpfr_sub_d(lo, c, delta, MPFR_RNDN);
      mpfr_add_d(hi, c, delta, MPFR_RNDN);
      ASSERT_EQ(*got, oracle::round_nearest(lo, d)) << dtype_name(d) << " " << r;
      ASSERT_EQ(*got, oracle::round_nearest(hi, d)) << dtype_name(d) << " " << r;
    }
  }
  EXPECT_GT(decided, 1000);
  EXPECT_GT(undecided, 100);
}

}  // namespace
}  // namespace stabfuzz
