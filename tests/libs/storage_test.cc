// Storage conversions of the library targets: every f16 and bf16 bit pattern round-trips exactly,
// and decodes to the value stabfuzz's formats hold (oneDNN's bf16/f16 paths depend on them on CPUs
// whose oneDNN builds those primitives, which this test does not need).
#include "libs/storage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace stabfuzz::libs {
namespace {

TEST(Storage, EveryF16PatternRoundTripsExactly) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const double v = from_f16_bits(h);
    if (std::isnan(v)) {
      EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << b;
      continue;
    }
    EXPECT_EQ(to_f16_bits(v), h) << std::hex << b << " " << v;
    EXPECT_TRUE(representable(DType::f16, v)) << std::hex << b << " " << v;
  }
  EXPECT_EQ(from_f16_bits(0x3c00), 1.0);
  EXPECT_EQ(from_f16_bits(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(from_f16_bits(0x7bff), 65504.0);
  EXPECT_EQ(from_f16_bits(0xfc00), -INFINITY);
}

TEST(Storage, EveryBf16PatternRoundTripsExactly) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const double v = from_bf16_bits(h);
    if (std::isnan(v)) continue;
    EXPECT_EQ(to_bf16_bits(v), h) << std::hex << b << " " << v;
    EXPECT_TRUE(representable(DType::bf16, v)) << std::hex << b << " " << v;
  }
  EXPECT_EQ(from_bf16_bits(0x3f80), 1.0);
  EXPECT_EQ(from_bf16_bits(0xc040), -3.0);
}

TEST(Storage, BuffersEncodeAndDecodeEachDtype) {
  const std::vector<double> v = {1.5, -0.0, 65504, std::ldexp(1.0, -24), -INFINITY};
  for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    std::vector<double> in;
    for (double x : v)
      if (representable(d, x) || std::isinf(x)) in.push_back(x);
    const Buffer b = encode(d, in);
    EXPECT_EQ(b.size(), in.size());
    const auto out = decode(b);
    ASSERT_EQ(out.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(out[i], in[i]) << dtype_name(d) << " " << i;
      EXPECT_EQ(std::signbit(out[i]), std::signbit(in[i])) << dtype_name(d) << " " << i;
    }
  }
}

TEST(Storage, ParametersAreRoundedToTheDtype) {
  Input in;
  in.dtype = DType::bf16;
  in.params = {{"eps", 1e-5}};
  EXPECT_EQ(dtype_param(in, "eps", 0), round_to(DType::bf16, 1e-5));
  EXPECT_NE(dtype_param(in, "eps", 0), 1e-5);
  EXPECT_EQ(dtype_param(in, "absent", 0.25), 0.25);
}

}  // namespace
}  // namespace stabfuzz::libs
