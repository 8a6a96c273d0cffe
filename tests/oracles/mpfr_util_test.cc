// Oracle rounding: deciding the correctly rounded f64/f32 result from an MPFR approximation.
#include "oracles/mpfr_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace stabfuzz {
namespace {

using oracle::Real;
using oracle::round_decided;
using oracle::round_nearest;

constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();

// An exact MPFR value sum_k 2^e_k at ample precision.
void set_pow2_sum(Real& r, std::initializer_list<long> exps) {
  mpfr_set_zero(r, 1);
  for (long e : exps) {
    Real t(2);
    mpfr_set_ui_2exp(t, 1, e, MPFR_RNDN);
    ASSERT_EQ(mpfr_add(r, r, t, MPFR_RNDN), 0) << "not exact";
  }
}

TEST(RoundDecided, DecidesExactlyRepresentableResults) {
  Real half(96, 0.5);
  for (DType d : kAllDTypes) {
    for (long err : {60L, 93L, 200L}) {
      const auto r = round_decided(half, err, d);
      ASSERT_TRUE(r.has_value()) << dtype_name(d) << " err_bits " << err;
      EXPECT_EQ(*r, 0.5);
    }
  }
  Real one(96, 1.0), neg(96, -3.0);
  EXPECT_EQ(round_decided(one, 90, DType::f64), std::optional<double>(1.0));
  EXPECT_EQ(round_decided(neg, 90, DType::f32), std::optional<double>(-3.0));
}

TEST(RoundDecided, ZeroInfAndNaN) {
  Real z(96, 0.0), inf(96, INFINITY), nan(96);
  mpfr_set_nan(nan);
  EXPECT_EQ(round_decided(z, 90, DType::f64), std::optional<double>(0.0));
  EXPECT_EQ(round_decided(inf, 90, DType::f32), std::optional<double>(INFINITY));
  EXPECT_FALSE(round_decided(nan, 90, DType::f64).has_value());
}

TEST(RoundDecided, UndecidedWhenTheIntervalStraddlesAMidpoint) {
  // 1 + 2^-53 is exactly halfway between 1 and 1 + 2^-52 in f64.
  Real mid(200);
  set_pow2_sum(mid, {0, -53});
  for (long err : {54L, 60L, 150L}) EXPECT_FALSE(round_decided(mid, err, DType::f64).has_value());
  // Far from any f32 midpoint, the same value decides in f32.
  EXPECT_EQ(round_decided(mid, 60, DType::f32), std::optional<double>(1.0));
}

TEST(RoundDecided, DecidedOnEitherSideOfAMidpointWhenTheErrorIsSmall) {
  Real above(200), below(200);
  set_pow2_sum(above, {0, -53, -80});
  set_pow2_sum(below, {0, -54, -55, -56, -57});  // 1 + 2^-53 - 2^-57 (below the midpoint)
  EXPECT_EQ(round_decided(above, 100, DType::f64), std::optional<double>(1.0 + 0x1p-52));
  EXPECT_EQ(round_decided(below, 100, DType::f64), std::optional<double>(1.0));
  // The same values with an error bound wide enough to reach the midpoint are undecided.
  EXPECT_FALSE(round_decided(above, 70, DType::f64).has_value());
  EXPECT_FALSE(round_decided(below, 50, DType::f64).has_value());
}

TEST(RoundDecided, RoundsIntoF64SubnormalsOnce) {
  Real x(96);
  set_pow2_sum(x, {-1075, -1076});  // 0.75 * 2^-1074
  EXPECT_EQ(round_nearest(x, DType::f64), kDenormMin);
  EXPECT_EQ(round_decided(x, 60, DType::f64), std::optional<double>(kDenormMin));
  // 0.5 * 2^-1074 is the midpoint between 0 and denorm_min: ties to even gives 0, undecided with
  // any error bound.
  Real h(96);
  set_pow2_sum(h, {-1075});
  EXPECT_EQ(round_nearest(h, DType::f64), 0.0);
  EXPECT_FALSE(round_decided(h, 60, DType::f64).has_value());
  // Just above that midpoint rounds up, just below rounds to zero.
  Real up(200), down(200);
  set_pow2_sum(up, {-1075, -1140});
  set_pow2_sum(down, {-1076, -1077, -1078});
  EXPECT_EQ(round_decided(up, 80, DType::f64), std::optional<double>(kDenormMin));
  EXPECT_EQ(round_decided(down, 80, DType::f64), std::optional<double>(0.0));
  // 1.5 * 2^-1070 (exactly representable subnormal) is decided to itself.
  Real s(96);
  set_pow2_sum(s, {-1070, -1071});
  EXPECT_EQ(round_decided(s, 80, DType::f64), std::optional<double>(0x1.8p-1070));
}

// Whatever round_decided decides is the correct rounding of the exact value: exact values near
// midpoints, near representable numbers and at random, over the whole range of f64 and f32
// (subnormals and the overflow edge included), approximated at 96 bits.
TEST(RoundDecided, EveryDecisionIsTheCorrectRounding) {
  std::mt19937_64 g(7);
  Real x(400), approx(96), t(400);
  int decided = 0, cases = 0;
  for (DType d : {DType::f64, DType::f32}) {
    const bool f64 = d == DType::f64;
    const int prec = f64 ? 53 : 24, emin = f64 ? -1074 : -149, emax = f64 ? 1023 : 127;
    for (int k = 0; k < 4000; ++k) {
      // A representable value y, then x = y + (a half or whole ulp, or nothing) + a tiny offset.
      const long e = emin + static_cast<long>(g() % static_cast<uint64_t>(emax - emin + 1));
      mpfr_set_ui(x, 1, MPFR_RNDN);
      mpfr_mul_2si(x, x, e, MPFR_RNDN);
      mpfr_set_ui(t, static_cast<unsigned long>(g() >> 11), MPFR_RNDN);  // random mantissa bits
      mpfr_mul_2si(t, t, e - 53, MPFR_RNDN);
      mpfr_add(x, x, t, MPFR_RNDN);
      const double y = f64 ? mpfr_get_d(x, MPFR_RNDN) : mpfr_get_flt(x, MPFR_RNDN);
      if (!std::isfinite(y) || y == 0) continue;
      mpfr_set_d(x, y, MPFR_RNDN);
      const long ulp_exp = std::max<long>(std::ilogb(y) - prec + 1, emin);
      switch (k % 4) {
        case 0:  // a midpoint
          mpfr_set_ui_2exp(t, 1, ulp_exp - 1, MPFR_RNDN);
          mpfr_add(x, x, t, MPFR_RNDN);
          break;
        case 1:  // near a midpoint
          mpfr_set_ui_2exp(t, 1, ulp_exp - 1, MPFR_RNDN);
          mpfr_add(x, x, t, MPFR_RNDN);
          mpfr_set_si_2exp(t, (g() & 1) ? 1 : -1, ulp_exp - 60 - static_cast<long>(g() % 60),
                           MPFR_RNDN);
          mpfr_add(x, x, t, MPFR_RNDN);
          break;
        case 2:  // near the representable value itself
          mpfr_set_si_2exp(t, (g() & 1) ? 1 : -1, ulp_exp - 40 - static_cast<long>(g() % 80),
                           MPFR_RNDN);
          mpfr_add(x, x, t, MPFR_RNDN);
          break;
        default:  // anywhere in the ulp
          mpfr_set_ui(t, static_cast<unsigned long>(g() >> 1), MPFR_RNDN);
          mpfr_mul_2si(t, t, ulp_exp - 63, MPFR_RNDN);
          mpfr_add(x, x, t, MPFR_RNDN);
      }
      if ((g() & 1) != 0) mpfr_neg(x, x, MPFR_RNDN);
      mpfr_set(approx, x, MPFR_RNDN);  // |approx - x| <= |approx| 2^-96
      ++cases;
      const auto v = round_decided(approx, 95, d);
      if (!v) continue;
      ++decided;
      const double want = f64 ? mpfr_get_d(x, MPFR_RNDN) : mpfr_get_flt(x, MPFR_RNDN);
      ASSERT_EQ(*v, want) << "dtype " << dtype_name(d) << " case " << k;
    }
  }
  EXPECT_GT(decided, cases / 2);  // most are decided; midpoints and near-midpoints often not
}

TEST(RoundNearest, F32RoundsOnceFromTheExactValue) {
  // 1 + 2^-24 + 2^-80 lies just above the f32 midpoint between 1 and 1 + 2^-23. Rounding to double
  // first lands exactly on that midpoint (2^-80 is below the double ULP), and ties-to-even then
  // gives 1: double rounding. Direct rounding gives 1 + 2^-23.
  Real x(200);
  set_pow2_sum(x, {0, -24, -80});
  const double via_double = static_cast<double>(static_cast<float>(mpfr_get_d(x, MPFR_RNDN)));
  ASSERT_EQ(via_double, 1.0);  // the trap this test guards against
  EXPECT_EQ(round_nearest(x, DType::f32), 1.0 + 0x1p-23);
  EXPECT_EQ(round_decided(x, 100, DType::f32), std::optional<double>(1.0 + 0x1p-23));
  // Same in f64 keeps the double nearest: 1 + 2^-24.
  EXPECT_EQ(round_nearest(x, DType::f64), 1.0 + 0x1p-24);
}

TEST(RoundNearest, F32SubnormalsWithoutDoubleRounding) {
  // 2^-150 + 2^-210: just above half of f32's denorm_min (2^-149). Through double it becomes
  // 2^-150 exactly, which ties to 0 in float; rounded once it is 2^-149.
  Real x(200);
  set_pow2_sum(x, {-150, -210});
  const double via_double = static_cast<double>(static_cast<float>(mpfr_get_d(x, MPFR_RNDN)));
  ASSERT_EQ(via_double, 0.0);
  EXPECT_EQ(round_nearest(x, DType::f32), 0x1p-149);
  EXPECT_EQ(round_decided(x, 80, DType::f32), std::optional<double>(0x1p-149));
  Real y(96);
  set_pow2_sum(y, {-150, -151});  // 0.75 * 2^-149
  EXPECT_EQ(round_nearest(y, DType::f32), 0x1p-149);
  // Above FLT_MAX's rounding boundary, f32 overflows to inf while f64 stays finite.
  Real big(96, 1e39);
  EXPECT_EQ(round_nearest(big, DType::f32), INFINITY);
  EXPECT_EQ(round_nearest(big, DType::f64), 1e39);
}

TEST(RoundNearest, F32UsesFloatPrecision) {
  Real x(96, 1.0 + 0x1p-30);
  EXPECT_EQ(round_nearest(x, DType::f32), 1.0);
  EXPECT_EQ(round_nearest(x, DType::f64), 1.0 + 0x1p-30);
  Real tenth(200);
  mpfr_set_ui(tenth, 1, MPFR_RNDN);
  mpfr_div_ui(tenth, tenth, 10, MPFR_RNDN);
  EXPECT_EQ(round_nearest(tenth, DType::f32), static_cast<double>(0.1f));
  EXPECT_EQ(round_nearest(tenth, DType::f64), 0.1);
}

TEST(Sum, IsCorrectlyRounded) {
  std::vector<Real> terms;
  for (double v : {1e100, 1.0, -1e100}) terms.emplace_back(53, v);
  Real out(53);
  oracle::sum(out, terms);
  EXPECT_EQ(mpfr_get_d(out, MPFR_RNDN), 1.0);
  EXPECT_NE((1e100 + 1.0) - 1e100, 1.0);  // what naive summation gives

  // 1 + 2^-53 + 2^-80 at 53 bits: the tiny term tips the tie upward only if nothing is lost.
  std::vector<Real> t2;
  for (double v : {1.0, 0x1p-53, 0x1p-80}) t2.emplace_back(53, v);
  oracle::sum(out, t2);
  EXPECT_EQ(mpfr_get_d(out, MPFR_RNDN), 1.0 + 0x1p-52);

  std::vector<Real> none;
  oracle::sum(out, none);
  EXPECT_TRUE(mpfr_zero_p(out));
}

TEST(RealRaii, MoveKeepsTheValue) {
  Real a(128, 2.5);
  Real b(std::move(a));
  EXPECT_EQ(mpfr_get_d(b, MPFR_RNDN), 2.5);
  EXPECT_EQ(mpfr_get_prec(b), 128);
}

// Significands come back from a per-thread pool: a reused one holds a number of another precision
// of the same limb count correctly, and a moved-from Real gives nothing back (ASan catches a
// double return).
TEST(RealRaii, PooledStorageServesEveryPrecisionOfItsSize) {
  std::vector<Real> first;
  for (int i = 0; i < 8; ++i) first.emplace_back(128, 1.0 + i);
  first.clear();
  Real third(100);  // two limbs, like 128 bits: a pooled significand
  ASSERT_EQ(mpfr_get_prec(third), 100);
  EXPECT_TRUE(mpfr_nan_p(third));
  mpfr_set_ui(third, 1, MPFR_RNDN);
  mpfr_div_ui(third, third, 3, MPFR_RNDN);
  Real check(100);
  mpfr_set_ui(check, 1, MPFR_RNDN);
  mpfr_div_ui(check, check, 3, MPFR_RNDN);
  EXPECT_EQ(mpfr_cmp(third, check), 0);
  // 1/3 at 100 bits: its last bit is bit 100, not a leftover bit of an earlier 128-bit number.
  EXPECT_EQ(mpfr_min_prec(third), 100);
  Real moved(std::move(third));
  EXPECT_EQ(mpfr_cmp(moved, check), 0);
}

TEST(RealRaii, SetPrecAndSwapKeepOwnership) {
  Real a(64, 1.5), b(4096, 2.5);
  mpfr_swap(a, b);  // each destructor returns the significand it holds then
  EXPECT_EQ(mpfr_get_prec(a), 4096);
  EXPECT_EQ(mpfr_get_d(a, MPFR_RNDN), 2.5);
  EXPECT_EQ(mpfr_get_d(b, MPFR_RNDN), 1.5);
  b.set_prec(300);
  EXPECT_EQ(mpfr_get_prec(b), 300);
  EXPECT_TRUE(mpfr_nan_p(b));
  mpfr_const_pi(b, MPFR_RNDN);
  EXPECT_NEAR(mpfr_get_d(b, MPFR_RNDN), 3.141592653589793, 1e-15);
  Real big(20000, 0.25);  // past the pooled sizes
  EXPECT_EQ(mpfr_get_d(big, MPFR_RNDN), 0.25);
}

TEST(ApproxLongDouble, WithinOneUlpOfMpfrGetLd) {
  Real x(200);
  for (long e : {-16400L, -1100L, -60L, -1L, 0L, 1L, 70L, 1100L, 16380L}) {
    for (int sign : {1, -1}) {
      mpfr_const_pi(x, MPFR_RNDN);
      mpfr_mul_2si(x, x, e, MPFR_RNDN);
      if (sign < 0) mpfr_neg(x, x, MPFR_RNDN);
      const long double want = mpfr_get_ld(x, MPFR_RNDN), got = oracle::approx_long_double(x);
      const long double ulp = std::fabs(std::nextafter(want, 2 * want) - want);
      EXPECT_LE(std::fabs(got - want), ulp) << e << " " << sign;
      EXPECT_EQ(std::signbit(got), sign < 0);
    }
  }
  Real small(20);  // a precision below one limb
  mpfr_set_ui(small, 3, MPFR_RNDN);
  EXPECT_EQ(oracle::approx_long_double(small), 3.0L);
  mpfr_set_inf(x, -1);
  EXPECT_EQ(oracle::approx_long_double(x), -INFINITY);
  mpfr_set_zero(x, -1);
  EXPECT_EQ(oracle::approx_long_double(x), 0.0L);
  EXPECT_TRUE(std::signbit(oracle::approx_long_double(x)));
  mpfr_set_nan(x);
  EXPECT_TRUE(std::isnan(oracle::approx_long_double(x)));
  mpfr_set_ui_2exp(x, 1, 20000, MPFR_RNDN);  // past long double's range, as mpfr_get_ld
  EXPECT_EQ(oracle::approx_long_double(x), INFINITY);
}

}  // namespace
}  // namespace stabfuzz
