// The two roundings of Stoch side by side: stochastic rounding to nearness (the default) moves a
// sample with the probability of its distance and does not drift on a repeated rounded-off
// fraction; CADNA's up-or-down rounding (Rounding::updown) rounds two lanes each way and refills
// its pattern bits on the slow path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "stabfuzz/stoch.h"
#include "targets/cpu/reduce.h"

namespace stabfuzz {
namespace {

using D = Stoch<double>;
using F = Stoch<float>;
using UD = Stoch<double, 3, cestac::Rounding::updown>;
using UF = Stoch<float, 3, cestac::Rounding::updown>;
cestac::Config updown() {
  cestac::Config c;
  c.rounding = cestac::Rounding::updown;
  return c;
}

TEST(Rounding, UpdownCatastrophicCancellationInFloatLeavesNoDigits) {
  // The same under CADNA's rounding: two lanes up and two down at every operation.
  int zero = 0, lane0_up = 0;
  for (uint64_t stream = 0; stream < 200; ++stream) {
    cestac::Run run(7, stream, updown());
    UF x = (UF(1e8f) + UF(1.0f)) - UF(1e8f);
    zero += x.digits() == 0.0;
    lane0_up += x.s[0] == 8.0f;
  }
  EXPECT_EQ(zero, 200);
  EXPECT_GE(lane0_up, 70);
  EXPECT_LE(lane0_up, 130);
}

TEST(Rounding, NearnessMovesWithTheProbabilityOfTheDistance) {
  // 1/3 in double lies a fraction f of the way from RD(1/3) to RU(1/3): each lane holds RU with
  // probability f, and uncollapse (one random lane of an all-equal result moves) adds
  // ((1 - f)^4 - f^4) / 4. Against CADNA's 1/2, whatever f is.
  const long double third = 1.0L / 3.0L;
  const double nearest = 1.0 / 3.0;
  const double down = nearest > third ? std::nextafter(nearest, 0.0) : nearest;
  const double up = std::nextafter(down, 1.0);
  const double f = static_cast<double>((third - down) / (static_cast<long double>(up) - down));
  const double expect = f + (std::pow(1 - f, 4) - std::pow(f, 4)) / 4;
  const int kStreams = 4000;
  int ups = 0;
  for (uint64_t stream = 0; stream < kStreams; ++stream) {
    cestac::Run run(5, stream);
    const D x = D(1.0) / D(3.0);
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(x.s[i] == down || x.s[i] == up);
      ups += x.s[i] == up;
    }
  }
  const double n = 4.0 * kStreams, p = ups / n;
  EXPECT_NEAR(p, expect, 5 * std::sqrt(expect * (1 - expect) / n)) << "f = " << f;
}

TEST(Rounding, NearnessDoesNotDriftOnARepeatedFraction) {
  // 10000 additions of 0.1f to 1e6f (ulp 1/16): the rounded-off fractions cycle through 0, 0.2,
  // 0.4, 0.6 and 0.8 ulp, so rounding up or down with probability 1/2 drifts all samples together
  // by 0.1 ulp per addition on average (62 in all); stochastic rounding to nearness keeps every
  // sample's expectation exact, within a standard deviation of at most sqrt(10000 / 4) = 50 ulps
  // (3.1): 5 of them is the bound.
  for (uint64_t stream = 0; stream < 20; ++stream) {
    cestac::Run run(3, stream);
    F acc(1e6f);
    for (int k = 0; k < 10000; ++k) acc += F(0.1f);
    const double exact = 1e6 + 10000 * static_cast<double>(0.1f);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(acc.s[i], exact, 5 * 50 * 0.0625) << "lane " << i;
  }
}

TEST(Rounding, UpdownRoundsTwoLanesUpAndTwoDown) {
  // 1/3 is inexact: two of the four lanes hold RU(1/3), two RD(1/3), in a pattern that varies.
  int lane_up[4] = {};
  for (uint64_t stream = 0; stream < 400; ++stream) {
    cestac::Run run(5, stream, updown());
    const UD x = UD(1.0) / UD(3.0);
    int up = 0;
    for (int i = 0; i < 4; ++i) {
      const bool u = x.s[i] > 1.0 / 3.0;
      up += u;
      lane_up[i] += u;
    }
    EXPECT_EQ(up, 2);
  }
  for (int i = 0; i < 4; ++i) {  // each lane rounds up with probability 1/2
    EXPECT_GE(lane_up[i], 150);
    EXPECT_LE(lane_up[i], 250);
  }
}

TEST(Rounding, UpdownRoundingBitsAreRefilledOnTheSlowPath) {
  // +, x and / take their rounding pattern with no inline refill; the slow path they branch to
  // refills the bits. 3000 divisions in a row (63 bits last 21 operations) must each still round
  // two lanes up and two down, in patterns that keep changing, and replay from the seed.
  auto patterns = [](uint64_t seed) {
    cestac::Run run(seed, 0, updown());
    std::vector<int> p;
    for (int k = 0; k < 3000; ++k) {
      const UD x = UD(1.0) / UD(3.0);
      int bits = 0, up = 0;
      for (int i = 0; i < 4; ++i) {
        bits |= (x.s[i] > 1.0 / 3.0) << i;
        up += x.s[i] > 1.0 / 3.0;
      }
      EXPECT_EQ(up, 2);
      p.push_back(bits);
    }
    return p;
  };
  const std::vector<int> a = patterns(11), b = patterns(11), c = patterns(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  int counts[16] = {};
  for (int v : a) ++counts[v];
  for (int v : {3, 5, 6, 9, 10, 12}) EXPECT_GE(counts[v], 250);  // 1/8 or 1/4 of 3000 each
}

// pow2_exponent of an exact Stoch skips its exact scalings and advances the random stream as they
// would (cestac::skip_exact_operations): the same k as the scalings give, and the same samples from
// 300 later inexact operations (three refills of the uniform pool) as after running the scalings,
// in both rounding modes (up-or-down runs them).
template <class S>
std::vector<double> after_exponent(double m, bool skip, long* k) {
  cestac::Config c;
  c.rounding = S::kRounding;
  cestac::Run run(7, 3, c);
  uint64_t steps = 0;
  *k = skip ? targets::reduce_detail::pow2_exponent(S(m))
            : targets::reduce_detail::pow2_exponent_by_steps(S(m), &steps);
  S x = S(1) / S(3);
  for (int i = 0; i < 150; ++i) x = x * S(1.1) + S(0.1);
  return {x.sample(0), x.sample(1), x.sample(2), x.sample(3)};
}
template <class S>
void expect_skip_matches_scalings(std::initializer_list<double> ms) {
  for (double m : ms) {
    long k_skip, k_loop;
    const auto skipped = after_exponent<S>(m, true, &k_skip);
    const auto looped = after_exponent<S>(m, false, &k_loop);
    EXPECT_EQ(k_skip, k_loop) << m;
    EXPECT_EQ(k_skip, -std::ilogb(m)) << m;
    EXPECT_EQ(skipped, looped) << m;
  }
}
TEST(SkipExactOperations, Pow2ExponentLeavesTheRandomStreamAsTheScalingsWould) {
  expect_skip_matches_scalings<D>(
      {1.0, 0.75, 3.0, 12345.678, 1e-300, 1e300, 0x1p511, 0x1p-511, 4.9e-324, 1.7e308});
  expect_skip_matches_scalings<F>({1.0, 0.75, 3.0, 12345.678f, 1e-30f, 1e30f, 1.4e-45f, 3.4e38f});
  expect_skip_matches_scalings<UD>({1.0, 0.75, 1e300, 4.9e-324});
  expect_skip_matches_scalings<UF>({1.0, 1e30f, 1.4e-45f});
}

}  // namespace
}  // namespace stabfuzz
