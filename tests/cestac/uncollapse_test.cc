// The four-lane stochastic rounding to nearness and its uncollapse (detail::Simd4) against a
// lane-by-lane reference written from the definition: each lane rounds r + e stochastically with
// its uniform, and when every lane then holds one value while some lane was inexact, the first
// inexact lane from lane j on (j from the pool word) takes its exact value's other neighbour.
// Both of the engine's ways there (the branch-free one for results equal in every lane, the
// branch for the others) and the form that assumes every lane normal must give its lanes bit for
// bit, equal lanes of mixed exactness included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "stabfuzz/stoch.h"

namespace stabfuzz {
namespace {

template <class T>
using S4 = cestac::detail::Simd4<T>;
template <class T>
using V = typename S4<T>::V;

// The pool word of one operation (cestac::UniformPool): 1 + (k + 1/2) 2^-17 per lane; lane 0's
// two lowest bits of k name the lane uncollapse tries first.
template <class T>
V<T> pool_word(std::mt19937_64& g, uint32_t& first_lane) {
  V<T> x;
  uint32_t k0 = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t k = static_cast<uint32_t>(g() >> 47);  // 17 bits
    if (i == 0) k0 = k;
    x[i] = static_cast<T>(1 + (k + 0.5) * 0x1p-17);
  }
  first_lane = k0 & 3u;
  return x;
}

// The reference, lane by lane, from std::nextafter and the definition above.
template <class T>
V<T> reference(V<T> r, V<T> e, V<T> x, uint32_t j) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  V<T> out;
  bool all_equal = true, any_inexact = false;
  for (int i = 0; i < 4; ++i) {
    // r + e rounded stochastically: RN(r + v gap + e), v uniform in (-1/2, 1/2) (one rounding of
    // v gap + e: the fma).
    const T gap = std::nextafter(std::fabs(r[i]), kInf) - std::fabs(r[i]);
    out[i] = r[i] + std::fma(x[i] - T(1.5), gap, e[i]);
    all_equal &= out[i] == out[0];
    any_inexact |= e[i] != 0;
  }
  if (all_equal && any_inexact) {
    for (uint32_t k = 0; k < 4; ++k) {
      const uint32_t i = (j + k) & 3u;
      if (e[i] == 0) continue;
      const T n = std::nextafter(r[i], e[i] > 0 ? kInf : -kInf);
      out[i] = out[i] == r[i] ? n : r[i];
      break;
    }
  }
  return out;
}

// r: normal, not a power of two, lanes equal (half the cases) or a few ulps apart; e: per lane 0,
// half a gap or a fraction of it, of either sign, so that equal lanes are often of mixed exactness.
template <class T>
void check(uint64_t seed, int cases) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  int equal_mixed = 0, checked = 0;
  for (int c = 0; c < cases; ++c) {
    T base = static_cast<T>(std::ldexp(1 + unit(g), static_cast<int>(g() % 41) - 20));
    if (g() & 1) base = -base;
    V<T> r, e;
    const bool equal = g() & 1;
    for (int i = 0; i < 4; ++i) {
      r[i] = base;
      for (int s = equal ? 0 : static_cast<int>(g() % 3); s > 0; --s)
        r[i] = std::nextafter(r[i], std::numeric_limits<T>::infinity());
      const T gap =
          std::nextafter(std::fabs(r[i]), std::numeric_limits<T>::infinity()) - std::fabs(r[i]);
      const int kind = static_cast<int>(g() % 4);
      const T f = kind == 0   ? T(0)
                  : kind == 1 ? T(0.5)
                              : static_cast<T>(std::ldexp(static_cast<double>(g() % 4096), -13));
      e[i] = (g() & 1 ? f : -f) * gap;
    }
    bool normal = true, mixed = false;
    for (int i = 0; i < 4; ++i) {
      normal &= std::isnormal(r[i]) && std::fabs(r[i]) != std::ldexp(T(1), std::ilogb(r[i]));
      mixed |= (e[i] == 0) != (e[0] == 0);
    }
    if (!normal) continue;
    uint32_t j = 0;
    const V<T> x = pool_word<T>(g, j);
    const V<T> want = reference<T>(r, e, x, j);
    const V<T> fast = S4<T>::sr_round_assume_normal(r, e, x);
    const V<T> full = S4<T>::sr_round_uncollapsed(r, e, x - T(1.5), j);
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(std::bit_cast<typename S4<T>::I>(fast[i]),
                std::bit_cast<typename S4<T>::I>(want[i]))
          << "case " << c << " lane " << i << " r " << r[i] << " e " << e[i] << " j " << j;
      ASSERT_EQ(std::bit_cast<typename S4<T>::I>(full[i]),
                std::bit_cast<typename S4<T>::I>(want[i]))
          << "case " << c << " lane " << i;
    }
    ++checked;
    equal_mixed += equal && mixed;
  }
  // The cases this test is for occurred, many times over.
  EXPECT_GT(checked, cases / 2);
  EXPECT_GT(equal_mixed, cases / 8);
}

TEST(Uncollapse, FourLanesAgreeWithTheLaneByLaneDefinitionInDouble) { check<double>(1, 200000); }
TEST(Uncollapse, FourLanesAgreeWithTheLaneByLaneDefinitionInFloat) { check<float>(2, 200000); }

// Simd4::add_err (Fast2Sum on operands ordered by magnitude under AVX-512, 2Sum elsewhere)
// against the 2Sum of the definition: the same error, bit for bit, wherever the sum is finite and
// the error nonzero (a zero error may differ in sign), and `mag` = max(|a|, |b|). Operands of
// every exponent, equal magnitudes of either sign (where an ordering that picks one operand twice
// gives 2a), zeros and subnormals.
template <class T>
void check_add_err(uint64_t seed, int cases) {
  using I = typename S4<T>::I;
  std::mt19937_64 g(seed);
  constexpr int kMaxExp = std::numeric_limits<T>::max_exponent;
  auto draw = [&]() {
    T v;
    switch (g() % 5) {
      case 0:  // any bit pattern
        v = std::bit_cast<T>(static_cast<I>(g()));
        break;
      case 1:  // small integers, zeros included
        v = static_cast<T>(static_cast<int>(g() % 7) - 3);
        break;
      default:  // a random significand at any exponent
        v = static_cast<T>(std::ldexp(static_cast<double>(g() >> 11) * 0x1p-53,
                                      static_cast<int>(g() % (2 * kMaxExp + 60)) - kMaxExp - 60));
    }
    return (g() & 1) ? -v : v;
  };
  int ties = 0, checked = 0;
  for (int c = 0; c < cases; ++c) {
    V<T> a, b;
    for (int i = 0; i < 4; ++i) {
      a[i] = draw();
      b[i] = g() % 5 == 0 ? ((g() & 1) ? -a[i] : a[i]) : draw();
    }
    const V<T> s = a + b;
    V<T> mag;
    const V<T> e = S4<T>::add_err(a, b, s, mag);
    for (int i = 0; i < 4; ++i) {
      if (!std::isfinite(s[i])) continue;
      const T bb = s[i] - a[i], want = (a[i] - (s[i] - bb)) + (b[i] - bb);
      if (want == 0) {
        ASSERT_EQ(e[i], 0) << "a " << a[i] << " b " << b[i];
      } else {
        ASSERT_EQ(std::bit_cast<I>(e[i]), std::bit_cast<I>(want)) << "a " << a[i] << " b " << b[i];
      }
      ASSERT_EQ(mag[i], std::fmax(std::fabs(a[i]), std::fabs(b[i])));
      ++checked;
      ties += std::fabs(a[i]) == std::fabs(b[i]) && a[i] != 0;
    }
  }
  EXPECT_GT(checked, cases * 2);
  EXPECT_GT(ties, cases / 10);
}

TEST(AddErr, IsTwoSumsErrorInDouble) { check_add_err<double>(3, 500000); }
TEST(AddErr, IsTwoSumsErrorInFloat) { check_add_err<float>(4, 500000); }

}  // namespace
}  // namespace stabfuzz
