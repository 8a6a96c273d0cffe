// CESTAC logic shared by the CPU engine (Stoch) and the device type (DStoch): RNG, rounding choice,
// digit statistics and instability flags, as __host__ __device__ code.
//
// This header compiles without nvcc (clang host code, tested on the CPU by
// tests/cestac/cestac_core_test.cc): SF_HD expands to __host__ __device__ only under a CUDA
// compiler. Everything here is plain arithmetic on float/double/long double, no std:: calls that
// device code lacks (the global ::log10, ::sqrt, ::fabs exist on both sides).
#pragma once

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define SF_HD __host__ __device__ __forceinline__
#else
#define SF_HD inline
#endif

namespace stabfuzz::cestac {

// ---- RNG: counter-based, keyed, so a run (or a launch) replays bit for bit from its seed
// ---------

// SplitMix64's finalizer: a bijection with full avalanche, enough to drive rounding choices.
SF_HD constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// The key of one stream of a run (CPU: the thread's stream; GPU: the launch).
SF_HD constexpr uint64_t stream_key(uint64_t seed, uint64_t stream) {
  return mix64(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) ^ mix64(~stream);
}
// The k-th 64-bit word of a stream: what the CPU's HotState draws as it counts (random_bits).
SF_HD constexpr uint64_t stream_word(uint64_t key, uint64_t k) {
  return mix64(key + 0x9e3779b97f4a7c15ULL * k);
}
// The key of one device thread of a launch: distinct threads get unrelated streams, and the
// counter (one word per operation) runs inside each.
SF_HD constexpr uint64_t thread_key(uint64_t launch_key, uint64_t thread) {
  return mix64(launch_key ^ mix64(thread * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL));
}

// ---- rounding choice ----------------------------------------------------------------------------
// Lane i of a random word rounds toward +inf when bit i is set, else toward -inf (the CPU flips
// signs to round down; the device picks the _rd intrinsic). Elementary functions take two bits per
// lane: bit 1 the direction, bit 0 whether to move at all (random_perturb).
SF_HD constexpr bool lane_rounds_up(uint64_t word, int lane) { return (word >> lane) & 1u; }
SF_HD constexpr unsigned lane_bits2(uint64_t word, int lane) {
  return static_cast<unsigned>((word >> (2 * lane)) & 3u);
}

// ---- digit statistics ---------------------------------------------------------------------------

// Student's t quantile t_{N-1, 0.975}: the confidence interval CESTAC's digit count rests on
// (beta = 0.95). tau = 4.303 for N = 3.
SF_HD constexpr double student_tau(int n) {
  constexpr double kTable[] = {0,     0,     12.706, 4.303, 3.182, 2.776, 2.571,
                               2.447, 2.365, 2.306,  2.262, 2.228, 2.201};
  return n < 13 ? kTable[n] : 2.2;
}

namespace detail {

// kappa of digits = log10(|mean| / (kappa sigma)). The classical CESTAC bound takes kappa =
// tau / sqrt(N), a 95% lower confidence bound on the digits: it underclaims by more than one digit
// about a third of the time with 3 samples (the true error of the mean is usually far below the
// bound). digit_scale centres the estimate instead for 4 samples, the default (Stoch<T, 3>
// computes 4 in one vector; DStoch<T, 4> computes 4 too).
SF_HD constexpr double digit_scale(int n) {
  // 0.35: chosen among 0.15-1.0 at seed 1 of `stabfuzz calibrate --runs 250`, with independent
  // rounding directions. With balanced lanes (two up, two down: Stoch::rounding_bits) and the
  // variance's correction applied before squaring, unchanged: `stabfuzz calibrate` (2400 cases)
  // agrees within one digit in 95.8/95.8/96.8/96.6/95.5% at seeds 1-5, overclaims 0.4/0.3/0.3/
  // 0.3/0.3%. Gaussian theory for 4 independent samples caps agreement near 95% for any kappa.
  constexpr double kSqrt[] = {1,          1,          1.41421356, 1.73205081, 2,
                              2.23606798, 2.44948974, 2.64575131, 2.82842712, 3,
                              3.16227766, 3.31662479, 3.46410162, 3.60555128, 3.74165739,
                              3.87298335, 4};
  return n == 4 ? 0.35 : student_tau(n) / kSqrt[n < 16 ? n : 16];
}

// Computational zero (CADNA) from the samples' moments: C <= 0, i.e. sqrt(N)|mean| <= tau sigma,
// written N (N - 1) mean^2 <= tau^2 ss (ss = sum of squared deviations): no division, and a tie
// of exact zeros (mean = 0, ss = 0) is a zero too. W: the width the moments were computed in.
template <class W>
SF_HD bool zero_from_moments(int n, W mean, W ss) {
  const W tau = static_cast<W>(student_tau(n));
  return static_cast<W>(n) * static_cast<W>(n - 1) * mean * mean <= tau * tau * ss;
}

// Digits of the mean from its moments: log10(|mean| / (kappa sigma)) clamped to [0, full].
template <class W>
SF_HD double digits_from_moments(int n, W mean, W ss, double kappa, double full) {
  const W sigma = sqrt(ss / static_cast<W>(n - 1));
  const double c = static_cast<double>(log10(fabs(mean) / (static_cast<W>(kappa) * sigma)));
  return c < 0 ? 0.0 : (c > full ? full : c);
}

// Mean and sum of squared deviations of the samples scaled by 2^-ilogb(m), m = max |s_i| > 0
// finite (so squares stay in range), in double: the device has no long double. The deviations are
// taken from the first sample, exactly when samples are within a factor 2 (Sterbenz), so samples a
// few ulps apart keep their spread instead of drowning in the rounding of the mean.
template <class T>
SF_HD void scaled_moments(const T* s, int n, double m, double& mean, double& ss) {
  const double scale = ldexp(1.0, -ilogb(m));  // exact
  const double ref = static_cast<double>(s[0]) * scale;
  double md = 0;
  for (int i = 0; i < n; ++i) md += static_cast<double>(s[i]) * scale - ref;
  md /= n;
  ss = 0;
  for (int i = 0; i < n; ++i) {
    const double d = (static_cast<double>(s[i]) * scale - ref) - md;
    ss += d * d;
  }
  mean = ref + md;
}

// Digits of `n` samples (device and host): full precision when all agree (0 for all zeros),
// 0 for non-finite disagreement or a computational zero. Moments in double (float samples) or
// double scaled by the largest magnitude's power of two (so squares stay in range).
template <class T>
SF_HD double sample_digits(const T* s, int n, int precision, double kappa) {
  const double full = -log10(ldexp(1.0, -precision));
  bool all_equal = true, any_nonfinite = false;
  double m = 0;
  for (int i = 0; i < n; ++i) {
    all_equal &= s[i] == s[0];
    any_nonfinite |= !isfinite(static_cast<double>(s[i]));
    const double a = fabs(static_cast<double>(s[i]));
    m = a > m ? a : m;
  }
  if (any_nonfinite) return all_equal && !isnan(static_cast<double>(s[0])) ? full : 0.0;
  if (all_equal) return s[0] == 0 ? 0.0 : full;
  double mean, ss;
  scaled_moments(s, n, m, mean, ss);
  if (zero_from_moments(n, mean, ss)) return 0.0;
  return digits_from_moments(n, mean, ss, kappa, full);
}

// Whether samples form a computational zero (scaled moments, as above).
template <class T>
SF_HD bool sample_zero(const T* s, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) {
    const double a = fabs(static_cast<double>(s[i]));
    m = a > m ? a : m;
  }
  if (m == 0) return true;
  if (!(m <= 1.79769313486231570815e308)) return false;  // inf or NaN: not a zero
  double mean, ss;
  scaled_moments(s, n, m, mean, ss);
  return zero_from_moments(n, mean, ss);
}

// 10^digits without the logarithm: sqrt(N)|mean| / (tau sigma), clamped to [1, 2^precision]
// (1 for a computational zero or non-finite samples, 2^precision when all samples agree). The
// cancellation test compares these ratios.
template <class T>
SF_HD double sample_accuracy_ratio(const T* s, int n, int precision) {
  const double full = ldexp(1.0, precision);
  bool all_equal = true;
  double m = 0;
  for (int i = 0; i < n; ++i) {
    all_equal &= s[i] == s[0];
    const double a = fabs(static_cast<double>(s[i]));
    m = a > m ? a : m;
  }
  if (all_equal) return s[0] == 0 || !isfinite(static_cast<double>(s[0])) ? 1.0 : full;
  if (!(m <= 1.79769313486231570815e308)) return 1.0;
  double mean, ss;
  scaled_moments(s, n, m, mean, ss);
  if (ss == 0) return full;
  const double c = sqrt(n * (n - 1) * mean * mean / ss) / student_tau(n);
  return c < 1 ? 1.0 : (c > full ? full : c);
}

// Cancellation (CADNA's k-digit rule): min(digits(a), digits(b)) - digits(r) >= k, as ratios.
template <class T>
SF_HD bool sample_cancellation(const T* a, const T* b, const T* r, int n, int precision,
                               int cancel_digits) {
  bool all_equal = true;
  for (int i = 1; i < n; ++i) all_equal &= r[i] == r[0];
  if (all_equal) return false;  // no noise in the result: nothing was lost
  double ten_k = 1;
  for (int i = 0; i < cancel_digits; ++i) ten_k *= 10;
  const double ra = sample_accuracy_ratio(a, n, precision);
  const double rb = sample_accuracy_ratio(b, n, precision);
  return (ra < rb ? ra : rb) >= ten_k * sample_accuracy_ratio(r, n, precision);
}

}  // namespace detail

// ---- instability flags (device threads) ------------------------------------------------------
// One bit per instability kind, numbered as cestac::Kind (cestac.h; a static_assert in
// targets/cuda/cuda_targets.cc keeps the two in step). A device thread ORs the kinds it met into
// one word; the launch's words are reduced on the host into counts per kind (threads that met it).
enum DeviceFlag : uint32_t {
  kFlagCancellation = 1u << 0,
  kFlagUnstableMultiplication = 1u << 1,
  kFlagUnstableDivision = 1u << 2,
  kFlagUnstablePower = 1u << 3,
  kFlagUnstableFunction = 1u << 4,
  kFlagUnstableIntrinsic = 1u << 5,
  kFlagUnstableBranching = 1u << 6,
  kFlagNonfiniteDivergence = 1u << 7,
  kFlagOverflow = 1u << 8,
  kFlagInvalidOperation = 1u << 9,
};
inline constexpr int kDeviceFlagKinds = 10;

// Counts per kind over a launch's per-thread flag words: counts[k] += threads with bit k.
template <class Count>
SF_HD void reduce_flags(const uint32_t* flags, uint64_t n, Count* counts) {
  for (uint64_t t = 0; t < n; ++t)
    for (int k = 0; k < kDeviceFlagKinds; ++k) counts[k] += (flags[t] >> k) & 1u;
}

// Where a non-finite result came from (samples r of operands a, b; b may be null): divergence
// when the samples disagree on finiteness or on which non-finite value; overflow when finite
// operands gave an inf; invalid when non-NaN operands gave a NaN.
template <class T>
SF_HD uint32_t classify_nonfinite(const T* r, const T* a, const T* b, int n) {
  uint32_t f = 0;
  bool ops_finite = true, ops_nan = false, res_inf = false, res_nan = false;
  for (int i = 0; i < n; ++i) {
    const bool fi = isfinite(static_cast<double>(r[i])), f0 = isfinite(static_cast<double>(r[0]));
    const bool nan_i = isnan(static_cast<double>(r[i])), nan_0 = isnan(static_cast<double>(r[0]));
    if ((fi != f0) || (!fi && !(r[i] == r[0]) && !(nan_i && nan_0))) f |= kFlagNonfiniteDivergence;
    ops_finite &=
        isfinite(static_cast<double>(a[i])) && (!b || isfinite(static_cast<double>(b[i])));
    ops_nan |= isnan(static_cast<double>(a[i])) || (b && isnan(static_cast<double>(b[i])));
    res_inf |= isinf(static_cast<double>(r[i]));
    res_nan |= nan_i;
  }
  if (ops_finite && res_inf) f |= kFlagOverflow;
  if (!ops_nan && res_nan) f |= kFlagInvalidOperation;
  return f;
}

}  // namespace stabfuzz::cestac
