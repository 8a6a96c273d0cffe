// DType: format names, rounding to a dtype, ULP distance and the digits a value can carry.
#include "stabfuzz/dtype.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

namespace stabfuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kDenormMin = std::numeric_limits<double>::denorm_min();
constexpr double kMax = std::numeric_limits<double>::max();

TEST(UlpDistance, ZeroForEqualValues) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(ulp_distance(d, 1.0, 1.0), 0.0);
    EXPECT_EQ(ulp_distance(d, -3.5, -3.5), 0.0);
    EXPECT_EQ(ulp_distance(d, kInf, kInf), 0.0);
    EXPECT_EQ(ulp_distance(d, -kInf, -kInf), 0.0);
  }
}

TEST(UlpDistance, OneForF64Neighbours) {
  for (double x : {1.0, -1.0, 0.1, 1e300, -1e-300, kDenormMin, 0x1p-1022}) {
    EXPECT_EQ(ulp_distance(DType::f64, x, std::nextafter(x, kInf)), 1.0) << x;
    EXPECT_EQ(ulp_distance(DType::f64, std::nextafter(x, -kInf), x), 1.0) << x;
  }
  // Across a binade boundary: 1 and its lower neighbour are one ULP (of the lower binade) apart.
  EXPECT_EQ(ulp_distance(DType::f64, 1.0, 1.0 - 0x1p-53), 1.0);
  EXPECT_EQ(ulp_distance(DType::f64, 1.0, 1.0 + 0x1p-52 * 3), 3.0);
}

TEST(UlpDistance, IsSymmetric) {
  EXPECT_EQ(ulp_distance(DType::f64, 1.0, 1.0 + 0x1p-50), 4.0);
  EXPECT_EQ(ulp_distance(DType::f64, 1.0 + 0x1p-50, 1.0), 4.0);
}

TEST(UlpDistance, AcrossZero) {
  EXPECT_EQ(ulp_distance(DType::f64, -kDenormMin, kDenormMin), 2.0);
  EXPECT_EQ(ulp_distance(DType::f64, 0.0, -0.0), 0.0);
  EXPECT_EQ(ulp_distance(DType::f32, 0.0, -0.0), 0.0);
  EXPECT_EQ(ulp_distance(DType::f64, 0.0, kDenormMin), 1.0);
  EXPECT_EQ(ulp_distance(DType::f64, -0.0, kDenormMin), 1.0);
  EXPECT_EQ(ulp_distance(DType::f64, -0.0, -kDenormMin), 1.0);
  const double fmin = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(DType::f32, -fmin, fmin), 2.0);
  // -max to +max: twice the ordinal of max (the two zeros share one point), rounded to double.
  EXPECT_EQ(ulp_distance(DType::f64, -kMax, kMax),
            2.0 * static_cast<double>(std::bit_cast<int64_t>(kMax)));
}

TEST(UlpDistance, F32NeighboursCountFloatSteps) {
  for (float x : {1.0f, -1.0f, 0.1f, 3e38f, 1e-40f}) {
    const float next = std::nextafterf(x, INFINITY);
    EXPECT_EQ(ulp_distance(DType::f32, x, next), 1.0) << x;
  }
  // One float ULP at 1 is 2^29 double ULPs: the dtype decides the unit.
  EXPECT_EQ(ulp_distance(DType::f32, 1.0, 1.0 + 0x1p-23), 1.0);
  EXPECT_EQ(ulp_distance(DType::f64, 1.0, 1.0 + 0x1p-23), 0x1p29);
}

TEST(UlpDistance, InfinityAndNaN) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(ulp_distance(d, 1.0, kNaN), kInf);
    EXPECT_EQ(ulp_distance(d, kNaN, 1.0), kInf);
    EXPECT_EQ(ulp_distance(d, kNaN, kInf), kInf);
    EXPECT_EQ(ulp_distance(d, 1.0, kInf), kInf);
    EXPECT_EQ(ulp_distance(d, -kInf, kInf), kInf);
    EXPECT_EQ(ulp_distance(d, -kInf, 0.0), kInf);
  }
  EXPECT_EQ(ulp_distance(DType::f64, kMax, kInf), kInf);
  // Both NaN: the implementation treats two NaNs as agreeing (distance 0).
  EXPECT_EQ(ulp_distance(DType::f64, kNaN, -kNaN), 0.0);
}

// Raw bit patterns: size-scaled (tiny magnitudes, subnormals) or full width (any exponent, sign).
template <typename U>
rc::Gen<U> any_bits() {
  return rc::gen::oneOf(rc::gen::arbitrary<U>(), rc::gen::resize(100, rc::gen::arbitrary<U>()));
}

// Every finite double but the largest has an upper neighbour at distance exactly one.
RC_GTEST_PROP(UlpDistanceProp, NextafterIsOneUlpF64, ()) {
  const double x = std::bit_cast<double>(*any_bits<uint64_t>());
  RC_PRE(std::isfinite(x) && x != kMax);
  RC_ASSERT(ulp_distance(DType::f64, x, std::nextafter(x, kInf)) == 1.0);
  RC_ASSERT(ulp_distance(DType::f64, std::nextafter(x, kInf), x) == 1.0);
}

RC_GTEST_PROP(UlpDistanceProp, NextafterIsOneUlpF32, ()) {
  const float x = std::bit_cast<float>(*any_bits<uint32_t>());
  RC_PRE(std::isfinite(x) && x != std::numeric_limits<float>::max());
  RC_ASSERT(ulp_distance(DType::f32, x, std::nextafterf(x, INFINITY)) == 1.0);
}

TEST(RoundTo, F64IsIdentityF32RoundsToFloat) {
  EXPECT_EQ(round_to(DType::f64, 0.1), 0.1);
  EXPECT_EQ(round_to(DType::f32, 0.1), static_cast<double>(0.1f));
  EXPECT_NE(round_to(DType::f32, 0.1), 0.1);
  // Ties to even: 1 + 2^-24 lies halfway between 1 and 1 + 2^-23.
  EXPECT_EQ(round_to(DType::f32, 1.0 + 0x1p-24), 1.0);
  EXPECT_EQ(round_to(DType::f32, 1.0 + 0x1p-24 + 0x1p-40), 1.0 + 0x1p-23);
  EXPECT_EQ(round_to(DType::f32, 1e39), kInf);
  EXPECT_EQ(round_to(DType::f32, 1e-50), 0.0);
  EXPECT_TRUE(std::isnan(round_to(DType::f32, kNaN)));
}

TEST(Representable, ExactValuesOfTheFormat) {
  EXPECT_TRUE(representable(DType::f64, 0.1));
  EXPECT_FALSE(representable(DType::f32, 0.1));
  EXPECT_TRUE(representable(DType::f32, 0.5));
  EXPECT_TRUE(representable(DType::f32, static_cast<double>(0.1f)));
  EXPECT_TRUE(representable(DType::f32, -kInf));
  EXPECT_FALSE(representable(DType::f32, 1e39));
  EXPECT_FALSE(representable(DType::f32, 1.0 + 0x1p-30));
  EXPECT_TRUE(
      representable(DType::f32, static_cast<double>(std::numeric_limits<float>::denorm_min())));
  EXPECT_FALSE(representable(DType::f32, kDenormMin));
  EXPECT_TRUE(representable(DType::f64, kNaN));
}

TEST(DTypeNames, ParseAndNameRoundtrip) {
  for (DType d : kAllDTypes) {
    const auto parsed = parse_dtype(dtype_name(d));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(dtype_name(DType::f64), "f64");
  EXPECT_EQ(dtype_name(DType::f32), "f32");
  EXPECT_FALSE(parse_dtype("F64").has_value());
  EXPECT_FALSE(parse_dtype("float").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
  EXPECT_FALSE(parse_dtype("f8").has_value());
  EXPECT_EQ(dtype_name(DType::f16), "f16");
  EXPECT_EQ(dtype_name(DType::bf16), "bf16");
}

TEST(DTypeConstants, PrecisionAndRoundoff) {
  EXPECT_EQ(dtype_precision(DType::f64), 53);
  EXPECT_EQ(dtype_precision(DType::f32), 24);
  EXPECT_EQ(dtype_unit_roundoff(DType::f64), 0x1p-53);
  EXPECT_EQ(dtype_unit_roundoff(DType::f32), 0x1p-24);
  EXPECT_NEAR(dtype_max_digits(DType::f64), 15.95, 0.01);
  EXPECT_NEAR(dtype_max_digits(DType::f32), 7.22, 0.01);
  EXPECT_EQ(dtype_min_normal(DType::f64), 0x1p-1022);
  EXPECT_EQ(dtype_min_normal(DType::f32), 0x1p-126);
}

TEST(AvailableDigits, FullForNormalValues) {
  for (DType d : kAllDTypes) {
    const double full = dtype_max_digits(d);
    for (double v : {1.0, -1.0, 1e30, dtype_min_normal(d), -dtype_min_normal(d), kInf}) {
      EXPECT_EQ(available_digits(d, v), full) << dtype_name(d) << " " << v;
    }
  }
}

TEST(AvailableDigits, FewerForSubnormalsNoneForZero) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(available_digits(d, 0.0), 0.0);
    EXPECT_EQ(available_digits(d, -0.0), 0.0);
  }
  // f16 keeps 11 bits: two binades below the smallest normal, 9 bits are left.
  EXPECT_NEAR(available_digits(DType::f16, 0x1p-16), 9 * std::log10(2.0), 1e-9);
  EXPECT_EQ(available_digits(DType::bf16, 0x1p-140), 0.0);  // below bf16's 8 bits: none left
  for (DType d : {DType::f64, DType::f32}) {
    const double full = dtype_max_digits(d);
    const double sub = dtype_min_normal(d) / 1024;  // lost 10 bits
    EXPECT_NEAR(available_digits(d, sub), full - 10 * std::log10(2.0), 1e-9) << dtype_name(d);
    EXPECT_NEAR(available_digits(d, -sub), full - 10 * std::log10(2.0), 1e-9) << dtype_name(d);
    // Smaller subnormals carry fewer digits.
    EXPECT_LT(available_digits(d, sub / 16), available_digits(d, sub));
  }
  // The smallest subnormal carries one bit: about 0.3 digits, never negative.
  EXPECT_NEAR(available_digits(DType::f64, kDenormMin), 53 * std::log10(2.0) - 52 * std::log10(2.0),
              1e-9);
  EXPECT_NEAR(available_digits(DType::f32, 0x1p-149), std::log10(2.0), 1e-9);
  EXPECT_GE(available_digits(DType::f32, kDenormMin), 0.0);
}

}  // namespace
}  // namespace stabfuzz

namespace stabfuzz {
namespace {

TEST(UlpError, MeasuresInUnitsOfTheExactValuesSpacing) {
  EXPECT_EQ(ulp_error(DType::f64, std::nextafter(1.0, 2.0), 1.0), 1.0);
  EXPECT_EQ(ulp_error(DType::f64, 1.0, 1.0), 0.0);
  // A computed 0 for an exact -1.66e-5 in f32: one relative error of 1, i.e. 2^23 ulps of the
  // exact value, not the ~1e9 floats that lie between them.
  const double exact = -0x1.16p-16;
  EXPECT_EQ(ulp_error(DType::f32, 0.0, exact), 0x1.16p23);  // |exact| / 2^-39
  EXPECT_LT(ulp_error(DType::f32, 0.0, exact), ulp_distance(DType::f32, 0.0, exact) / 50);
  EXPECT_EQ(ulp_error(DType::f16, 1.0 + 0x1p-9, 1.0), 2.0);
  EXPECT_EQ(ulp_error(DType::f64, 0x1p-1073, 0.0), 2.0);  // exact 0: the smallest subnormal as unit
  EXPECT_TRUE(std::isinf(ulp_error(DType::f64, INFINITY, 1.0)));
  EXPECT_EQ(ulp_error(DType::f64, NAN, NAN), 0.0);
}

TEST(UlpError, AFiniteResultOfAnExactOverflowIsMeasuredFromTheOverflowStep) {
  // f16 l2_norm([16448, 63424]) = 65522.06 rounds to inf; 65504 is one step below it.
  EXPECT_EQ(ulp_error(DType::f16, 65504.0, INFINITY), 1.0);
  EXPECT_EQ(ulp_error(DType::f16, 65472.0, INFINITY), 2.0);
  EXPECT_EQ(ulp_error(DType::f64, -DBL_MAX, -INFINITY), 1.0);
  EXPECT_EQ(ulp_error(DType::f32, FLT_MAX, INFINITY), 1.0);
  EXPECT_TRUE(std::isinf(ulp_error(DType::f16, -65504.0, INFINITY)));  // the wrong sign
  // inf for an exact result that rounds to the largest finite value: the overflow step, 1 ulp.
  EXPECT_EQ(ulp_error(DType::f16, INFINITY, 65504.0), 1.0);
  EXPECT_EQ(ulp_error(DType::f64, -INFINITY, -DBL_MAX), 1.0);
  EXPECT_TRUE(std::isinf(ulp_error(DType::f16, INFINITY, 65472.0)));   // overflow of a finite
  EXPECT_TRUE(std::isinf(ulp_error(DType::f16, -INFINITY, 65504.0)));  // the wrong sign
}

}  // namespace
}  // namespace stabfuzz
