// The host/device CESTAC core (RNG, rounding choice, digits, flags) agrees with the CPU engine.
#include "stabfuzz/gpu/cestac_core.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "stabfuzz/entropy.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::cestac {
namespace {

// The device flag bits are numbered as the CPU's instability kinds.
static_assert(kFlagCancellation == 1u << static_cast<int>(Kind::cancellation));
static_assert(kFlagUnstableMultiplication == 1u << static_cast<int>(Kind::unstable_multiplication));
static_assert(kFlagUnstableDivision == 1u << static_cast<int>(Kind::unstable_division));
static_assert(kFlagUnstablePower == 1u << static_cast<int>(Kind::unstable_power));
static_assert(kFlagUnstableFunction == 1u << static_cast<int>(Kind::unstable_function));
static_assert(kFlagUnstableIntrinsic == 1u << static_cast<int>(Kind::unstable_intrinsic));
static_assert(kFlagUnstableBranching == 1u << static_cast<int>(Kind::unstable_branching));
static_assert(kFlagNonfiniteDivergence == 1u << static_cast<int>(Kind::nonfinite_divergence));
static_assert(kFlagOverflow == 1u << static_cast<int>(Kind::overflow));
static_assert(kFlagInvalidOperation == 1u << static_cast<int>(Kind::invalid_operation));
static_assert(kDeviceFlagKinds <= kKindCount);

TEST(CestacCore, StreamWordsAreTheCpuEnginesRandomBits) {
  HotState ts{};
  ts.key = stream_key(42, 7);
  for (uint64_t k = 1; k <= 100; ++k) {
    // The CPU engine takes 63 bits of each word (its top 63: the sentinel bit sits above them), so
    // random_bits(ts, 21) three times consumes one word, lowest bits first.
    const uint64_t w = stream_word(ts.key, k) >> 1;
    constexpr uint64_t kMask = (uint64_t{1} << 21) - 1;
    EXPECT_EQ(random_bits(ts, 21), static_cast<uint32_t>(w & kMask));
    EXPECT_EQ(random_bits(ts, 21), static_cast<uint32_t>((w >> 21) & kMask));
    EXPECT_EQ(random_bits(ts, 21), static_cast<uint32_t>((w >> 42) & kMask));
  }
}

TEST(CestacCore, ThreadKeysAreDistinctAndReplay) {
  const uint64_t launch = stream_key(1, 2);
  std::set<uint64_t> keys;
  for (uint64_t t = 0; t < 100000; ++t) keys.insert(thread_key(launch, t));
  EXPECT_EQ(keys.size(), 100000u);
  EXPECT_EQ(thread_key(launch, 5), thread_key(stream_key(1, 2), 5));
  EXPECT_NE(thread_key(launch, 5), thread_key(stream_key(2, 2), 5));
}

TEST(CestacCore, RoundingChoiceIsUnbiasedPerLane) {
  const uint64_t key = thread_key(stream_key(3, 0), 11);
  int up[4] = {0, 0, 0, 0};
  int moves[4] = {0, 0, 0, 0};
  const int kWords = 20000;
  for (int k = 0; k < kWords; ++k) {
    const uint64_t w = stream_word(key, k);
    for (int lane = 0; lane < 4; ++lane) {
      up[lane] += lane_rounds_up(w, lane);
      moves[lane] += lane_bits2(w, lane) & 1u;
    }
  }
  for (int lane = 0; lane < 4; ++lane) {
    // Binomial(20000, 1/2): sd 71; 5 sd.
    EXPECT_NEAR(up[lane], kWords / 2, 355) << "lane " << lane;
    EXPECT_NEAR(moves[lane], kWords / 2, 355) << "lane " << lane;
  }
}

TEST(CestacCore, TauAndKappaAreTheEnginesConstants) {
  EXPECT_DOUBLE_EQ(student_tau(3), 4.303);
  EXPECT_DOUBLE_EQ(detail::digit_scale(4), 0.35);
  EXPECT_NEAR(detail::digit_scale(3), 4.303 / std::sqrt(3.0), 1e-8);
}

// Four samples around v with relative spread `rel`.
template <class T>
std::vector<T> spread(Entropy& e, double v, double rel) {
  std::vector<T> s(4);
  for (auto& x : s) x = static_cast<T>(v * (1 + rel * e.normal()));
  return s;
}

template <class T>
void check_digits_match(uint64_t seed) {
  SeededEntropy e(seed, 0);
  const int p = std::numeric_limits<T>::digits;
  for (int i = 0; i < 2000; ++i) {
    const double v = e.chance(0.5) ? e.log_uniform(1e-30, 1e30) : -e.log_uniform(1e-30, 1e30);
    const double rel = std::pow(10.0, -e.uniform(0, p * 0.3));
    std::vector<T> s = spread<T>(e, v, rel);
    if (e.chance(0.1)) s = {T(v), T(v), T(v), T(v)};
    if (e.chance(0.05)) s = {T(1e-20), T(-1e-20), T(2e-20), T(-3e-20)};
    const double cpu = detail::digits<4>(s.data(), p, detail::digit_scale(4));
    const double core = detail::sample_digits(s.data(), 4, p, detail::digit_scale(4));
    // The CPU engine forms the moments around the mean (long double for digits, double for the
    // ratio), the shared code around the first sample in double (the device has no long double):
    // samples a few ulps apart then differ by up to ~0.01 digits, ~2% in the ratio.
    ASSERT_NEAR(cpu, core, 1e-2) << std::hexfloat << s[0] << " " << s[1] << " " << s[2] << " "
                                 << s[3];
    ASSERT_EQ(detail::computational_zero<4>(s.data()), detail::sample_zero(s.data(), 4));
    const double r_cpu = detail::accuracy_ratio<4>(s.data(), p);
    const double r_core = detail::sample_accuracy_ratio(s.data(), 4, p);
    // The CPU's ratio centres at the double mean: with samples within ~1000 ulps its deviations
    // carry the mean's rounding (up to a factor 2 seen near 2^52); the shifted moments do not.
    if (r_cpu < 1e12)
      ASSERT_NEAR(r_cpu, r_core, 5e-2 * r_cpu);
    else
      ASSERT_NEAR(std::log10(r_cpu), std::log10(r_core), 0.5);
  }
}

TEST(CestacCore, DigitsMatchTheCpuEngineDouble) { check_digits_match<double>(1); }
TEST(CestacCore, DigitsMatchTheCpuEngineFloat) { check_digits_match<float>(2); }

TEST(CestacCore, DigitsOfSpecialSamples) {
  const double full = -std::log10(std::ldexp(1.0, -53));
  const double same[4] = {1.5, 1.5, 1.5, 1.5};
  EXPECT_DOUBLE_EQ(detail::sample_digits(same, 4, 53, 0.35), full);
  const double zeros[4] = {0, 0, 0, 0};
  EXPECT_EQ(detail::sample_digits(zeros, 4, 53, 0.35), 0.0);
  const double noise[4] = {1e-17, -2e-17, 3e-17, -1e-17};
  EXPECT_EQ(detail::sample_digits(noise, 4, 53, 0.35), 0.0);
  EXPECT_TRUE(detail::sample_zero(noise, 4));
  const double split[4] = {1.0, INFINITY, 1.0, 1.0};
  EXPECT_EQ(detail::sample_digits(split, 4, 53, 0.35), 0.0);
  const double infs[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  EXPECT_DOUBLE_EQ(detail::sample_digits(infs, 4, 53, 0.35), full);
  // Samples agreeing to ~1e-10 relative: about 10 digits.
  const double close[4] = {1 + 1e-10, 1 - 1e-10, 1 + 2e-10, 1 - 2e-10};
  EXPECT_NEAR(detail::sample_digits(close, 4, 53, 0.35), 10, 1);
}

TEST(CestacCore, CancellationRule) {
  // a and b carry ~13 digits; r = a - b keeps ~3: 10 digits lost, >= 4.
  const double a[4] = {1 + 1e-13, 1 - 1e-13, 1 + 2e-13, 1 - 1e-13};
  const double b[4] = {-(1 - 1e-10), -(1 - 1e-10), -(1 - 1e-10), -(1 - 1e-10)};
  double r[4];
  for (int i = 0; i < 4; ++i) r[i] = a[i] + b[i];
  EXPECT_TRUE(detail::sample_cancellation(a, b, r, 4, 53, 4));
  EXPECT_FALSE(detail::sample_cancellation(a, b, r, 4, 53, 12));
  // A sum of same-sign values loses nothing.
  const double c[4] = {2, 2, 2, 2};
  double q[4];
  for (int i = 0; i < 4; ++i) q[i] = a[i] + c[i];
  EXPECT_FALSE(detail::sample_cancellation(a, c, q, 4, 53, 4));
}

TEST(CestacCore, FlagsReduceToCountsPerKind) {
  const uint32_t flags[5] = {0, kFlagCancellation, kFlagCancellation | kFlagUnstableDivision,
                             kFlagNonfiniteDivergence, kFlagUnstableBranching};
  uint64_t counts[kDeviceFlagKinds] = {};
  reduce_flags(flags, 5, counts);
  EXPECT_EQ(counts[static_cast<int>(Kind::cancellation)], 2u);
  EXPECT_EQ(counts[static_cast<int>(Kind::unstable_division)], 1u);
  EXPECT_EQ(counts[static_cast<int>(Kind::nonfinite_divergence)], 1u);
  EXPECT_EQ(counts[static_cast<int>(Kind::unstable_branching)], 1u);
  EXPECT_EQ(counts[static_cast<int>(Kind::overflow)], 0u);
}

TEST(CestacCore, NonfiniteClassification) {
  const double a[4] = {1e308, 1e308, 1e308, 1e308}, b[4] = {10, 10, 10, 10};
  const double over[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  EXPECT_EQ(classify_nonfinite(over, a, b, 4), uint32_t{kFlagOverflow});
  const double split[4] = {INFINITY, 1.7e308, INFINITY, INFINITY};
  EXPECT_EQ(classify_nonfinite(split, a, b, 4), uint32_t{kFlagOverflow | kFlagNonfiniteDivergence});
  const double inf[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
  const double nan[4] = {NAN, NAN, NAN, NAN};
  const uint32_t none = 0;
  EXPECT_EQ(classify_nonfinite(nan, inf, inf, 4), uint32_t{kFlagInvalidOperation});
  EXPECT_EQ(classify_nonfinite(inf, inf, static_cast<const double*>(nullptr), 4), none);
}

}  // namespace
}  // namespace stabfuzz::cestac
