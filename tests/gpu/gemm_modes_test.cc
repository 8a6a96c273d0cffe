// The cuBLAS modes' host logic on the CPU (targets/cublas/gemm_modes.h): f16/bf16 bits, the
// shape check, TF32 rounding, and the emulation the GPU tests hold cuBLAS to: its bound contains
// every accumulation order and rounding direction simulated here, and on the probe operands the
// GPU tests use, the modes' emulations are apart by more than their bounds.
#include "targets/cublas/gemm_modes.h"

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "stabfuzz/lowp.h"

namespace stabfuzz::cublas {
namespace {

TEST(GemmModes, Float16BitsRoundTrip) {
  for (unsigned b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<unsigned short>(b);
    const double v = f16_value(h);
    if (std::isnan(v)) continue;
    ASSERT_EQ(f16_bits(v), h) << b;
    const double w = bf16_value(h);
    if (!std::isnan(w)) ASSERT_EQ(bf16_bits(w), h) << b;
  }
}

std::string shape_error(size_t as, size_t bs, size_t m, size_t k, size_t n) {
  try {
    check_gemm_shape(as, bs, m, k, n);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GemmModes, ShapesOverCublasIntsAreInvalidArguments) {
  EXPECT_EQ(shape_error(6, 12, 2, 3, 4), "");
  EXPECT_NE(shape_error(6, 11, 2, 3, 4), "");
  EXPECT_NE(shape_error(0, 0, 0, 3, 4), "");
  const size_t big = size_t{INT_MAX} + 1;
  for (const auto& [m, k, n] : {std::array<size_t, 3>{big, 1, 1}, {1, big, 1}, {1, 1, big}})
    EXPECT_NE(shape_error(m * k, k * n, m, k, n).find("int"), std::string::npos) << m << k << n;
  EXPECT_EQ(shape_error(size_t{INT_MAX}, 1, size_t{INT_MAX}, 1, 1), "");
}

TEST(GemmModes, Tf32KeepsTenFractionBits) {
  using R = Tf32Rounding;
  const double u = std::ldexp(1.0, -10);  // TF32's last place at 1
  for (R r : {R::nearest_away, R::truncate}) {
    EXPECT_EQ(to_tf32(1.0, r), 1.0);
    EXPECT_EQ(to_tf32(1 + u, r), 1 + u);
    EXPECT_EQ(to_tf32(1 + u / 4, r), 1.0);
    EXPECT_EQ(to_tf32(0.0, r), 0.0);
  }
  EXPECT_EQ(to_tf32(1024.5, R::nearest_away), 1025);  // a tie: away from zero
  EXPECT_EQ(to_tf32(1024.5, R::truncate), 1024);
  EXPECT_EQ(to_tf32(-(1 + u / 2), R::nearest_away), -(1 + u));
  EXPECT_EQ(to_tf32(-(1 + u / 2), R::truncate), -1.0);
  EXPECT_EQ(to_tf32(1 + u / 2 + std::ldexp(1.0, -23), R::truncate), 1.0);
  EXPECT_TRUE(std::isinf(to_tf32(3.4028234663852886e38, R::nearest_away)));
  std::mt19937 g(3);
  std::uniform_int_distribution<uint32_t> bits(0, 0xff7fffffu);
  for (int i = 0; i < 100000; ++i) {
    uint32_t w = bits(g) & 0x7fffffffu;
    float f;
    std::memcpy(&f, &w, 4);
    if (std::isnan(f) || std::isinf(f) || std::fabs(f) > 3e38f) continue;
    const double v = (i & 1) ? -double(f) : double(f);
    const double q = format_quantum(Format{11, -126, 127}, v);
    const double n = to_tf32(v, R::nearest_away), t = to_tf32(v, R::truncate);
    ASSERT_LE(std::fabs(n - v), q / 2) << v;
    ASSERT_LT(std::fabs(t - v), q) << v;
    ASSERT_LE(std::fabs(t), std::fabs(v)) << v;
    ASSERT_EQ(to_tf32(n, R::truncate), n) << v;  // a TF32 value: nothing left to drop
    ASSERT_EQ(to_tf32(t, R::nearest_away), t) << v;
  }
}

TEST(GemmModes, SmallIntegersAreExactInEveryMode) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};  // [2,3] x [3,2]
  const std::vector<double> want = {58, 64, 139, 154};
  for (Mode m : kAllModes) {
    const Emulated e = emulate_gemm(m, a, b, 2, 3, 2);
    EXPECT_EQ(e.value, want) << mode_name(m);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LT(e.bound[i], want[i] * (m == Mode::f16_f16acc ? 0.02 : 0.01)) << mode_name(m);
  }
}

// Rounding to a format toward zero (truncation), with subnormals.
double toward_zero(const Format& f, double v) {
  if (!std::isfinite(v) || v == 0) return v;
  const double q = format_quantum(f, v);
  return std::trunc(v / q) * q;
}

// C = A B as hardware might compute it: products (exact, or rounded to the accumulator for
// f16_f16acc) summed in `order` with each sum rounded by `rnd` to the accumulator, the result
// rounded to the output format by `rnd`.
using Round = std::function<double(const Format&, double)>;
enum class Order { sequential, pairwise, blocks_of_16 };
std::vector<double> simulate(Mode mode, const std::vector<double>& a, const std::vector<double>& b,
                             size_t m, size_t k, size_t n, Order order, const Round& rnd) {
  const Format acc = mode == Mode::f16_f16acc ? kF16 : kF32;
  const Format out = mode == Mode::f32 || mode == Mode::tf32 ? kF32
                     : mode == Mode::bf16                    ? kBF16
                                                             : kF16;
  std::vector<double> c(m * n);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      std::vector<double> p(k);
      for (size_t l = 0; l < k; ++l) {
        double x = a[i * k + l], y = b[l * n + j];
        if (mode == Mode::tf32)
          x = to_tf32(x, Tf32Rounding::truncate), y = to_tf32(y, Tf32Rounding::truncate);
        p[l] = rnd(acc, x * y);
      }
      double s = 0;
      if (order == Order::sequential) {
        for (double x : p) s = rnd(acc, s + x);
      } else if (order == Order::pairwise) {
        while (p.size() > 1) {
          std::vector<double> q;
          for (size_t l = 0; l + 1 < p.size(); l += 2) q.push_back(rnd(acc, p[l] + p[l + 1]));
          if (p.size() % 2) q.push_back(p.back());
          p = q;
        }
        s = p[0];
      } else {  // each block of 16 products summed exactly, then added (tensor-core like)
        for (size_t l = 0; l < k; l += 16) {
          long double blk = 0;
          for (size_t t = l; t < l + 16 && t < k; ++t) blk += p[t];
          s = rnd(acc, s + static_cast<double>(blk));
        }
      }
      c[i * n + j] = rnd(out, s);
    }
  return c;
}

TEST(GemmModes, BoundHoldsForEveryOrderAndRoundingSimulated) {
  std::mt19937_64 g(11);
  std::normal_distribution<double> d(0, 1);
  const Round nearest = [](const Format& f, double v) { return round_to_format(f, v); };
  const Round truncating = toward_zero;
  for (Mode mode : kAllModes)
    for (size_t k : {1, 7, 64, 300}) {
      const size_t m = 3, n = 4;
      const Format in = mode == Mode::bf16                          ? kBF16
                        : (mode == Mode::f32 || mode == Mode::tf32) ? kF32
                                                                    : kF16;
      std::vector<double> a(m * k), b(k * n);
      for (auto& v : a) v = round_to_format(in, d(g) * std::exp2(std::floor(d(g))));
      for (auto& v : b) v = round_to_format(in, d(g));
      // tf32 truncates in the simulation (emulation: truncate too); other modes ignore it.
      const Emulated e = emulate_gemm(mode, a, b, m, k, n, Tf32Rounding::truncate);
      for (Order o : {Order::sequential, Order::pairwise, Order::blocks_of_16})
        for (const Round* r : {&nearest, &truncating}) {
          const auto c = simulate(mode, a, b, m, k, n, o, *r);
          for (size_t i = 0; i < c.size(); ++i)
            ASSERT_LE(std::fabs(c[i] - e.value[i]), e.bound[i])
                << mode_name(mode) << " k " << k << " order " << int(o) << " output " << i;
        }
    }
}

// The GPU tests' premises, on their very shapes and operands.
TEST(GemmModes, Tf32ProbeSeparatesTf32FromF32AndNearestFromTruncation) {
  const size_t s = 256;  // m = k = n: a shape cuBLAS runs on tensor cores
  const auto a = tf32_probe(s * s, 1, true), b = tf32_probe(s * s, 2, true);
  const auto f32 = emulate_gemm(Mode::f32, a, b, s, s, s);
  const auto near = emulate_gemm(Mode::tf32, a, b, s, s, s, Tf32Rounding::nearest_away);
  const auto trunc = emulate_gemm(Mode::tf32, a, b, s, s, s, Tf32Rounding::truncate);
  EXPECT_EQ(near.value, trunc.value);  // below half: both round down by the same amount
  for (size_t i = 0; i < s * s; ++i)
    ASSERT_GT(f32.value[i] - near.value[i], 2 * (f32.bound[i] + near.bound[i])) << i;
  const auto c = tf32_probe(s * s, 3, false), d = tf32_probe(s * s, 4, false);
  const auto up = emulate_gemm(Mode::tf32, c, d, s, s, s, Tf32Rounding::nearest_away);
  const auto down = emulate_gemm(Mode::tf32, c, d, s, s, s, Tf32Rounding::truncate);
  for (size_t i = 0; i < s * s; ++i)
    ASSERT_GT(up.value[i] - down.value[i], 2 * (up.bound[i] + down.bound[i])) << i;
}

TEST(GemmModes, HalfProbesStayWithinTightBoundsForF32Accumulation) {
  // The random f16/bf16 probes at k = 1024: f32 accumulation is held to about one unit in the
  // last place of the 16-bit output.
  const size_t m = 16, k = 1024, n = 16;
  for (bool bf16 : {false, true}) {
    const auto a = half_probe(m * k, 5, bf16), b = half_probe(k * n, 6, bf16);
    const Mode mode = bf16 ? Mode::bf16 : Mode::f16_f32acc;
    const Format out = bf16 ? kBF16 : kF16;
    const auto e = emulate_gemm(mode, a, b, m, k, n);
    for (size_t i = 0; i < e.value.size(); ++i)
      ASSERT_LE(e.bound[i], 1.5 * format_quantum(out, e.value[i])) << i;
  }
}

TEST(GemmModes, StagnationProbeShowsF16Accumulation) {
  const size_t m = 2, k = kF16StagnationK, n = 3;
  const std::vector<double> a(m * k, 1.0), b(k * n, kF16StagnationB);
  const auto e = emulate_gemm(Mode::f16_f32acc, a, b, m, k, n);
  const auto h = emulate_gemm(Mode::f16_f16acc, a, b, m, k, n);
  EXPECT_EQ(e.value[0], 2062);
  EXPECT_LT(e.bound[0], 3.1);           // 2059 .. 2065: f16 values 2060, 2062, 2064
  EXPECT_TRUE(std::isinf(h.bound[0]));  // gamma(2k) at f16: no bound for k = 2048
  const Round nearest = [](const Format& f, double v) { return round_to_format(f, v); };
  const Round truncating = toward_zero;
  for (Order o : {Order::sequential, Order::blocks_of_16, Order::pairwise})
    for (const Round* r : {&nearest, &truncating}) {
      const auto c = simulate(Mode::f16_f16acc, a, b, m, k, n, o, *r);
      std::printf("f16 accumulation, order %d, %s: %.0f\n", int(o),
                  r == &nearest ? "nearest" : "truncation", c[0]);
      if (o != Order::pairwise) EXPECT_LT(c[0], e.value[0] - e.bound[0]) << "order " << int(o);
      const auto f = simulate(Mode::f16_f32acc, a, b, m, k, n, o, *r);
      EXPECT_LE(std::fabs(f[0] - e.value[0]), e.bound[0]) << "order " << int(o);
    }
}

}  // namespace
}  // namespace stabfuzz::cublas
