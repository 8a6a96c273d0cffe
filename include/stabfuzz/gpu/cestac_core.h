// CESTAC logic shared by the CPU engine (Stoch) and the device type (DStoch), as
// __host__ __device__ code: the RNG, the lane count, the rounding patterns and how an operation
// draws them, the rounding of elementary-function results and the instability flags. The
// statistics (computational zero, digits, cancellation) follow in cestac_stats.h.
//
// This header compiles without nvcc (clang and gcc host code, tested on the CPU by
// tests/cestac/cestac_core_test.cc and dstoch_host_test.cc): SF_HD expands to __host__ __device__
// only under a CUDA compiler. Everything here is plain arithmetic on float/double/long double, no
// std:: calls that device code lacks (the global ::log10, ::sqrt, ::fabs exist on both sides).
// Arithmetic whose rounding matters goes through fp:: (below), so that nvcc's default -fmad=true
// cannot contract it into an fma on the device.
#pragma once

#include <math.h>
#include <stdint.h>

#include <type_traits>

#if defined(__CUDACC__)
#define SF_HD __host__ __device__ __forceinline__
#define SF_HD_INLINE __host__ __device__ __forceinline__
#else
#define SF_HD inline
#define SF_HD_INLINE __attribute__((always_inline)) inline
#endif

namespace stabfuzz::cestac {

// ---- RNG: counter-based, keyed, so a run (or a launch) replays bit for bit from its seed ------

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
// The k-th 64-bit word of a stream.
SF_HD constexpr uint64_t stream_word(uint64_t key, uint64_t k) {
  return mix64(key + 0x9e3779b97f4a7c15ULL * k);
}
// The key of one device thread of a launch: distinct threads get unrelated streams.
SF_HD constexpr uint64_t thread_key(uint64_t launch_key, uint64_t thread) {
  return mix64(launch_key ^ mix64(thread * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL));
}

// ---- how a run rounds each sample --------------------------------------------------------------
// nearness (the default): stochastic rounding to nearness, as Verificarlo's and Verrou's
// stochastic modes do. Each sample of an inexact result moves from round to nearest's value to the
// other neighbour of the exact value with probability |exact - RN| / (distance between the two
// neighbours), from the exact error of the operation (error-free transformations, computed in
// round to nearest). The expected value of every sample is the exact result, so long sums with a
// repeating rounded-off fraction (offset sums, means of shifted data) do not drift together.
// updown: CADNA's random rounding, up or down with probability 1/2 (two lanes each way,
// balanced patterns), in a run switched to round toward +inf. Cheaper, but biased when the
// rounded-off fraction repeats from one operation to the next: every sample drifts the same way
// and their spread shows only the random part. Kept to measure the two side by side.
enum class Rounding : uint8_t { nearness, updown };

// ---- lanes and rounding patterns: one definition for both engines ------------------------------
// Both engines compute every value in four lanes by default: the CPU's Stoch<T, 3> holds 4 lanes
// (one SIMD vector; CADNA's N = 3 names it), the device's DStoch<T, 4> holds 4. The value a run
// reports is the mean of the N = 3 samples (lanes 0-2); the spread is taken over all four lanes
// (three degrees of freedom, tau = student_tau(4) = 3.182): the fourth lane, computed for free in
// the same vector, sharpens the spread without entering the mean. The digit count
// (digit_scale(4)), the computational-zero, cancellation and comparison tests read that mean and
// that spread (one definition, so that digits() == 0 exactly when the value is a computational
// zero); the non-finite tests read every lane. Why not the mean of all four lanes: when an
// operation's error is a half or a quarter of the gap between its two neighbours (x - max in a
// softmax, 5 y in a recurrence, two operands a few binades apart), stochastic rounding sends 2 or
// 1 of 4 lanes up with probability 0.38-0.42, and the mean of an even number of lanes then lands
// on the exact value while the spread shows the full rounding error: on the broad calibration
// suite's tuning seeds, 6.9 % (f64) of the claims were more than a digit short with a 4-lane mean,
// 3.1 % with the 3-sample mean, at the same overclaim (docs/verdict.md).
inline constexpr int kDefaultLanes = 4;
inline constexpr int kDefaultSamples = 3;
// Lanes computed for N samples (CPU: Stoch<T, N>) and the samples a mean averages in L lanes
// (device: DStoch<T, L>): 3 samples in 4 lanes, otherwise one sample per lane.
SF_HD constexpr int lanes_for_samples(int n) { return n == 3 ? 4 : n; }
SF_HD constexpr int samples_for_lanes(int lanes) { return lanes == 4 ? 3 : lanes; }

// The rounding directions of one four-lane operation: two lanes round up and two down, in one of
// the six such patterns picked by a 3-bit index (0011 and 1100 twice, so that a uniform index
// leaves each lane down with probability 1/2); bit i set: lane i rounds toward -inf (+, -, x, /,
// sqrt, fma). Each lane is still a random-rounding run on its own, but an inexact result can never
// have all tested samples equal (no pattern has lanes 0-2 alike): with independent directions
// 1 operation in 8 would round every lane the same way and pass for exact, and a cancellation of
// such values shows no noise at all (the naive one-pass variance then claimed full digits with
// none correct in `stabfuzz calibrate`; with the device's former independent directions the GPU
// self-test's {1, 1e8, -1e8} went unseen at 113 of 1000 seeds).
inline constexpr uint32_t kBalancedPatterns = 0xC3CA9653u;
SF_HD constexpr uint32_t balanced_pattern(uint32_t index) {
  return (kBalancedPatterns >> (4 * (index & 7u))) & 15u;
}
SF_HD constexpr bool lane_bit(uint32_t bits, int lane) { return (bits >> lane) & 1u; }

// 63 fresh random bits of word k under a sentinel 1 bit: what the draws below consume.
SF_HD constexpr uint64_t fresh_bits(uint64_t key, uint64_t k) {
  return (stream_word(key, k) >> 1) | (uint64_t{1} << 63);
}

// ---- draws from a thread's stream -------------------------------------------------------------
// A stream state is any struct with `uint64_t key, counter, word, pattern_word` (the CPU's
// HotState, the device's DThreadState): `word` feeds random_bits, `pattern_word` the pattern
// indices, both below a sentinel 1 bit, refilled from words 1, 2, ... of the stream in the order
// they run out (the pattern word starts with word 0). Given the same key and the same sequence of
// operations, both engines draw the same bits.
template <class S>
SF_HD void start_stream(S& st, uint64_t key) {
  st.key = key;
  st.counter = 0;
  st.word = 1;  // empty: the first random_bits takes word 1
  st.pattern_word = fresh_bits(key, 0);
}

// Draws `n` (<= 32) random bits (elementary functions: two per lane).
template <class S>
SF_HD_INLINE uint32_t random_bits(S& ts, int n) {
  uint64_t w = ts.word;
  if (__builtin_expect((w >> n) == 0, 0)) w = fresh_bits(ts.key, ++ts.counter);
  ts.word = w >> n;
  return static_cast<uint32_t>(w & ((uint64_t{1} << n) - 1));
}

// The 3-bit index of a four-lane operation's rounding pattern, with no refill on this path: the
// CPU tests pattern_word_low() and refills (refill_pattern_word) in the slow path it takes for
// other rare cases anyway, so that the inline operation holds no extra branch or call. The effect
// on the stream is take_pattern_index_refill's.
template <class S>
SF_HD_INLINE uint32_t take_pattern_index(S& ts) {
  const uint64_t w = ts.pattern_word;
  ts.pattern_word = w >> 3;
  return static_cast<uint32_t>(w & 7u);
}
// Whether fewer than 3 bits are left for the next operation.
template <class S>
SF_HD_INLINE bool pattern_word_low(const S& ts) {
  return (ts.pattern_word >> 3) == 0;
}
// 63 fresh bits under the sentinel when fewer than 3 are left.
template <class S>
SF_HD void refill_pattern_word(S& ts) {
  if (pattern_word_low(ts)) ts.pattern_word = fresh_bits(ts.key, ++ts.counter);
}
template <class S>
SF_HD_INLINE uint32_t take_pattern_index_refill(S& ts) {
  const uint32_t i = take_pattern_index(ts);
  if (__builtin_expect(pattern_word_low(ts), 0)) refill_pattern_word(ts);
  return i;
}
// The rounding directions of one operation on `lanes` lanes, bit i set when lane i rounds down:
// a balanced pattern for four lanes, independent bits otherwise.
template <class S>
SF_HD_INLINE uint32_t rounding_bits(S& ts, int lanes) {
  return lanes == 4 ? balanced_pattern(take_pattern_index_refill(ts)) : random_bits(ts, lanes);
}

// The exponent drop (bits) that sends a + or - to the cancellation test: a +/- can only lose k
// digits if the exponent drops by at least k log2(10) - 1 bits (both engines, from cancel_digits).
SF_HD int cancel_bits_for(int cancel_digits) {
  const int bits = static_cast<int>(floor(cancel_digits * 3.321928 - 1));
  return bits < 1 ? 1 : bits;
}

// ---- formats and arithmetic that nvcc may not contract ------------------------------------------
template <class T>
struct FloatBits;
template <>
struct FloatBits<double> {
  using U = uint64_t;
  static constexpr U kSign = U{1} << 63, kInf = 0x7ff0000000000000ULL;
  static constexpr int kMant = 52, kExpMask = 0x7ff, kPrecision = 53, kEmin = -1022;
  static constexpr double kMax = 1.7976931348623157e308;
};
template <>
struct FloatBits<float> {
  using U = uint32_t;
  static constexpr U kSign = U{1} << 31, kInf = 0x7f800000u;
  static constexpr int kMant = 23, kExpMask = 0xff, kPrecision = 24, kEmin = -126;
  static constexpr float kMax = 3.40282347e38f;
};

SF_HD uint64_t to_bits(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  return b;
#endif
}
SF_HD uint32_t to_bits(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__float_as_int(x));
#else
  uint32_t b;
  __builtin_memcpy(&b, &x, sizeof b);
  return b;
#endif
}
template <class T>
SF_HD T from_bits(typename FloatBits<T>::U b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 8)
    return __longlong_as_double(static_cast<long long>(b));
  else
    return __int_as_float(static_cast<int>(b));
#else
  T x;
  __builtin_memcpy(&x, &b, sizeof x);
  return x;
#endif
}

// a + b, a - b, a x b, a / b rounded by the format's default (round to nearest on the device; the
// thread's mode on the host, where the CPU engine runs parts of its statistics in a run's round
// toward +inf), never contracted into an fma: nvcc contracts a * b + c by default (-fmad=true).
namespace fp {
#if defined(__CUDA_ARCH__)
SF_HD float add(float a, float b) { return __fadd_rn(a, b); }
SF_HD double add(double a, double b) { return __dadd_rn(a, b); }
SF_HD float sub(float a, float b) { return __fsub_rn(a, b); }
SF_HD double sub(double a, double b) { return __dsub_rn(a, b); }
SF_HD float mul(float a, float b) { return __fmul_rn(a, b); }
SF_HD double mul(double a, double b) { return __dmul_rn(a, b); }
SF_HD float div(float a, float b) { return __fdiv_rn(a, b); }
SF_HD double div(double a, double b) { return __ddiv_rn(a, b); }
#else
template <class T>
SF_HD_INLINE T add(T a, T b) {
  return a + b;
}
template <class T>
SF_HD_INLINE T sub(T a, T b) {
  return a - b;
}
template <class T>
SF_HD_INLINE T mul(T a, T b) {
  return a * b;
}
template <class T>
SF_HD_INLINE T div(T a, T b) {
  return a / b;
}
#endif
}  // namespace fp

namespace detail {

// Biased exponent field of |x| (0 for zero and subnormals).
template <class T>
SF_HD_INLINE int exponent_field(T x) {
  return static_cast<int>((to_bits(x) >> FloatBits<T>::kMant) & FloatBits<T>::kExpMask);
}

// ---- rounding of results whose exact side is known or not -------------------------------------

// r = RN(x) with exact error x - r of sign e. `up` picks rounding toward +inf, else toward -inf:
// the result moves to r's neighbour on e's side when that is the chosen directed rounding.
// Branch-free (integer selects): the direction is random, so a branch would mispredict half the
// time. NaN or zero e never moves; an infinite r never moves (every sample of an overflow agrees
// on inf, as in round to nearest), nor does a finite r step to inf (rounding up past the largest
// finite value would make one sample overflow where round to nearest does not).
template <class T>
SF_HD_INLINE T random_round(T r, T e, uint32_t up) {
  using B = typename FloatBits<T>::U;
  constexpr B kSign = FloatBits<T>::kSign, kInf = FloatBits<T>::kInf;
  const B rb = to_bits(r), eb = to_bits(e);
  const bool move = (up ? (e > 0) : (e < 0)) & ((rb & ~kSign) < kInf);
  const B same_sign = static_cast<B>(((rb ^ eb) & kSign) == 0);  // away from zero: +1 ulp
  B stepped = rb + same_sign + same_sign - 1;                    // else -1 ulp
  stepped = (r == 0) ? ((eb & kSign) | 1) : stepped;             // 0: smallest subnormal
  const bool stays_finite = (stepped & ~kSign) < kInf;
  return from_bits<T>((move && stays_finite) ? stepped : rb);
}

// Stochastic rounding to nearness of one sample: r is a neighbour of the exact value (round to
// nearest's, or any faithful rounding), `num` / `den` (den > 0) the exact error exact - r, known
// to a few bits with its exact sign (num = 0: r is exact). r moves one ulp toward the exact value
// when u * (distance to that neighbour) * den < |num|, u uniform in (0, 1): with probability
// |exact - r| / gap. Infinite r (e NaN) and a finite r whose neighbour is inf never move.
// SrChoice: the rounded sample, the exact value's other neighbour (what uncollapse may take
// instead) and whether the operation was inexact with a finite other neighbour.
template <class T>
struct SrChoice {
  T value, other;
  bool inexact;
};
template <class T>
SF_HD_INLINE SrChoice<T> sr_choice(T r, T num, T den, T u) {
  using B = typename FloatBits<T>::U;
  constexpr B kSign = FloatBits<T>::kSign, kInf = FloatBits<T>::kInf;
  const B rb = to_bits(r), eb = to_bits(num);
  const B same_sign = static_cast<B>(((rb ^ eb) & kSign) == 0);  // away from zero: +1 ulp
  const B stepped = r == 0 ? ((eb & kSign) | 1) : rb + same_sign + same_sign - 1;
  const T n = from_bits<T>(stepped);
  const bool inexact = fabs(num) > T(0) && (rb & ~kSign) < kInf && (stepped & ~kSign) < kInf;
  const bool move = inexact && fp::mul(fp::mul(u, fabs(fp::sub(n, r))), den) < fabs(num);
  return {move ? n : r, move ? r : n, inexact};
}
template <class T>
SF_HD_INLINE T sr_round(T r, T num, T den, T u) {
  return sr_choice(r, num, den, u).value;
}
// u in (0, 1) from 16 random bits: the midpoint of one of 2^16 cells (exact in float and double),
// so that the probability of moving is within 2^-17 of |e| / gap.
SF_HD_INLINE double uniform16(uint32_t bits16) { return ((bits16 & 0xFFFFu) + 0.5) * 0x1p-16; }

// A result whose exact side is unknown (libm's, within ~1 ulp): kept with probability 1/2, else
// moved one ulp up or down at random (bits2: bit 0 move, bit 1 up). Its spread matches random
// rounding's. Results libm returns exactly at special points (0, +-1: exp(-huge), log(1),
// erf(huge), tanh(huge)) are kept: moving them would flip a sign or leave the function's range.
template <class T>
SF_HD_INLINE T random_perturb(T r, uint32_t bits2) {
  const T dir = (bits2 & 2u) ? T(1) : T(-1);
  const bool special = r == T(0) || r == T(1) || r == T(-1);
  return random_round(r, ((bits2 & 1u) && !special) ? dir : T(0), (bits2 & 2u) ? 1u : 0u);
}

// A float sample of an elementary function evaluated in double (w): rounded to float toward the
// side of w chosen by `up` (double's result decides the side of the exact value).
SF_HD_INLINE float round_wide_to_float(double w, uint32_t up) {
  const float x = static_cast<float>(w);
  return random_round(x, static_cast<float>(fp::sub(w, static_cast<double>(x))), up);
}

// ---- lane predicates ----------------------------------------------------------------------------
template <int N, class T>
SF_HD_INLINE bool all_finite(const T* s) {
  T acc = 0;
  for (int i = 0; i < N; ++i) acc = fp::add(acc, fp::sub(s[i], s[i]));  // NaN unless all finite
  return acc == 0;
}
template <int N, class T>
SF_HD_INLINE bool all_equal(const T* s) {
  bool eq = true;
  for (int i = 1; i < N; ++i) eq &= (s[i] == s[0]);
  return eq;
}
// Whether a sample is NaN, infinite or the largest finite value (where directed rounding and
// round to nearest may disagree on overflow): the entry test of the overflow settling.
template <int L, class T>
SF_HD_INLINE bool any_at_overflow(const T* s) {
  bool any = false;
  for (int i = 0; i < L; ++i) any |= !(fabs(s[i]) < FloatBits<T>::kMax);
  return any;
}
// Directed rounding sends an overflowing sample to inf (up) or to the largest finite value
// (down). CESTAC keeps round to nearest's answer `nearest` for overflow instead: a result that
// overflows in round to nearest is inf in every sample, one that does not stays finite in every
// sample, so that samples never disagree on an overflow only because of the direction. Applies
// to a sample at overflow (|r| >= max) whose operands were finite.
template <class T>
SF_HD_INLINE T settle_sample(T r, T nearest) {
  return isinf(nearest) ? nearest : (isinf(r) ? copysign(FloatBits<T>::kMax, r) : r);
}

}  // namespace detail

// ---- instability flags (device threads) ------------------------------------------------------
// One bit per instability kind, numbered as cestac::Kind (cestac.h; a static_assert in
// targets/cuda/cuda_targets.cc keeps the two in step). A device thread ORs the kinds it met into
// one word; the launch's words are reduced on the host into counts per kind (threads that met it).
// The CPU engine records the same bits at the operation's site (detail::record_flags).
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

// Where a non-finite result came from (the first n samples of r and of operands a, b; b may be
// null): divergence when the samples disagree on finiteness or on which non-finite value; overflow
// when finite operands gave an inf; invalid when non-NaN operands gave a NaN.
template <class T>
SF_HD uint32_t classify_nonfinite(const T* r, const T* a, const T* b, int n) {
  uint32_t f = 0;
  bool ops_finite = true, ops_nan = false, res_inf = false, res_nan = false;
  for (int i = 0; i < n; ++i) {
    const bool fi = isfinite(r[i]), f0 = isfinite(r[0]);
    const bool nan_i = isnan(r[i]), nan_0 = isnan(r[0]);
    if ((fi != f0) || (!fi && !(r[i] == r[0]) && !(nan_i && nan_0))) f |= kFlagNonfiniteDivergence;
    ops_finite &= isfinite(a[i]) && (!b || isfinite(b[i]));
    ops_nan |= isnan(a[i]) || (b && isnan(b[i]));
    res_inf |= isinf(r[i]);
    res_nan |= nan_i;
  }
  if (ops_finite && res_inf) f |= kFlagOverflow;
  if (!ops_nan && res_nan) f |= kFlagInvalidOperation;
  return f;
}

}  // namespace stabfuzz::cestac

#include "stabfuzz/gpu/cestac_stats.h"
