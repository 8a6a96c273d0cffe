// The engine behind Stoch: SIMD kernels, the uniforms of stochastic rounding and the noinline slow
// paths that record instabilities at their sites (the vector exp: stoch_vexp.h). Included by
// stabfuzz/stoch.h.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "stabfuzz/cestac.h"
#include "stabfuzz/gpu/cestac_core.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/stoch_vexp.h"

#define SF_ALWAYS_INLINE __attribute__((always_inline)) inline
// The slow paths record __builtin_return_address(0): the address inside the operator code where
// the inlined operation ran. Not "cold": hot/cold splitting drops the inline chain that names the
// operator line.
#define SF_SLOW_PATH __attribute__((noinline))

namespace stabfuzz::cestac {

// The lane count, the rounding patterns and their draws, random_round and random_perturb, the
// lane predicates, student_tau, digit_scale, the computational-zero test, the digit estimator and
// the cancellation rule live in stabfuzz/gpu/cestac_core.h and cestac_stats.h, shared with the
// device engine (DStoch); this file holds what only the CPU engine does (SIMD, MXCSR, the slow
// paths that record sites).

namespace detail {

template <class T>
using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;

template <class T>
SF_ALWAYS_INLINE T two_sum_err(T a, T b, T s) {
  const T bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

// ---- slow paths: reached only when an instability is possible ---------------------------------

// Records each instability kind of `flags` (cestac::DeviceFlag bits, numbered as Kind) at `site`.
inline void record_flags(uint32_t flags, uintptr_t site) {
  for (int k = 0; k < kDeviceFlagKinds; ++k)
    if ((flags >> k) & 1u) record_at(static_cast<Kind>(k), site);
}

// Where a NaN or Inf is born, and whether the samples disagree on it (cestac::classify_nonfinite).
// `a`, `b`: the operands (b nullptr when absent).
template <int N, class T>
void classify_nonfinite(const T* r, const T* a, const T* b, uintptr_t site) {
  record_flags(cestac::classify_nonfinite(r, a, b, N), site);
}

// Cancellation or a non-finite result of a + or - (detail::sum_flags: N lanes, the mean of the
// first M), recorded at `site`.
template <int N, int M, class T>
void check_sum_at(const T* a, const T* b, const T* r, int precision, uintptr_t site) {
  if (const uint32_t f = sum_flags<N, M>(a, b, r, precision, hot.cancel_digits))
    record_flags(f, site);
}

template <int N, int M, class T>
SF_SLOW_PATH void check_sum(const T* a, const T* b, const T* r, int precision) {
  check_sum_at<N, M>(a, b, r, precision, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

template <int N, class T>
SF_SLOW_PATH void check_nonfinite(const T* r, const T* a, const T* b = nullptr) {
  classify_nonfinite<N>(r, a, b, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

SF_SLOW_PATH inline void record_here(Kind k) {
  record_at(k, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}

// v with its sign flipped when `down` is set: -RU(-x) = RD(x), so a run in round toward +inf rounds
// a sample down by flipping the signs of one operand (x, /) or of both (+) and of the result.
template <class T>
SF_ALWAYS_INLINE T flip_if(T v, uint32_t down) {
  using B = Bits<T>;
  constexpr B kSign = B{1} << (sizeof(B) * 8 - 1);
  return std::bit_cast<T>(std::bit_cast<B>(v) ^ (down ? kSign : B{0}));
}

// Keeps round to nearest's answer for samples at overflow (detail::settle_sample): `op(i)`
// recomputes sample i in round to nearest; `finite_operands(i)` says whether its operands were all
// finite (an infinite operand makes an infinite result exact).
template <int L, class T, class Op, class Finite>
SF_SLOW_PATH void settle_overflow(T* r, Op op, Finite finite_operands) {
  NearestScope nearest;
  for (int i = 0; i < L; ++i) {
    if (!(std::fabs(r[i]) >= std::numeric_limits<T>::max()) || !finite_operands(i)) continue;
    r[i] = settle_sample(r[i], op(i));  // rounded down, an overflow is the largest finite value
  }
}

// The float nearest to v (ties to even) whatever the thread's rounding mode: constants of an
// operator are the same values in a CESTAC run (round toward +inf) as natively.
inline float float_nearest(double v) {
  const float f = static_cast<float>(v);
  const double g = f;
  if (g == v || !std::isfinite(v)) return f;
  const float other = std::nextafter(f, g > v ? -INFINITY : INFINITY);
  const double dg = std::fabs(g - v), dother = std::fabs(static_cast<double>(other) - v);
  if (dg != dother) return dg < dother ? f : other;
  return (std::bit_cast<uint32_t>(f) & 1u) == 0 ? f : other;
}

// ---- SIMD kernels: four lanes of float or double, every step one vector instruction -----------
// The vector types of four lanes, spelled per type: GCC drops vector_size from a type that
// depends on a template parameter.
template <class T>
struct Vec4Types;
template <>
struct Vec4Types<double> {
  typedef double V __attribute__((vector_size(32)));
  typedef int64_t M __attribute__((vector_size(32)));
};
template <>
struct Vec4Types<float> {
  typedef float V __attribute__((vector_size(16)));
  typedef int32_t M __attribute__((vector_size(16)));
};

template <class T>
struct Simd4 {
  using I = std::conditional_t<std::is_same_v<T, double>, int64_t, int32_t>;
  using V = typename Vec4Types<T>::V;
  using M = typename Vec4Types<T>::M;  // lane masks: -1 or 0
  static constexpr I kSign = std::numeric_limits<I>::min();
  static constexpr I kInfBits = std::is_same_v<T, double> ? I(0x7ff0000000000000LL) : I(0x7f800000);

  static SF_ALWAYS_INLINE V load(const T* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static SF_ALWAYS_INLINE void store(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  // Lane i is all ones when bit i of `bits` is set.
  static SF_ALWAYS_INLINE M lanes(uint32_t bits) {
    const M sel = {1, 2, 4, 8};
    const M b = {I(bits), I(bits), I(bits), I(bits)};
    return (b & sel) != 0;
  }
  // The lanes that round down under pattern `index` (< 8) of kPatterns, eight 4-bit patterns (bit i
  // of a pattern: lane i): the sign bit in those lanes. One load from a table of the eight masks.
  template <uint32_t kPatterns>
  static SF_ALWAYS_INLINE M pattern_lanes(uint32_t index) {
    struct Table {
      alignas(32) I m[8][4];
      constexpr Table() : m{} {
        for (int p = 0; p < 8; ++p)
          for (int i = 0; i < 4; ++i) m[p][i] = ((kPatterns >> (4 * p + i)) & 1) ? kSign : I(0);
      }
    };
    static constexpr Table kTable;
    return load_mask(kTable.m[index & 7u]);
  }
  static SF_ALWAYS_INLINE M load_mask(const I* p) {
    M v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static SF_ALWAYS_INLINE V flip(V v, M m) { return (V)((M)v ^ m); }
  static SF_ALWAYS_INLINE V abs(V v) { return (V)((M)v & ~kSign); }
  // The AVX/SSE instructions where the build has them (-mavx2 -mfma, stabfuzz's default on x86);
  // otherwise the same results from the compiler's vector extensions, lane by lane where needed
  // (any target GCC or Clang compiles for).
  static SF_ALWAYS_INLINE V max(V a, V b) {  // maxpd: b when either is NaN
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_max_pd((__m256d)a, (__m256d)b);
    } else {
      return (V)_mm_max_ps((__m128)a, (__m128)b);
    }
#else
    const M gt = a > b;
    return (V)((gt & (M)a) | (~gt & (M)b));
#endif
  }
  // max(|a|, |b|) (either when one is NaN: only for tests that a NaN sends to the slow path
  // anyway).
  static SF_ALWAYS_INLINE V max_abs(V a, V b) {
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_range_pd((__m256d)a, (__m256d)b, 0xB);  // absolute max, sign cleared
    } else {
      return (V)_mm_range_ps((__m128)a, (__m128)b, 0xB);
    }
#else
    return max(abs(a), abs(b));
#endif
  }
  // The exact error of s = RN(a + b), and in `mag` max(|a|, |b|) (the cancellation pre-test's).
  // With AVX-512 DQ, Fast2Sum on the operands ordered by `vrangepd` (absolute max and min, each
  // keeping its operand's sign; a tie gives one of each): two dependent operations after s where
  // 2Sum takes four. Where s is finite its error is 2Sum's (the sign of a 0 error may differ);
  // where s overflows it may be inf where 2Sum's is NaN (no lane at inf ever moves). Elsewhere
  // 2Sum: ordering by a compare and blends made the user-code suite 9 % slower under AVX2.
  static SF_ALWAYS_INLINE V add_err(V a, V b, V s, V& mag) {
#if defined(__AVX512DQ__) && defined(__AVX512VL__)
    V big, small;
    if constexpr (std::is_same_v<T, double>) {
      big = (V)_mm256_range_pd((__m256d)a, (__m256d)b, 0x7);
      small = (V)_mm256_range_pd((__m256d)a, (__m256d)b, 0x6);
    } else {
      big = (V)_mm_range_ps((__m128)a, (__m128)b, 0x7);
      small = (V)_mm_range_ps((__m128)a, (__m128)b, 0x6);
    }
    mag = abs(big);
    return small - (s - big);
#else
    mag = max_abs(a, b);
    const V bb = s - a;
    return (a - (s - bb)) + (b - bb);
#endif
  }
  // One bit per lane whose mask is set.
  static SF_ALWAYS_INLINE int movemask(M m) {
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, double>) {
      return _mm256_movemask_pd((__m256d)m);
    } else {
      return _mm_movemask_ps((__m128)m);
    }
#else
    return int(m[0] < 0) | int(m[1] < 0) << 1 | int(m[2] < 0) << 2 | int(m[3] < 0) << 3;
#endif
  }
  static SF_ALWAYS_INLINE bool all(M m) { return movemask(m) == 0xF; }
  // Every sample below the overflow threshold (false for inf, NaN and the largest finite value,
  // where directed rounding and round to nearest may disagree: see settle_overflow).
  static SF_ALWAYS_INLINE M below_overflow(V r) {
    constexpr T kMax = std::numeric_limits<T>::max();
    return abs(r) < V{kMax, kMax, kMax, kMax};
  }
  // Sufficient test that the samples are not a computational zero, with no horizontal step: every
  // sample within |s0| / 8.1 of s0 (then max - min <= 2 max|s_i - s0| < |s0| / 4.05, the bound of
  // detail::clearly_nonzero), s0 != 0.
  static SF_ALWAYS_INLINE bool clearly_nonzero(V v) {
    return movemask(not_clearly_nonzero(v)) == 0;
  }
  // The lanes that fail that test (all of them where s0 is 0 or NaN).
  static SF_ALWAYS_INLINE M not_clearly_nonzero(V v) {
    const V s0 = V{v[0], v[0], v[0], v[0]};
    return ~(abs(v - s0) * T(8.1) < abs(s0));
  }
  static SF_ALWAYS_INLINE V fma(V a, V b, V c) {
#if defined(__FMA__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
    } else {
      return (V)_mm_fmadd_ps((__m128)a, (__m128)b, (__m128)c);
    }
#else
    V r;
    for (int i = 0; i < 4; ++i) r[i] = std::fma(a[i], b[i], c[i]);
    return r;
#endif
  }
  static SF_ALWAYS_INLINE V sqrt(V a) {
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_sqrt_pd((__m256d)a);
    } else {
      return (V)_mm_sqrt_ps((__m128)a);
    }
#else
    V r;
    for (int i = 0; i < 4; ++i) r[i] = std::sqrt(a[i]);
    return r;
#endif
  }
  // ---- stochastic rounding to nearness (Rounding::nearness) -------------------------------------
  // Stochastic rounding to nearness of r + e, r = RN(exact), e the exact error (to a few bits):
  // each lane moves to the exact value's other neighbour with probability |e| / (the spacing on
  // that side) and stays otherwise (e = 0 never moves). Where r's spacing is the same on both
  // sides (r not a power of two), RN(r + fma(v, gap, e)) with v uniform in (-1/2, 1/2): the sum
  // crosses the boundary gap/2 away exactly when v gap > gap/2 - |e|, and never the other one, so
  // the dependency chain of a sum is the error-free transformation, an fma and an add (the fma
  // rounds v gap + e once; two operations, one more on the chain, cost 10 % more on a plain sum of
  // 4096 doubles). A lane at a power of two (or 0), at the largest finite value (no neighbour
  // above), inf or NaN sends the four to sr_round_sides, which compares |e| with u x the spacing
  // on e's side (a branch, rarely taken inside a chain). v: four uniforms in (-1/2, 1/2)
  // (take_uniforms). sr_round_uncollapsed below is the fast path.
  static V sr_round_sides(V r, V e, V v) {
    const M rb = (M)r;
    const M away = rb + 1, toward = rb - 1;  // r = +-0: toward is NaN bits and never taken
    const V u = v + T(0.5);
    const M same = (rb ^ (M)e) >= 0;  // the exact value lies away from zero
    const V gap = abs((V)((same & away) | (~same & toward)) - r);
    const M move = (abs(e) > u * gap) & ((rb & ~kSign) < kInfBits);
    const M n = (same & away) | (~same & toward);
    return (V)((move & n) | (~move & rb));
  }
  // Stochastic rounding, then uncollapse: every lane equal while some lane was inexact (num != 0)
  // would read as exact, so lane j (drawn with the uniforms), or the first inexact lane from j on,
  // takes its exact value's other neighbour. Without it, lanes whose exact values differ by less
  // than an ulp (after a square root, say) can all round to one value, the following operations are
  // exact, and a later cancellation shows no noise at all. Lanes that were exact or whose other
  // neighbour is infinite are never moved. Two ways to the same result, chosen by a branch that
  // follows the code, not the random draws: when every lane's r is equal (exact operands, mostly) a
  // third of the results collapse at random, so the test is branch-free there; otherwise (inside a
  // chain) a collapse is rare and its test is a branch off the dependency chain.
  static SF_ALWAYS_INLINE V sr_round_uncollapsed(V r, V e, V v, uint32_t j) {
    constexpr I kMantissa = std::is_same_v<T, double> ? I(0x000FFFFFFFFFFFFFLL) : I(0x007FFFFF);
    const M rb = (M)r;
    if (movemask(((rb & kMantissa) == 0) | ~below_overflow(r)) != 0) [[unlikely]]
      return sr_round_sides_uncollapsed(r, e, v, j);
    // Every lane's r finite, below the largest value, not a power of two: its neighbours are
    // finite and a lane may move exactly when it is inexact.
    const V gap = abs((V)(rb + 1) - r);
    const V out = r + fma(v, gap, e);
    if (movemask(r == __builtin_shufflevector(r, r, 1, 2, 3, 0)) == 0xF)
      return uncollapse_equal_normal(out, r, gap, e, j);
    if (collapsed(out, e)) [[unlikely]]
      return uncollapse(out, rb, neighbour(rb, e), movable(rb, e), j);
    return out;
  }
  // sr_round_uncollapsed's fast path alone, from the pool word x = 1 + (v + 1/2) (take_pool_word):
  // right when every lane's r is finite, below the largest value and not a power of two. Cheaper
  // (the lane j only where an uncollapse needs it, no branch to the other cases); the caller tests
  // those cases on the result (assumed_normal_failed) with its own and, when any holds, redoes
  // the rounding by sr_round_uncollapsed, which gives the same result wherever this one is right.
  static SF_ALWAYS_INLINE V sr_round_assume_normal(V r, V e, V x) {
    const V gap = abs((V)((M)r + 1) - r);
    return uncollapse_assume_normal(r + fma(x - T(1.5), gap, e), r, gap, e, x);
  }
  static SF_ALWAYS_INLINE V uncollapse_assume_normal(V out, V r, V gap, V e, V x) {
    const M rb = (M)r;
    if (movemask(r == __builtin_shufflevector(r, r, 1, 2, 3, 0)) == 0xF)
      return uncollapse_equal_normal(out, r, gap, e, first_lane(x));
    if (collapsed(out, e)) [[unlikely]]
      return uncollapse(out, rb, neighbour(rb, e), movable(rb, e), first_lane(x));
    return out;
  }
  // The lane uncollapse tries first, from the pool word (take_uniforms): the two lowest bits of
  // lane 0's k.
  static SF_ALWAYS_INLINE uint32_t first_lane(V x) {
    if constexpr (std::is_same_v<T, double>) {
      return static_cast<uint32_t>(std::bit_cast<uint64_t>(x[0]) >> 35) & 3u;
    } else {
      return (std::bit_cast<uint32_t>(x[0]) >> 6) & 3u;
    }
  }
  // What sr_round_assume_normal's result needs for the operation's fast path: in every lane, r is
  // not a power of two (nor 0 or inf) and the result is below the largest finite value (not NaN).
  static SF_ALWAYS_INLINE M assumed_normal_failed(V r, V out) {
    constexpr I kMantissa = std::is_same_v<T, double> ? I(0x000FFFFFFFFFFFFFLL) : I(0x007FFFFF);
    return (((M)r & kMantissa) == 0) | ~below_overflow(out);
  }
  static V sr_round_sides_uncollapsed(V r, V e, V v, uint32_t j) {
    const V out = sr_round_sides(r, e, v);
    const M rb = (M)r;
    if (collapsed(out, e)) return uncollapse(out, rb, neighbour(rb, e), movable(rb, e), j);
    return out;
  }
  // Every lane equal while some lane was inexact (num != 0).
  static SF_ALWAYS_INLINE bool collapsed(V out, V num) {
    const V rot = __builtin_shufflevector(out, out, 1, 2, 3, 0);
    if (movemask(out == rot) != 0xF) [[likely]]
      return false;
    return movemask(abs(num) > V{}) != 0;
  }
  // The exact value's other neighbour (bits), r's on num's side.
  static SF_ALWAYS_INLINE M neighbour(M rb, V num) { return rb + (((rb ^ (M)num) >= 0) & 2) - 1; }
  // One bit per lane that uncollapse may move: inexact, r finite and its other neighbour finite.
  static SF_ALWAYS_INLINE uint32_t movable(M rb, V num) {
    const M n = neighbour(rb, num);
    return static_cast<uint32_t>(
        movemask((abs(num) > V{}) & ((rb & ~kSign) < kInfBits) & ((n & ~kSign) < kInfBits)));
  }
  // Uncollapse without a branch on the draws, for lanes of equal r (sr_round_uncollapsed's fast
  // path: r normal, not a power of two, so its spacing `gap` is the same on both sides and the
  // exact value's other neighbour is r + gap with e's sign): every lane of out is r or that
  // neighbour n, so the other one is out ^ r ^ n (bits); lane j moves when the lanes collapsed and
  // it is inexact. Lanes of mixed exactness (equal results of unequal operands: rare) go to
  // uncollapse, where the first inexact lane from j on moves (lane j itself when it is inexact).
  static SF_ALWAYS_INLINE V uncollapse_equal_normal(V out, V r, V gap, V e, uint32_t j) {
    const V rot = __builtin_shufflevector(out, out, 1, 2, 3, 0);
    const V n = r + (V)((M)gap | ((M)e & kSign));
#if defined(__AVX512F__) && defined(__AVX512VL__)
    // The same with mask registers: the lanes to flip go straight to a masked xor.
    __mmask8 inexact, unequal;
    if constexpr (std::is_same_v<T, double>) {
      inexact = _mm256_cmp_pd_mask((__m256d)e, __m256d{}, _CMP_NEQ_UQ);
      unequal = _mm256_cmp_pd_mask((__m256d)out, (__m256d)rot, _CMP_NEQ_UQ);
    } else {
      inexact = _mm_cmp_ps_mask((__m128)e, __m128{}, _CMP_NEQ_UQ);
      unequal = _mm_cmp_ps_mask((__m128)out, (__m128)rot, _CMP_NEQ_UQ);
    }
    const uint32_t mov = inexact, c = unequal == 0;
    if (c & (((mov + 1) & 14u) != 0)) [[unlikely]]  // mov neither 0 nor every lane
      return uncollapse(out, (M)r, (M)n, mov, j);
    const __mmask8 flip = static_cast<__mmask8>(mov & (c << j));
    if constexpr (std::is_same_v<T, double>) {
      return (V)_mm256_mask_xor_pd((__m256d)out, flip, (__m256d)out, (__m256d)((M)r ^ (M)n));
    } else {
      return (V)_mm_mask_xor_ps((__m128)out, flip, (__m128)out, (__m128)((M)r ^ (M)n));
    }
#else
    const M inexact = e != V{};  // e is finite where r is normal
    const uint32_t mov = static_cast<uint32_t>(movemask(inexact));
    const uint32_t c = static_cast<uint32_t>(movemask(out == rot) == 0xF);
    if (c & (((mov + 1) & 14u) != 0)) [[unlikely]]  // mov neither 0 nor every lane
      return uncollapse(out, (M)r, (M)n, mov, j);
    return (V)((M)out ^ (((M)r ^ (M)n) & inexact & lanes(c << j)));
#endif
  }
  // The rare uncollapse: the first movable lane from j on takes its other neighbour n (if none
  // can, the result stays collapsed).
  static V uncollapse(V out, M rb, M n, uint32_t movable, uint32_t j) {
    if (movable == 0) return out;
    const M ob = (M)out;
    const uint32_t from_j = ((movable >> j) | (movable << (4 - j))) & 15u;
    const uint32_t i = (static_cast<uint32_t>(std::countr_zero(from_j)) + j) & 3u;
    const M force = lanes(1u << i);
    const M alt = ((ob == rb) & n) | (~(ob == rb) & rb);
    return (V)((force & alt) | (~force & ob));
  }

  // random_round on four lanes: x = RN(exact), e has the sign of exact - x, `up` the lanes
  // rounding toward +inf. Branch-free; infinite x never moves, finite x never steps to inf.
  static SF_ALWAYS_INLINE V random_round(V x, V e, M up) {
    const M rb = (M)x, eb = (M)e;
    M move = (up & (e > 0)) | (~up & (e < 0));
    move &= (rb & ~kSign) < kInfBits;
    const M same = (rb ^ eb) >= 0;
    M stepped = rb + ((same & 2) - 1);
    const M zero = x == 0;
    stepped = (zero & ((eb & kSign) | 1)) | (~zero & stepped);
    move &= (stepped & ~kSign) < kInfBits;  // no sample steps from finite to inf
    return (V)((move & stepped) | (~move & rb));
  }
};

// ---- the uniforms of the four-lane nearness operations (cestac::UniformPool) -----------------
using U64x4 = uint64_t __attribute__((vector_size(32)));
// xoshiro256+ on four independent lanes: the next four 64-bit words. Its low bits are its weak
// ones; the pool takes the top 17 bits of each word.
SF_ALWAYS_INLINE U64x4 xoshiro4_next(U64x4 (&s)[4]) {
  const U64x4 r = s[0] + s[3];
  const U64x4 t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return r;
}
// Refills the pool of T (double or float) with kUniformBlock operations' uniforms, three from
// each xoshiro4_next: bits 47-63, 30-46 and 13-29 of each lane's word (17 bits k) become 1 + (k +
// 1/2) 2^-17 (k in the mantissa's top 17 bits, the half cell below them). Returns 0, the first
// entry.
template <class T>
SF_SLOW_PATH uint32_t refill_uniforms(UniformPool& p) {
  U64x4 s[4];
  __builtin_memcpy(s, p.state, sizeof s);
  using U32x4 = uint32_t __attribute__((vector_size(16)));
  for (int e = 0; e < kUniformBlock; e += 3) {
    const U64x4 w = xoshiro4_next(s);
    if constexpr (std::is_same_v<T, double>) {
      constexpr uint64_t kK = 0x000FFFF800000000ULL, kOne = 0x3FF0000400000000ULL;  // 35..51, 34
      const U64x4 x0 = ((w >> 12) & kK) | kOne, x1 = ((w << 5) & kK) | kOne,
                  x2 = ((w << 22) & kK) | kOne;
      __builtin_memcpy(p.d[e], &x0, sizeof x0);
      __builtin_memcpy(p.d[e + 1], &x1, sizeof x1);
      __builtin_memcpy(p.d[e + 2], &x2, sizeof x2);
    } else {
      constexpr uint64_t kK = 0x7FFFC0, kOne = 0x3F800020;  // k in bits 6..22, the half in 5
      const U32x4 x0 = __builtin_convertvector(((w >> 41) & kK) | kOne, U32x4),
                  x1 = __builtin_convertvector(((w >> 24) & kK) | kOne, U32x4),
                  x2 = __builtin_convertvector(((w >> 7) & kK) | kOne, U32x4);
      __builtin_memcpy(p.f[e], &x0, sizeof x0);
      __builtin_memcpy(p.f[e + 1], &x1, sizeof x1);
      __builtin_memcpy(p.f[e + 2], &x2, sizeof x2);
    }
  }
  __builtin_memcpy(p.state, s, sizeof s);
  return 0;
}
// Advances the pool of T as n take_uniforms calls would.
template <class T>
inline void skip_uniforms(uint64_t n) {
  UniformPool& p = uniform_pool;
  uint32_t& next = std::is_same_v<T, double> ? p.next_d : p.next_f;
  while (n > 0) {
    if (next >= kUniformBlock) next = refill_uniforms<T>(p);
    const uint64_t take = std::min<uint64_t>(n, kUniformBlock - next);
    next += static_cast<uint32_t>(take);
    n -= take;
  }
}
// The next four-lane operation's pool word x = 1 + u per lane (v = x - 3/2: take_uniforms).
template <class T>
SF_ALWAYS_INLINE typename Simd4<T>::V take_pool_word() {
  using S4 = Simd4<T>;
  UniformPool& p = uniform_pool;
  if constexpr (std::is_same_v<T, double>) {
    uint32_t i = p.next_d;
    if (i >= kUniformBlock) [[unlikely]]
      i = refill_uniforms<double>(p);
    p.next_d = i + 1;
    return S4::load(p.d[i]);
  } else {
    uint32_t i = p.next_f;
    if (i >= kUniformBlock) [[unlikely]]
      i = refill_uniforms<float>(p);
    p.next_f = i + 1;
    return S4::load(p.f[i]);
  }
}
// The uniforms v in (-1/2, 1/2) of the next four-lane operation of sample type T
// (Simd4::sr_round), and the lane uncollapse tries first (the two lowest bits of lane 0's k).
template <class T>
SF_ALWAYS_INLINE typename Simd4<T>::V take_uniforms(HotState&, uint32_t& first_lane) {
  const auto x = take_pool_word<T>();
  first_lane = Simd4<T>::first_lane(x);
  return x - T(1.5);
}

// Per-sample storage and precision of a Stoch over T: f16/bf16 samples are floats holding exact
// values of the format.
template <class T>
struct SampleTraits {
  using Sample = T;
  static constexpr bool kLow = false;
  static constexpr int kPrecision = std::numeric_limits<T>::digits;
};
template <const Format& F>
struct SampleTraits<LowFloat<F>> {
  using Sample = float;
  static constexpr bool kLow = true;
  static constexpr int kPrecision = F.p;
};

// x computed in double (exact for +, -, x of f16/bf16 values; 53 bits otherwise) rounded to the
// format: round to nearest, then to the other neighbour with probability 1/2 when the exact
// value lies on its side.
template <const Format& F>
SF_ALWAYS_INLINE float random_round_format(double x, uint32_t up) {
  double r = round_to_format(F, x);
  const double e = x - r;
  if (e != 0 && std::isfinite(r) && (up ? e > 0 : e < 0)) {
    const double n = format_neighbour(F, r, e);
    if (std::isfinite(n)) r = n;  // as for float and double: no sample steps from finite to inf
  }
  return static_cast<float>(r);
}

// The cancellation pre-test of + as lane masks: |r| >= max(|a|, |b|) (`mag`) x the cancellation
// ratio (the nearness + tests it with Simd4::assumed_normal_failed in one test).
template <class T>
SF_ALWAYS_INLINE typename Simd4<T>::M add_ratio_ok(typename Simd4<T>::V mag,
                                                   typename Simd4<T>::V vr, const HotState& ts) {
  using S4 = Simd4<T>;
  return S4::abs(vr) >= mag * static_cast<T>(ts.cancel_ratio);
}
// The fast paths' tests of Stoch's +, x and /: true when nothing needs the slow path (no sample at
// overflow, no exponent drop that may be a cancellation, no operand that may be a computational
// zero; with detection off the cancellation ratio is 0 and only overflow is tested).
template <class T>
SF_ALWAYS_INLINE bool add_fast_ok(typename Simd4<T>::V va, typename Simd4<T>::V vb,
                                  typename Simd4<T>::V vr, const HotState& ts) {
  using S4 = Simd4<T>;  // a NaN operand fails below_overflow(vr) whatever max_abs gives
  return S4::all(S4::below_overflow(vr) & add_ratio_ok<T>(S4::max_abs(va, vb), vr, ts));
}
template <class T>
SF_ALWAYS_INLINE bool mul_fast_ok(typename Simd4<T>::V va, typename Simd4<T>::V vb,
                                  typename Simd4<T>::V vr, const HotState& ts) {
  using S4 = Simd4<T>;
  return S4::all(S4::below_overflow(vr)) &&
         !(ts.detect && !S4::clearly_nonzero(va) && !S4::clearly_nonzero(vb));
}
template <class T>
SF_ALWAYS_INLINE bool div_fast_ok(typename Simd4<T>::V vb, typename Simd4<T>::V vr,
                                  const HotState& ts) {
  using S4 = Simd4<T>;
  return S4::all(S4::below_overflow(vr)) && !(ts.detect && !S4::clearly_nonzero(vb));
}

}  // namespace detail

}  // namespace stabfuzz::cestac
