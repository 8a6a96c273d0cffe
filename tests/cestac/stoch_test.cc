// Stoch<T, N>: random rounding, digits, each instability kind with its clean twin, sites, replay.
#include "stabfuzz/stoch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpfr.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace stabfuzz {
namespace {

using cestac::Kind;
using D = Stoch<double>;
using F = Stoch<float>;
uint64_t count(const cestac::Log& log, Kind k) { return log.counts[static_cast<int>(k)]; }

// Three chosen samples; the vector's fourth lane (also a sample) repeats the first.
template <class T>
Stoch<T> samples(T a, T b, T c) {
  Stoch<T> x;
  x.s[0] = a;
  x.s[1] = b;
  x.s[2] = c;
  x.s[3] = a;
  return x;
}

// Directed roundings of one operation, by MPFR at 53 bits (exact, no FPU mode involved).
struct Directed {
  double down, up;
};
Directed directed(char op, double a, double b) {
  double r[2];
  const mpfr_rnd_t modes[2] = {MPFR_RNDD, MPFR_RNDU};
  mpfr_t x, y, z;
  mpfr_inits2(53, x, y, z, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  for (int m = 0; m < 2; ++m) {
    switch (op) {
      case '+':
        mpfr_add(z, x, y, modes[m]);
        break;
      case '*':
        mpfr_mul(z, x, y, modes[m]);
        break;
      case '/':
        mpfr_div(z, x, y, modes[m]);
        break;
      default:
        mpfr_sqrt(z, x, modes[m]);
        break;
    }
    r[m] = mpfr_get_d(z, MPFR_RNDN);
  }
  mpfr_clears(x, y, z, static_cast<mpfr_ptr>(nullptr));
  return {r[0], r[1]};
}

TEST(Stoch, ExactOperationsKeepAllDigits) {
  cestac::Run run(1, 1);
  D x = (D(1.5) + D(2.25)) * D(4.0) / D(2.0) - D(0.5);
  EXPECT_EQ(x.s[0], 7.0);
  EXPECT_EQ(x.s[1], 7.0);
  EXPECT_EQ(x.s[2], 7.0);
  EXPECT_NEAR(x.digits(), 15.95, 0.01);
  EXPECT_EQ(run.log().total(), 0u);
}

TEST(Stoch, CatastrophicCancellationInFloatLeavesNoDigits) {
  // (1e8 + 1) - 1e8 in f32: the spacing at 1e8 is 8, so the 1 is pure rounding noise. Each lane
  // rounds up with probability 1/8; when no lane does (0.59 of the time), uncollapse moves one,
  // so the noise is never invisible (left alone, all samples would agree 59 % of the time and
  // the result would read as exact: CESTAC's classical blind spot). Lane 0 sees 8 in
  // 1/8 + 7/8 x 0.59 / 4 of the streams, about 0.25. The mean reads lanes 0-2 and the spread all
  // four: lanes 0-2 at 8 and lane 3 at 0 (a few streams in 1000) are not a computational zero
  // (mean 8, sigma 4) and claim 0.76 digit, within a digit of the truth (0); every other pattern
  // is a zero.
  int zero = 0, lane0_up = 0;
  for (uint64_t stream = 0; stream < 400; ++stream) {
    cestac::Run run(7, stream);
    F x = (F(1e8f) + F(1.0f)) - F(1e8f);
    zero += x.digits() == 0.0;
    EXPECT_LT(x.digits(), 1.0) << x.s[0] << " " << x.s[1] << " " << x.s[2] << " " << x.s[3];
    lane0_up += x.s[0] == 8.0f;
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(x.s[i] == 0.0f || x.s[i] == 8.0f) << x.s[i];
  }
  EXPECT_GE(zero, 392);
  EXPECT_GE(lane0_up, 70);
  EXPECT_LE(lane0_up, 130);
}

RC_GTEST_PROP(Stoch, EverySampleIsTheDownwardOrUpwardRounding, (double a, double b)) {
  RC_PRE(std::isfinite(a) && std::isfinite(b) && b != 0);
  RC_PRE(std::fabs(a) < 1e300 && std::fabs(b) < 1e300 && std::fabs(a) > 1e-300 &&
         std::fabs(b) > 1e-300);
  const double sq = std::fabs(a);
  for (char op : {'+', '*', '/', 's'}) {
    const Directed dir = directed(op, op == 's' ? sq : a, b);
    for (uint64_t stream = 0; stream < 4; ++stream) {
      cestac::Run run(3, stream);
      D r = op == '+'   ? D(a) + D(b)
            : op == '*' ? D(a) * D(b)
            : op == '/' ? D(a) / D(b)
                        : sqrt(D(sq));
      for (int i = 0; i < 3; ++i) {
        RC_LOG() << op << " " << std::hexfloat << a << " " << b << " " << r.s[i] << " not in ["
                 << dir.down << ", " << dir.up << "]\n";
        RC_ASSERT(r.s[i] == dir.down || r.s[i] == dir.up);
      }
    }
  }
}

TEST(Stoch, BothNeighboursAreDrawn) {
  bool saw_down = false, saw_up = false;
  const Directed dir = directed('+', 1.0, 1e-17);
  for (uint64_t stream = 0; stream < 20; ++stream) {
    cestac::Run run(1, stream);
    D r = D(1.0) + D(1e-17);
    for (double s : r.s) {
      saw_down |= s == dir.down;
      saw_up |= s == dir.up;
    }
  }
  EXPECT_TRUE(saw_down);
  EXPECT_TRUE(saw_up);
}

TEST(Stoch, ElementaryFunctionsAreRandomlyRoundedToo) {
  // exp(0.1f): the exact value lies strictly between two floats; both must show up.
  const double e = std::exp(0.1);
  const float f = static_cast<float>(e);
  const float lo = f > e ? std::nextafter(f, -INFINITY) : f;
  const float hi = std::nextafter(lo, INFINITY);
  ASSERT_LT(lo, e);
  ASSERT_GT(hi, e);
  bool saw_lo = false, saw_hi = false;
  for (uint64_t stream = 0; stream < 20; ++stream) {
    cestac::Run run(1, stream);
    F r = exp(F(0.1f));
    for (float s : r.s) {
      ASSERT_TRUE(s == lo || s == hi) << s;
      saw_lo |= s == lo;
      saw_hi |= s == hi;
    }
  }
  EXPECT_TRUE(saw_lo && saw_hi);
}

TEST(Stoch, CancellationIsReportedAtItsLine) {
  cestac::Run run(1, 2);
  D noisy = D(1.0);
  for (int i = 0; i < 50; ++i) noisy = noisy + D(1e-3) * D(0.1);  // accumulates rounding noise
  const D almost = D(1.0) + D(0.005);
  const int line = __LINE__ + 1;
  D diff = noisy - almost;
  EXPECT_LT(diff.digits(), 8.0);
  EXPECT_GE(count(run.log(), Kind::cancellation), 1u);
  bool named = false;
  for (const auto& s : run.log().sites)
    if (s.kind == Kind::cancellation)
      named |= cestac::symbolize(s.address) == "tests/cestac/stoch_test.cc:" + std::to_string(line);
  EXPECT_TRUE(named) << "site: "
                     << (run.log().sites.empty() ? "none"
                                                 : cestac::symbolize(run.log().sites[0].address));
}

TEST(Stoch, ExactSubtractionIsNoCancellation) {
  cestac::Run run(1, 2);
  D x = D(1.0 + 0x1p-40) - D(1.0);  // Sterbenz: exact, all samples equal
  EXPECT_EQ(x.s[0], 0x1p-40);
  EXPECT_EQ(count(run.log(), Kind::cancellation), 0u);
}

TEST(Stoch, UnstableMultiplicationNeedsTwoComputationalZeros) {
  const D z = samples(1e-17, -2e-17, 0.5e-17);
  ASSERT_TRUE(z.computational_zero());
  {
    cestac::Run run(1, 1);
    D p = z * z;
    (void)p;
    EXPECT_EQ(count(run.log(), Kind::unstable_multiplication), 1u);
    EXPECT_TRUE(run.log().self_validation_failed());
  }
  {
    cestac::Run run(1, 1);
    D p = D(0.0) * D(0.0);  // exact zeros multiply exactly: no instability
    EXPECT_EQ(count(run.log(), Kind::unstable_multiplication), 0u);
    p = z * D(3.0);
    (void)p;
    EXPECT_EQ(count(run.log(), Kind::unstable_multiplication), 0u);
    EXPECT_FALSE(run.log().self_validation_failed());
  }
  {
    // An exact zero times noise is exactly 0 in every sample: nothing unstable reaches the
    // result (the fuzz engine found cosine_similarity f16 failing self-validation on c x rho
    // with c exactly 0).
    cestac::Run run(1, 1);
    const D p = D(0.0) * z;
    for (int i = 0; i < 4; ++i) EXPECT_EQ(p.s[i], 0.0);
    const D q = z * D(0.0);
    (void)q;
    EXPECT_EQ(count(run.log(), Kind::unstable_multiplication), 0u);
    EXPECT_FALSE(run.log().self_validation_failed());
  }
}

TEST(Stoch, UnstableDivisionByAComputationalZero) {
  const D z = samples(1e-17, -2e-17, 0.5e-17);
  {
    cestac::Run run(1, 1);
    D q = D(1.0) / z;
    (void)q;
    EXPECT_EQ(count(run.log(), Kind::unstable_division), 1u);
  }
  {
    cestac::Run run(1, 1);
    D q = D(1.0) / D(3.0);
    (void)q;
    EXPECT_EQ(count(run.log(), Kind::unstable_division), 0u);
  }
}

TEST(Stoch, BranchingOnNoise) {
  const D z = samples(1e-17, -2e-17, 0.5e-17);
  {
    cestac::Run run(1, 1);
    const bool b = z > D(0.0);
    EXPECT_FALSE(b);  // CADNA semantics: a noisy difference compares as equal
    EXPECT_EQ(count(run.log(), Kind::unstable_branching), 1u);
  }
  {
    cestac::Run run(1, 1);
    EXPECT_TRUE(D(1.0) > D(0.0));
    EXPECT_TRUE(D(2.0) == D(2.0));  // an exact tie is deterministic, not noise
    EXPECT_EQ(count(run.log(), Kind::unstable_branching), 0u);
  }
}

TEST(Stoch, UnstableFunctionOfAComputationalZero) {
  const D z = samples(1e-17, 3e-17, 0.5e-17);  // positive samples, but noise-dominated
  ASSERT_TRUE(z.computational_zero());
  {
    cestac::Run run(1, 1);
    D l = log(z);
    (void)l;
    EXPECT_EQ(count(run.log(), Kind::unstable_function), 1u);
  }
  {
    cestac::Run run(1, 1);
    D l = log(D(2.0));
    (void)l;
    EXPECT_EQ(count(run.log(), Kind::unstable_function), 0u);
  }
}

TEST(Stoch, SamplesDisagreeingOnOverflow) {
  {
    cestac::Run run(1, 1);
    D r = samples(8e307, 9.5e307, 8.5e307) * D(2.0);  // 1.6e308 finite, 1.9e308 overflows
    (void)r;
    EXPECT_EQ(count(run.log(), Kind::nonfinite_divergence), 1u);
  }
  {
    cestac::Run run(1, 1);
    D r = samples(1e308, 1e308, 1e308) * D(2.0);  // every sample overflows: agreement
    EXPECT_TRUE(std::isinf(r.s[0]));
    EXPECT_EQ(count(run.log(), Kind::nonfinite_divergence), 0u);
  }
}

TEST(Stoch, OverflowAndInvalidOperationsNameWhereNaNIsBorn) {
  {
    cestac::Run run(1, 1);
    D big = exp(D(1000.0));  // overflow: finite operand, infinite result
    D nan = big / big;       // invalid: inf / inf
    D later = nan + D(1.0);  // NaN in, NaN out: not where it was born
    EXPECT_TRUE(std::isnan(later.s[0]));
    EXPECT_EQ(count(run.log(), Kind::overflow), 1u);
    EXPECT_EQ(count(run.log(), Kind::invalid_operation), 1u);
    EXPECT_EQ(count(run.log(), Kind::nonfinite_divergence), 0u);  // every sample agrees
    EXPECT_FALSE(run.log().self_validation_failed());
  }
  {
    cestac::Run run(1, 1);
    D fine = exp(D(10.0)) / exp(D(9.0)) + D(-INFINITY);  // -inf operand: not an overflow
    EXPECT_TRUE(std::isinf(fine.s[0]));
    EXPECT_EQ(count(run.log(), Kind::overflow), 0u);
    EXPECT_EQ(count(run.log(), Kind::invalid_operation), 0u);
  }
}

TEST(Stoch, UnstableIntrinsicWhenSamplesDisagreeOnTheInteger) {
  {
    cestac::Run run(1, 1);
    const D x = samples(0.9999999, 1.0000003, 1.0);  // mean 1.000000025
    EXPECT_EQ(floor(x).s[0], 0.0);
    const int i = static_cast<int>(x);
    EXPECT_EQ(i, 1);                            // the mean converts
    (void)fabs(samples(-1e-17, 2e-17, 1e-17));  // the sign itself is noise
    EXPECT_EQ(count(run.log(), Kind::unstable_intrinsic), 3u);
  }
  {
    cestac::Run run(1, 1);
    const D x = D(2.5) * D(1.0);
    EXPECT_EQ(floor(x).s[1], 2.0);
    EXPECT_EQ(round(x).s[2], 3.0);
    EXPECT_EQ(static_cast<long>(x), 2);
    (void)fabs(D(-3.0));
    EXPECT_EQ(count(run.log(), Kind::unstable_intrinsic), 0u);
  }
}

TEST(Stoch, UnstablePowerOfAComputationalZero) {
  {
    cestac::Run run(1, 1);
    (void)pow(samples(1e-17, 3e-17, 0.5e-17), D(2.0));
    EXPECT_EQ(count(run.log(), Kind::unstable_power), 1u);
    EXPECT_TRUE(run.log().self_validation_failed());
  }
  {
    cestac::Run run(1, 1);
    const D p = pow(D(2.0), D(10.0));
    // libm's result is exact here, but its side is unknown to the engine: a sample is kept or
    // moved one ulp at random.
    for (double v : p.s) EXPECT_LE(std::fabs(v - 1024.0), 1024.0 * 0x1p-52) << v;
    EXPECT_EQ(count(run.log(), Kind::unstable_power), 0u);
  }
}

TEST(Stoch, FmaIsRandomlyRoundedOnce) {
  // 1 + 2^-60 * 3 is not representable: every sample is one of its two neighbours.
  const double lo = 1.0, hi = std::nextafter(1.0, 2.0);
  bool saw_lo = false, saw_hi = false;
  for (uint64_t stream = 0; stream < 20; ++stream) {
    cestac::Run run(1, stream);
    const D r = fma(D(0x1p-60), D(3.0), D(1.0));
    for (double v : r.s) {
      ASSERT_TRUE(v == lo || v == hi);
      saw_lo |= v == lo;
      saw_hi |= v == hi;
    }
  }
  EXPECT_TRUE(saw_lo && saw_hi);
  cestac::Run run(1, 1);
  EXPECT_EQ(fma(D(3.0), D(5.0), D(-15.0)).s[0], 0.0);  // exact: no rounding at all
}

TEST(Stoch, HalfUnderflowIsReported) {
  {
    cestac::Run run(1, 1);
    const Stoch<Half> x(Half(0x1p-13));
    const Stoch<Half> p = x * x;  // 2^-26: a quarter of the smallest f16 subnormal
    for (float v : p.s) EXPECT_TRUE(v == 0.0f || v == 0x1p-24f) << v;  // rounded down or up
    EXPECT_TRUE(p.s[0] == 0.0f || p.s[1] == 0.0f || p.s[2] == 0.0f || p.s[3] == 0.0f);
    EXPECT_EQ(count(run.log(), Kind::underflow), 1u);
  }
  {
    cestac::Run run(1, 1);
    (void)(Stoch<Half>(Half(0.5)) * Stoch<Half>(Half(0.5)));
    EXPECT_EQ(count(run.log(), Kind::underflow), 0u);
  }
}

TEST(Stoch, DigitsUnderflowFreeForTinyAndHugeValues) {
  // Squares of 1e-250 underflow: the digit count must not mistake such values for zeros.
  const D tiny = samples(1e-250, 1e-250 * (1 + 1e-12), 1e-250);
  EXPECT_FALSE(tiny.computational_zero());
  EXPECT_NEAR(tiny.digits(), 12.76, 0.05);  // log10(1 / (0.35 * 0.5e-12)): 4 samples, sigma 0.5e-12
  const D huge = samples(1e250, 1e250 * (1 + 1e-12), 1e250);
  EXPECT_FALSE(huge.computational_zero());
  EXPECT_NEAR(huge.digits(), 12.76, 0.05);
}

double noisy_sum(uint64_t seed, uint64_t stream) {
  cestac::Run run(seed, stream);
  F s = 0.0f;
  for (int i = 0; i < 1000; ++i) s += F(0.1f) * F(static_cast<float>(i % 7));
  return s.mean();
}

TEST(Stoch, ReplaysBitForBitFromItsSeed) {
  EXPECT_EQ(noisy_sum(5, 9), noisy_sum(5, 9));
  EXPECT_NE(noisy_sum(5, 9), noisy_sum(5, 10));
}

TEST(Stoch, ThreadsRunIndependentStreams) {
  std::vector<double> sequential(4), parallel(4);
  for (int t = 0; t < 4; ++t) sequential[t] = noisy_sum(11, static_cast<uint64_t>(t));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { parallel[t] = noisy_sum(11, static_cast<uint64_t>(t)); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(sequential, parallel);
}

TEST(Stoch, LibmSeesRoundToNearestInsideARun) {
  // Every sample of exp/log/tanh/erf/pow of an exact argument is libm's round-to-nearest value
  // or one of its neighbours (the random perturbation), never a value computed in another mode.
  for (double x : {0.3, 1.7, -2.5, 10.25, 1e-3}) {
    const double e = std::exp(x), l = std::log(std::fabs(x)), th = std::tanh(x);
    const double p = std::pow(std::fabs(x), 0.37);
    cestac::Run run(5, 1);
    const D ex = exp(D(x)), lx = log(D(std::fabs(x))), tx = tanh(D(x));
    const D px = pow(D(std::fabs(x)), D(0.37));
    for (int i = 0; i < 3; ++i) {
      EXPECT_LE(std::fabs(ex.s[i] - e), std::fabs(std::nextafter(e, INFINITY) - e)) << x;
      EXPECT_LE(std::fabs(lx.s[i] - l), std::fabs(std::nextafter(l, INFINITY) - l)) << x;
      EXPECT_LE(std::fabs(tx.s[i] - th), std::fabs(std::nextafter(th, INFINITY) - th)) << x;
      EXPECT_LE(std::fabs(px.s[i] - p), std::fabs(std::nextafter(p, INFINITY) - p)) << x;
    }
  }
}

TEST(Stoch, ConstantsConvertToTheNearestValueInsideARun) {
  const float native = 0.1f, eps = static_cast<float>(1e-5);
  cestac::Run run(1, 1);
  const F a(0.1), b(1e-5), c(16777217LL);  // double and integer constants
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.s[i], native);
    EXPECT_EQ(b.s[i], eps);
    EXPECT_EQ(c.s[i], 16777216.0f);  // the tie 2^24 + 1 goes to even
  }
}

// The uniforms of the four-lane nearness operations (cestac::UniformPool): in (-1/2, 1/2), uniform
// over their 2^17 cells, the first lane uniform over 0..3, the same sequence from the same seed,
// and an enclosing run that goes on the same way whatever ran inside it.
template <class T>
std::vector<double> draw_uniforms(int n, uint64_t seed, bool nested) {
  cestac::Run run(seed, 0);
  std::vector<double> out;
  for (int k = 0; k < n; ++k) {
    if (nested && k == n / 2) {
      cestac::Run inner(seed + 1, 0);
      uint32_t j;
      for (int i = 0; i < 50; ++i) cestac::detail::take_uniforms<T>(cestac::hot, j);
    }
    uint32_t j;
    const auto v = cestac::detail::take_uniforms<T>(cestac::hot, j);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<double>(v[i]));
    out.push_back(j);
  }
  return out;
}
template <class T>
void check_uniforms() {
  const int n = 30000;
  const std::vector<double> d = draw_uniforms<T>(n, 7, false);
  double sum = 0, sum2 = 0;
  int lane[4] = {0, 0, 0, 0};
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < 4; ++i) {
      const double v = d[5 * k + i];
      ASSERT_GT(v, -0.5);
      ASSERT_LT(v, 0.5);
      ASSERT_EQ(std::fmod((v + 0.5) * 0x1p17, 1.0), 0.5);  // a cell's midpoint
      sum += v;
      sum2 += v * v;
    }
    ++lane[static_cast<int>(d[5 * k + 4])];
  }
  const double m = 4.0 * n;
  EXPECT_NEAR(sum / m, 0.0, 5 * std::sqrt(1.0 / 12 / m));
  EXPECT_NEAR(sum2 / m, 1.0 / 12, 0.002);
  for (int c : lane) EXPECT_NEAR(c, n / 4.0, 5 * std::sqrt(n * 3.0 / 16));
  EXPECT_EQ(d, draw_uniforms<T>(n, 7, false));
  EXPECT_NE(d, draw_uniforms<T>(n, 8, false));
  EXPECT_EQ(draw_uniforms<T>(1000, 7, true), draw_uniforms<T>(1000, 7, true));
}
TEST(Stoch, NearnessUniformsAreUniformAndReplayFromTheSeed) {
  check_uniforms<double>();
  check_uniforms<float>();
}

TEST(Stoch, EveryArithmeticOperationRoundsBothWays) {
  // Over many random streams an inexact +, -, x, / and sqrt lands on both directed roundings and
  // only on them.
  const double a = 1.0, b = 3.0;
  const double q_dn = directed('/', a, b).down, q_up = directed('/', a, b).up;
  const double s_dn = directed('+', 0.1, 0.7).down, s_up = directed('+', 0.1, 0.7).up;
  const double m_dn = directed('*', 0.1, 0.7).down, m_up = directed('*', 0.1, 0.7).up;
  int q_seen[2] = {0, 0}, s_seen[2] = {0, 0}, m_seen[2] = {0, 0}, r_seen[2] = {0, 0};
  const double r_dn = directed('s', 2.0, 0).down, r_up = directed('s', 2.0, 0).up;
  for (uint64_t stream = 0; stream < 64; ++stream) {
    cestac::Run run(3, stream);
    const D q = D(a) / D(b), s = D(0.1) + D(0.7), m = D(0.1) * D(0.7), r = sqrt(D(2.0));
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(q.s[i] == q_dn || q.s[i] == q_up);
      ASSERT_TRUE(s.s[i] == s_dn || s.s[i] == s_up);
      ASSERT_TRUE(m.s[i] == m_dn || m.s[i] == m_up);
      ASSERT_TRUE(r.s[i] == r_dn || r.s[i] == r_up);
      ++q_seen[q.s[i] == q_up];
      ++s_seen[s.s[i] == s_up];
      ++m_seen[m.s[i] == m_up];
      ++r_seen[r.s[i] == r_up];
    }
  }
  // Each lane rounds up with probability p = (exact - down) / (up - down); operands equal in every
  // lane give every lane the same p, and uncollapse turns the (1 - p)^4 + p^4 of results with all
  // four lanes alike into three and one: a lane is up with probability p + ((1-p)^4 - p^4) / 4.
  const auto up_fraction = [](long double exact, double dn, double up) {
    const double p = static_cast<double>((exact - dn) / (static_cast<long double>(up) - dn));
    return p + (std::pow(1 - p, 4) - std::pow(p, 4)) / 4;
  };
  const struct {
    const int* seen;
    double f;
  } ops[] = {{q_seen, up_fraction(1.0L / 3.0L, q_dn, q_up)},
             {s_seen, up_fraction(static_cast<long double>(0.1) + static_cast<long double>(0.7),
                                  s_dn, s_up)},
             {m_seen, up_fraction(static_cast<long double>(0.1) * static_cast<long double>(0.7),
                                  m_dn, m_up)},
             {r_seen, up_fraction(std::sqrt(2.0L), r_dn, r_up)}};
  for (const auto& op : ops) {
    const double n = 192, mean = n * op.f, sd = std::sqrt(n * op.f * (1 - op.f));
    EXPECT_GT(op.seen[0], 0);
    EXPECT_GT(op.seen[1], 0);
    EXPECT_NEAR(op.seen[1], mean, 5 * sd) << "p up " << op.f;
  }
}

TEST(Stoch, AnInexactLaneOfAnEqualResultIsNeverLeftCollapsed) {
  // x - 2 with lane 0 odd in its last bit and the others even: every lane rounds to the same r,
  // only lane 0 inexactly (a tie). Where lane 0 stays on r the result would read as exact; the
  // uncollapse moves it, as the only lane that may move, whichever lane it tries first.
  const double odd = 0x1.e116206952653p-1, even = 0x1.e116206952654p-1;
  const double r = even - 2;  // exact: -0x1.0f74efcb56cd6p+0
  for (uint64_t stream = 0; stream < 64; ++stream) {
    cestac::Run run(3, stream);
    D x(even);
    x.s[0] = odd;
    const D y = x - D(2.0);
    for (int i = 1; i < 4; ++i) ASSERT_EQ(y.s[i], r) << "stream " << stream;
    ASSERT_EQ(y.s[0], directed('+', odd, -2).down) << "stream " << stream;  // away from r
  }
}

TEST(Stoch, DigitsTrackTheTrueError) {
  // A float sum of 1000 terms: CESTAC's digit count is a 95% estimate of the true digits.
  int agree = 0;
  const int kStreams = 100;
  double exact = 0;
  for (int i = 0; i < 1000; ++i) exact += static_cast<double>(0.1f) * (i % 7);
  for (uint64_t stream = 0; stream < kStreams; ++stream) {
    cestac::Run run(13, stream);
    F s = 0.0f;
    for (int i = 0; i < 1000; ++i) s += F(0.1f) * F(static_cast<float>(i % 7));
    const double truth = -std::log10(std::fabs(s.mean() - exact) / std::fabs(exact));
    agree += std::fabs(std::min(truth, 7.22) - s.digits()) <= 1.0;
  }
  EXPECT_GE(agree, 85);
}

}  // namespace
}  // namespace stabfuzz
