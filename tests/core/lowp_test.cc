// f16 and bf16: rounding to the format, neighbours, ordinals, Half arithmetic and Stoch<Half>.
#include "stabfuzz/lowp.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "oracles/mpfr_util.h"
#include "stabfuzz/dtype.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz {
namespace {

// The MPFR reference: precision p, the format's exponent range, mpfr_subnormalize.
double reference_round(double v, DType d) {
  oracle::Real x(53, v);
  return oracle::round_nearest(x, d);
}

TEST(LowPrecision, KnownF16Values) {
  EXPECT_EQ(round_to_format(kF16, 65504.0), 65504.0);       // largest finite
  EXPECT_EQ(round_to_format(kF16, 65519.0), 65504.0);       // below the overflow midpoint
  EXPECT_TRUE(std::isinf(round_to_format(kF16, 65520.0)));  // the midpoint rounds to even: inf
  EXPECT_EQ(round_to_format(kF16, 0x1p-24), 0x1p-24);       // smallest subnormal
  EXPECT_EQ(round_to_format(kF16, 0x1p-25), 0.0);           // half of it: ties to even (0)
  EXPECT_EQ(round_to_format(kF16, 0x1.8p-25), 0x1p-24);
  EXPECT_EQ(round_to_format(kF16, 1.0 + 0x1p-11), 1.0);  // tie to even
  EXPECT_EQ(round_to_format(kF16, 1.0 + 0x1.8p-11), 1.0 + 0x1p-10);
  EXPECT_EQ(round_to_format(kBF16, 1.0 + 0x1p-8), 1.0);
  EXPECT_DOUBLE_EQ(dtype_max_digits(DType::f16), -std::log10(0x1p-11));  // libm or folded: 1 ulp
}

RC_GTEST_PROP(LowPrecision, RoundingAgreesWithMpfr, (double v)) {
  for (DType d : {DType::f16, DType::bf16}) {
    const double scaled = std::ldexp(v, static_cast<int>(std::fmod(std::fabs(v) * 7, 40)) - 20);
    RC_ASSERT(round_to(d, scaled) == reference_round(scaled, d));
  }
}

RC_GTEST_PROP(LowPrecision, NeighboursDifferByOneOrdinal, (int e, unsigned m, bool negative)) {
  for (DType d : {DType::f16, DType::bf16}) {
    const Format& f = dtype_format(d);
    // A representable value anywhere in the range, subnormals included.
    const int span = f.emax - f.emin + f.p;
    const int exp =
        f.emin - f.p + 1 + static_cast<int>(static_cast<unsigned>(e) % static_cast<unsigned>(span));
    const double mant = 1.0 + static_cast<double>(m % (1u << (f.p - 1))) / (1u << (f.p - 1));
    const double r = round_to(d, (negative ? -1 : 1) * std::ldexp(mant, exp));
    RC_PRE(std::isfinite(r) && std::fabs(r) < f.max_finite());
    for (double dir : {1.0, -1.0}) {
      const double n = format_neighbour(f, r, dir);
      RC_ASSERT(round_to(d, n) == n);  // representable
      RC_ASSERT((dir > 0) == (n > r));
      RC_ASSERT(ulp_distance(d, r, n) == 1.0);
      // Nothing representable in between: the midpoint rounds to one of the two.
      const double mid = round_to(d, (r + n) / 2);
      RC_ASSERT(mid == r || mid == n);
    }
  }
}

TEST(LowPrecision, HalfArithmeticIsCorrectlyRounded) {
  const Half a(0.1), b(3.0);
  EXPECT_EQ(static_cast<double>(a), round_to(DType::f16, 0.1));
  EXPECT_EQ(static_cast<double>(a * b), round_to(DType::f16, static_cast<double>(a) * 3.0));
  EXPECT_EQ(static_cast<double>(Half(2048) + Half(1)), 2048.0);  // 2048 + 1 = 2048 in f16
  EXPECT_TRUE(std::isinf(static_cast<double>(Half(300) * Half(300))));
  EXPECT_EQ(static_cast<double>(exp(Half(1.0))), round_to(DType::f16, std::exp(1.0)));
  EXPECT_EQ(static_cast<double>(BFloat16(1.0) + BFloat16(0x1p-9)), 1.0);
}

TEST(LowPrecision, StochHalfSamplesBracketTheExactResult) {
  bool down = false, up = false;
  const double exact = 1.0 + 0x1p-12;  // between the f16 neighbours 1 and 1 + 2^-10
  for (uint64_t stream = 0; stream < 30; ++stream) {
    cestac::Run run(1, stream);
    Stoch<Half> x = Stoch<Half>(Half(1.0)) + Stoch<Half>(Half(0x1p-12));
    for (float s : x.s) {
      ASSERT_TRUE(s == 1.0f || s == static_cast<float>(1.0 + 0x1p-10)) << s;
      down |= s == 1.0f;
      up |= s != 1.0f;
    }
    EXPECT_LE(x.digits(), dtype_max_digits(DType::f16) + 1e-9);
  }
  EXPECT_TRUE(down && up);
  (void)exact;
}

TEST(LowPrecision, StochHalfReportsOverflowAtItsSite) {
  cestac::Run run(1, 1);
  Stoch<Half> big = Stoch<Half>(Half(300.0)) * Stoch<Half>(Half(300.0));
  EXPECT_TRUE(std::isinf(big.s[0]));
  EXPECT_EQ(run.log().counts[static_cast<int>(cestac::Kind::overflow)], 1u);
}

}  // namespace
}  // namespace stabfuzz
