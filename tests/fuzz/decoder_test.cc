// The byte decoder (harness/fuzz/decoder.cc): deterministic, always valid inputs, edits that
// move values.
#include "harness/fuzz/decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "stabfuzz/entropy.h"

namespace stabfuzz::fuzz {
namespace {

std::vector<uint8_t> random_bytes(SeededEntropy& e, size_t n) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = static_cast<uint8_t>(e.next_u64());
  return b;
}

bool same_input(const Input& a, const Input& b) {
  if (a.dtype != b.dtype || a.args.size() != b.args.size() || a.params != b.params) return false;
  for (size_t k = 0; k < a.args.size(); ++k) {
    const auto& x = a.args[k];
    const auto& y = b.args[k];
    if (x.shape != y.shape || x.values.size() != y.values.size()) return false;
    if (!x.values.empty() &&
        std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(double)))
      return false;
  }
  return true;
}

std::vector<DType> all_dtypes() { return {DType::f64, DType::f32, DType::f16, DType::bf16}; }

TEST(Decoder, SameBytesSameInput) {
  SeededEntropy e(7, 1);
  for (const auto& f : default_registry().families()) {
    for (int k = 0; k < 4; ++k) {
      const auto bytes = random_bytes(e, 10 + e.below(200));
      const Decoded a = decode(f, all_dtypes(), bytes.data(), bytes.size());
      const Decoded b = decode(f, all_dtypes(), bytes.data(), bytes.size());
      EXPECT_TRUE(same_input(a.input, b.input)) << f.name;
      EXPECT_EQ(a.regime, b.regime);
      EXPECT_EQ(a.edits_applied, b.edits_applied);
    }
  }
}

TEST(Decoder, EveryByteStringGivesAValidFiniteInput) {
  SeededEntropy e(11, 2);
  size_t applied = 0, dropped = 0;
  for (const auto& f : default_registry().families()) {
    for (int k = 0; k < 12; ++k) {
      // Short strings (header only, even empty) and long tails of edits.
      const auto bytes = random_bytes(e, k < 3 ? static_cast<size_t>(k) * 4 : 10 + e.below(400));
      const Decoded d = decode(f, all_dtypes(), bytes.data(), bytes.size());
      ASSERT_TRUE(d.valid) << f.name << ": " << d.reject;
      EXPECT_FALSE(f.validate(d.input)) << f.name;
      for (const auto& t : d.input.args)
        for (double v : t.values) {
          EXPECT_EQ(round_to(d.input.dtype, v), v) << f.name << " value not exact in its dtype";
        }
      applied += d.edits_applied;
      dropped += d.edits_dropped;
    }
  }
  EXPECT_GT(applied, 100u);  // the tail really moves values
  EXPECT_GT(dropped, 0u);    // and out-of-domain edits are undone
}

TEST(Decoder, HeaderPicksDtypeRegimeAndSeed) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  const std::vector<DType> dts = {DType::f32, DType::f16};
  for (size_t r = 0; r < f->regimes.size(); ++r) {
    const auto b = header_bytes(1, r, 99);
    const Decoded d = decode(*f, dts, b.data(), b.size());
    EXPECT_EQ(d.regime, r);
    EXPECT_EQ(d.input.dtype, DType::f16);
    EXPECT_EQ(d.edits_applied + d.edits_dropped, 0u);
  }
  const auto a = header_bytes(0, 0, 1), b = header_bytes(0, 0, 2);
  EXPECT_FALSE(same_input(decode(*f, dts, a.data(), a.size()).input,
                          decode(*f, dts, b.data(), b.size()).input));
}

TEST(Decoder, RawBitPatternEditSetsTheValue) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  auto b = header_bytes(0, 0, 5);
  const double target = 88.5;  // an f32 value: op 0 (raw bits) at position 0
  uint32_t bits;
  const float tf = static_cast<float>(target);
  std::memcpy(&bits, &tf, 4);
  b.insert(b.end(), {0, 0, 0});
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  const Decoded d = decode(*f, {DType::f32}, b.data(), b.size());
  ASSERT_TRUE(d.valid);
  EXPECT_EQ(d.input.args[0].values[0], target);
  EXPECT_EQ(d.edits_applied, 1u);
}

TEST(Decoder, UniformBaseKeepsShapesWithSmallValues) {
  const Family* f = default_registry().find_family("softmax");
  ASSERT_NE(f, nullptr);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto b = header_bytes(0, seed % f->regimes.size(), seed);
    const Decoded r = decode(*f, {DType::f64}, b.data(), b.size(), Base::regimes);
    const Decoded u = decode(*f, {DType::f64}, b.data(), b.size(), Base::uniform);
    ASSERT_TRUE(u.valid);
    ASSERT_EQ(u.input.args.size(), r.input.args.size());
    EXPECT_EQ(u.input.args[0].shape, r.input.args[0].shape);
    for (double v : u.input.args[0].values) {
      EXPECT_GE(v, -1.0);
      EXPECT_LE(v, 1.0);
    }
  }
}

TEST(Decoder, FromBits) {
  EXPECT_EQ(from_bits(DType::f16, 0x3c00), 1.0);
  EXPECT_EQ(from_bits(DType::f16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(from_bits(DType::f16, 0xc000), -2.0);
  EXPECT_TRUE(std::isinf(from_bits(DType::f16, 0x7c00)));
  EXPECT_EQ(from_bits(DType::bf16, 0x3f80), 1.0);
  EXPECT_EQ(from_bits(DType::f32, 0x40490fdb), static_cast<double>(3.14159274f));
}

}  // namespace
}  // namespace stabfuzz::fuzz
