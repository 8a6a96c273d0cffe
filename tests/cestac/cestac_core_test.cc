// The host/device CESTAC core (RNG, rounding patterns, digits, flags): what both engines use.
#include "stabfuzz/gpu/cestac_core.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(CestacCore, RoundingPatternsAreBalancedAndUnbiasedPerLane) {
  // Every pattern rounds two lanes down and two up, and never the three tested lanes alike.
  for (uint32_t p = 0; p < 8; ++p) {
    const uint32_t bits = balanced_pattern(p);
    EXPECT_EQ(__builtin_popcount(bits), 2) << p;
    EXPECT_NE(bits & 7u, 0u) << p;
    EXPECT_NE(bits & 7u, 7u) << p;
  }
  HotState ts{};
  start_stream(ts, thread_key(stream_key(3, 0), 11));
  int down[4] = {0, 0, 0, 0};
  int moves[4] = {0, 0, 0, 0};
  const int kOps = 20000;
  for (int k = 0; k < kOps; ++k) {
    const uint32_t bits = rounding_bits(ts, 4);
    const uint32_t bits2 = random_bits(ts, 8);
    for (int lane = 0; lane < 4; ++lane) {
      down[lane] += lane_bit(bits, lane);
      moves[lane] += (bits2 >> (2 * lane)) & 1u;
    }
  }
  for (int lane = 0; lane < 4; ++lane) {
    // Binomial(20000, 1/2): sd 71; 5 sd.
    EXPECT_NEAR(down[lane], kOps / 2, 355) << "lane " << lane;
    EXPECT_NEAR(moves[lane], kOps / 2, 355) << "lane " << lane;
  }
}

TEST(CestacCore, PatternIndicesComeThreeBitsAtATimeFromWordZeroOn) {
  HotState ts{};
  start_stream(ts, stream_key(5, 9));
  // 63 bits under the sentinel: 21 indices from word 0, then word 1 (the counter's first step).
  uint64_t w = stream_word(ts.key, 0) >> 1;
  for (int i = 0; i < 21; ++i) EXPECT_EQ(take_pattern_index_refill(ts), (w >> (3 * i)) & 7u);
  EXPECT_EQ(ts.counter, 1u);
  w = stream_word(ts.key, 1) >> 1;
  EXPECT_EQ(take_pattern_index_refill(ts), w & 7u);
  // random_bits then draws word 2: the two draws share the counter.
  EXPECT_EQ(random_bits(ts, 8), static_cast<uint32_t>((stream_word(ts.key, 2) >> 1) & 0xff));
  EXPECT_EQ(ts.counter, 2u);
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

// The statistics against a direct long double evaluation (mean-centred moments).
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
    // The engines' statistics: the mean of lanes 0-2, the spread of all four about their own
    // mean (3 degrees of freedom).
    long double centre = 0, ss = 0;
    for (T x : s) centre += x;
    centre /= 4;
    const long double mean = (static_cast<long double>(s[0]) + s[1] + s[2]) / 3;
    for (T x : s) ss += (x - centre) * (x - centre);
    const bool all_equal = s[0] == s[1] && s[0] == s[2] && s[0] == s[3];
    const double full = -std::log10(std::ldexp(1.0, -p));
    const long double c = 3 * 3 * mean * mean / (student_tau(4) * student_tau(4) * ss);
    const double want =
        all_equal
            ? (s[0] == 0 ? 0.0 : full)
            : (c <= 1 ? 0.0
                      : std::clamp<double>(
                            std::log10(std::fabs(mean) / (0.35L * std::sqrt(ss / 3))), 0.0, full));
    if (std::fabs(c - 1) < 1e-6) continue;  // the zero test's tie: either answer is right
    ASSERT_NEAR(detail::sample_digits(s.data(), 4, p, detail::digit_scale(4)), want, 1e-9)
        << std::hexfloat << s[0] << " " << s[1] << " " << s[2] << " " << s[3];
    ASSERT_EQ((detail::computational_zero<4, 3>(s.data())), !all_equal && c <= 1);
    if (!all_equal)
      ASSERT_NEAR((detail::accuracy_ratio_sq<4, 3>(s.data(), p)),
                  std::clamp<double>(c, 1.0, std::ldexp(1.0, 2 * p)), 1e-6 * c);
  }
}

TEST(CestacCore, DigitsMatchADirectEvaluationDouble) { check_digits_match<double>(1); }
TEST(CestacCore, DigitsMatchADirectEvaluationFloat) { check_digits_match<float>(2); }

TEST(CestacCore, DigitsOfSpecialSamples) {
  const double full = -std::log10(std::ldexp(1.0, -53));
  const double same[4] = {1.5, 1.5, 1.5, 1.5};
  EXPECT_DOUBLE_EQ(detail::sample_digits(same, 4, 53, 0.35), full);
  const double zeros[4] = {0, 0, 0, 0};
  EXPECT_EQ(detail::sample_digits(zeros, 4, 53, 0.35), 0.0);
  const double noise[4] = {1e-17, -2e-17, 3e-17, -1e-17};
  EXPECT_EQ(detail::sample_digits(noise, 4, 53, 0.35), 0.0);
  EXPECT_TRUE(detail::computational_zero<4>(noise));
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
  EXPECT_EQ(detail::sum_flags<4>(a, b, r, 53, 4), uint32_t{kFlagCancellation});
  EXPECT_EQ(detail::sum_flags<4>(a, b, r, 53, 12), 0u);
  // A sum of same-sign values loses nothing.
  const double c[4] = {2, 2, 2, 2};
  double q[4];
  for (int i = 0; i < 4; ++i) q[i] = a[i] + c[i];
  EXPECT_EQ(detail::sum_flags<4>(a, c, q, 53, 4), 0u);
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
