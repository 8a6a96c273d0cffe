// DStoch<T, L>: the CESTAC scalar on the device. L lanes (samples) of float or double, each
// rounded stochastically to nearness (the default: round to nearest, the exact error by an
// error-free transformation, cestac::detail::sr_choice per lane, then uncollapse, as the CPU
// engine's lane-by-lane path) or, in a thread state made with Rounding::updown, up or down by the
// per-instruction directed-rounding intrinsics.
//
// DStoch<T, 4> is the device twin of the CPU engine's default Stoch<T, 3>: the same four lanes,
// the same stochastic rounding to nearness (drawn lane by lane from the stream: the CPU's
// four-lane vector path draws from a pool instead), in up-or-down rounding the same balanced
// patterns drawn the same way from the same kind of stream, the same statistics and instability
// tests (the mean of lanes 0-2, the spread of all four: cestac_core.h,
// cestac_stats.h; DStoch<T, L> for L != 4 mirrors Stoch<T, L>). Each thread's stream is keyed by
// thread_key(launch key, linear thread id), so a launch replays bit for bit from its seed whatever
// the scheduling; its state (stream, flags) lives in a per-thread slot of global memory
// (g_dstoch_states, set before each launch) and the host reduces the flag words after the launch.
//
// Compiled by nvcc for the device, and as plain host code by any C++ compiler (no __CUDACC__):
// the intrinsics then come from stabfuzz/gpu/dstoch_host.h (exact, in round to nearest) and the
// state from the calling host thread (HostThread), which is how tests compare the two engines.
// Every floating-point operation whose rounding matters is an intrinsic or goes through
// cestac::fp::, so nvcc's default contraction (-fmad=true) cannot change what a sample computes;
// never build it with --use_fast_math.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "stabfuzz/gpu/cestac_core.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define SF_DEV __device__ __forceinline__
#define SF_DEV_FN __device__
#else
#include <cmath>

#include "stabfuzz/gpu/dstoch_host.h"
#define SF_DEV inline
#define SF_DEV_FN
#endif

namespace stabfuzz::gpu {

// One device thread's CESTAC state (one slot per thread of a launch). The stream fields are the
// CPU's HotState's (cestac::start_stream and the draws work on both).
struct DThreadState {
  uint64_t key;
  uint64_t counter;
  uint64_t word;          // random bits of elementary functions, below a sentinel 1 bit
  uint64_t pattern_word;  // rounding-pattern indices, below a sentinel 1 bit
  double cancel_ratio;    // a +/- with |r| < cancel_ratio max(|a|, |b|) is tested (0: never)
  uint32_t flags;         // cestac::DeviceFlag bits met by this thread
  int32_t cancel_digits;  // k of the cancellation rule
  int32_t cancel_bits;    // exponent drop that sends a +/- to the cancellation test (L != 4)
  int32_t detect;         // instability detection on
  int32_t nearness;       // 1: stochastic rounding to nearness (the default); 0: up or down
};

// The state of a thread whose stream is keyed by `key`, as cestac::Run sets up the CPU's.
SF_HD DThreadState make_thread_state(uint64_t key, int cancel_digits, bool detect,
                                     cestac::Rounding rounding = cestac::Rounding::nearness) {
  DThreadState st{};
  cestac::start_stream(st, key);
  st.flags = 0;
  st.nearness = rounding == cestac::Rounding::nearness ? 1 : 0;
  st.cancel_digits = cancel_digits;
  st.cancel_bits = cestac::cancel_bits_for(cancel_digits);
  st.detect = detect ? 1 : 0;
  st.cancel_ratio = detect ? ldexp(1.0, -st.cancel_bits) : 0.0;
  return st;
}

#if defined(__CUDACC__)
// The launch's state slots, indexed by linear thread id (set by the host before each launch).
__device__ DThreadState* g_dstoch_states;

__device__ __forceinline__ uint64_t linear_thread_id() {
  const uint64_t block =
      blockIdx.x + uint64_t(gridDim.x) * (blockIdx.y + uint64_t(gridDim.y) * blockIdx.z);
  const uint64_t in_block =
      threadIdx.x + blockDim.x * (threadIdx.y + uint64_t(blockDim.y) * threadIdx.z);
  return block * (uint64_t(blockDim.x) * blockDim.y * blockDim.z) + in_block;
}
__device__ __forceinline__ DThreadState& dstate() { return g_dstoch_states[linear_thread_id()]; }

// ---- directed-rounding primitives, one overload per format --------------------------------------
__device__ __forceinline__ float add_dir(float a, float b, bool up) {
  return up ? __fadd_ru(a, b) : __fadd_rd(a, b);
}
__device__ __forceinline__ double add_dir(double a, double b, bool up) {
  return up ? __dadd_ru(a, b) : __dadd_rd(a, b);
}
__device__ __forceinline__ float mul_dir(float a, float b, bool up) {
  return up ? __fmul_ru(a, b) : __fmul_rd(a, b);
}
__device__ __forceinline__ double mul_dir(double a, double b, bool up) {
  return up ? __dmul_ru(a, b) : __dmul_rd(a, b);
}
__device__ __forceinline__ float div_dir(float a, float b, bool up) {
  return up ? __fdiv_ru(a, b) : __fdiv_rd(a, b);
}
__device__ __forceinline__ double div_dir(double a, double b, bool up) {
  return up ? __ddiv_ru(a, b) : __ddiv_rd(a, b);
}
__device__ __forceinline__ float sqrt_dir(float a, bool up) {
  return up ? __fsqrt_ru(a) : __fsqrt_rd(a);
}
__device__ __forceinline__ double sqrt_dir(double a, bool up) {
  return up ? __dsqrt_ru(a) : __dsqrt_rd(a);
}
__device__ __forceinline__ float fma_dir(float a, float b, float c, bool up) {
  return up ? __fmaf_ru(a, b, c) : __fmaf_rd(a, b, c);
}
__device__ __forceinline__ double fma_dir(double a, double b, double c, bool up) {
  return up ? __fma_ru(a, b, c) : __fma_rd(a, b, c);
}
#else
// Host: the calling thread stands for the device thread being replayed.
inline thread_local DThreadState t_host_dstoch_state = make_thread_state(0x5eed, 4, true);
inline DThreadState& dstate() { return t_host_dstoch_state; }
// Scope in which this host thread's DStoch arithmetic draws from the stream keyed by `key`
// (a device thread: cestac::thread_key(cestac::stream_key(seed, stream), thread); the CPU engine's
// run: cestac::stream_key(seed, stream)); restores the previous state on exit.
class HostThread {
 public:
  explicit HostThread(uint64_t key, int cancel_digits = 4, bool detect = true,
                      cestac::Rounding rounding = cestac::Rounding::nearness)
      : saved_(dstate()) {
    dstate() = make_thread_state(key, cancel_digits, detect, rounding);
  }
  ~HostThread() { dstate() = saved_; }
  HostThread(const HostThread&) = delete;
  HostThread& operator=(const HostThread&) = delete;
  uint32_t flags() const { return dstate().flags; }

 private:
  DThreadState saved_;
};

template <class T>
T add_dir(T a, T b, bool up) {
  return host_rounding::add(a, b, up);
}
template <class T>
T mul_dir(T a, T b, bool up) {
  return host_rounding::mul(a, b, up);
}
template <class T>
T div_dir(T a, T b, bool up) {
  return host_rounding::div(a, b, up);
}
template <class T>
T sqrt_dir(T a, bool up) {
  return host_rounding::sqrt(a, up);
}
template <class T>
T fma_dir(T a, T b, T c, bool up) {
  return host_rounding::fma(a, b, c, up);
}
#endif

template <class T>
constexpr int kPrecisionOf = sizeof(T) == 8 ? 53 : 24;

// The elementary functions per sample, as the CPU engine evaluates them: float samples in double
// (whose result decides the side of the exact value), double samples by libm (round to nearest;
// CUDA documents exp, log, log1p, tanh within 1 ulp), then perturbed at random (round_wide).
// exp of four lanes within |x| <= 708 draws a rounding pattern as the CPU's vector exp does
// (detail::vexp4_parts: the last addition rounded with a balanced pattern) rather than two bits
// per lane, so that both engines stay on the same stream.
SF_DEV double fn_exp(double x) { return exp(x); }
SF_DEV double fn_log(double x) { return log(x); }
SF_DEV double fn_log1p(double x) { return log1p(x); }
SF_DEV double fn_tanh(double x) { return tanh(x); }
#if defined(__CUDACC__) || (defined(__AVX2__) && defined(__FMA__))
inline constexpr bool kExpDrawsPattern = true;  // the CPU engine's AVX2 build (the default)
#else
inline constexpr bool kExpDrawsPattern = false;
#endif
inline constexpr double kExpPatternLimit = 708.0;  // detail::kVexpLimit

// A sample of an elementary function from its value w in double and two random bits (bit 0:
// move, bit 1: up): float rounds w toward the side bit 1 picks; double keeps w or moves it one ulp
// (cestac::detail::random_perturb).
template <class T>
SF_DEV T round_wide(double w, uint32_t bits2) {
  if constexpr (sizeof(T) == 4)
    return cestac::detail::round_wide_to_float(w, bits2 >> 1);
  else
    return cestac::detail::random_perturb(w, bits2);
}

template <class T, int L = 4>
struct DStoch {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "DStoch<float|double, L>");
  static_assert(L >= 2 && L <= 16, "2 <= L <= 16 lanes");
  using value_type = T;
  static constexpr int kLanes = L;
  // As the CPU's Stoch<T, 3> (cestac_core.h): the non-finite tests and the spread read every lane
  // (tau = student_tau(4) = 3.182), the mean the first kMean (3 of 4 lanes).
  static constexpr int kTested = L;
  static constexpr int kMean = cestac::samples_for_lanes(L);
  static constexpr int kSamples = L;
  T s[L];

  DStoch() = default;  // trivial: DStoch arrays may live in shared memory
  // An exact value: every sample equal (inputs and constants carry no rounding noise).
  SF_DEV DStoch(T v) {  // NOLINT: numeric literal use
    for (int i = 0; i < L; ++i) s[i] = v;
  }
  // Other arithmetic types convert to the nearest T (host-side constants, integer counts).
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value &&
                                                     !std::is_same<U, T>::value>::type>
  SF_DEV DStoch(U v) : DStoch(static_cast<T>(v)) {}  // NOLINT

  SF_DEV bool all_equal() const { return cestac::detail::all_equal<kTested>(s); }
  SF_DEV bool all_finite() const { return cestac::detail::all_finite<kTested>(s); }
  // A computational zero (the CPU's zero_fast): the cheap sufficient test first.
  SF_DEV bool zero() const {
    return !cestac::detail::clearly_nonzero<kTested>(s) &&
           cestac::detail::computational_zero<kTested, kMean>(s);
  }
  // A computational zero whose samples disagree: noise, not an exact zero.
  SF_DEV bool noisy_zero() const { return !all_equal() && zero(); }
  // Exact significant digits of the mean, the spread from every lane (as Stoch::digits).
  SF_DEV double digits() const {
    return cestac::detail::digits<L, kMean>(s, kPrecisionOf<T>, cestac::detail::digit_scale(L));
  }

  // ---- arithmetic: rounding bit i set sends lane i toward -inf ---------------------------------
  friend SF_DEV_FN DStoch operator+(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    if (st.nearness) {
      const DStoch r = nearness(st, [&](int i, T u) {
        const T x = a.s[i], y = b.s[i], sum = cestac::fp::add(x, y);
        return cestac::detail::sr_choice<T>(sum, two_sum_err(x, y, sum), T(1), u);
      });
      if (st.detect) r.check_sum_drop(a, b, st);
      return r;
    }
    const uint32_t bits = cestac::rounding_bits(st, L);
    DStoch r;
    for (int i = 0; i < L; ++i) r.s[i] = add_dir(a.s[i], b.s[i], !cestac::lane_bit(bits, i));
    if (L == 4) {
      // The CPU's vector +: one test for a lane at overflow or a drop below cancel_ratio.
      if (add_fast_ok(a, b, r, st)) return r;
      r.settle(a, b, [](T x, T y) { return cestac::fp::add(x, y); });
      if (st.detect) r.flag_sum(a, b, st);
    } else {
      r.settle(a, b, [](T x, T y) { return cestac::fp::add(x, y); });
      if (st.detect) r.check_sum_drop(a, b, st);
    }
    return r;
  }
  friend SF_DEV DStoch operator-(const DStoch& a) {
    DStoch r;
    for (int i = 0; i < L; ++i) r.s[i] = -a.s[i];
    return r;
  }
  friend SF_DEV DStoch operator-(const DStoch& a, const DStoch& b) { return a + (-b); }

  friend SF_DEV_FN DStoch operator*(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    DStoch r;
    if (st.nearness) {
      r = nearness(st, [&](int i, T u) {
        const T x = a.s[i], y = b.s[i], p = cestac::fp::mul(x, y);
        return cestac::detail::sr_choice<T>(p, fma_rn(x, y, -p), T(1), u);
      });
    } else {
      const uint32_t bits = cestac::rounding_bits(st, L);
      for (int i = 0; i < L; ++i) r.s[i] = mul_dir(a.s[i], b.s[i], !cestac::lane_bit(bits, i));
      r.settle(a, b, [](T x, T y) { return cestac::fp::mul(x, y); });
    }
    if (st.detect) {
      // Both factors computational zeros and both noise, as on the CPU (a factor exactly 0 in
      // every sample makes the product exactly 0).
      if (a.zero() && b.zero() && !a.all_equal() && !b.all_equal())
        st.flags |= cestac::kFlagUnstableMultiplication;
      if (!r.all_finite()) st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, kTested);
    }
    return r;
  }

  friend SF_DEV_FN DStoch operator/(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    DStoch r;
    if (st.nearness) {
      // exact - q = rho / b, rho = a - q b exact.
      r = nearness(st, [&](int i, T u) {
        const T x = a.s[i], y = b.s[i], q = cestac::fp::div(x, y), rho = fma_rn(-q, y, x);
        const bool negative = (cestac::to_bits(y) & cestac::FloatBits<T>::kSign) != 0;
        return cestac::detail::sr_choice<T>(q, negative ? -rho : rho, fabs(y), u);
      });
    } else {
      const uint32_t bits = cestac::rounding_bits(st, L);
      for (int i = 0; i < L; ++i) r.s[i] = div_dir(a.s[i], b.s[i], !cestac::lane_bit(bits, i));
      r.settle(a, b, [](T x, T y) { return cestac::fp::div(x, y); });
    }
    if (st.detect) {
      if (b.zero()) st.flags |= cestac::kFlagUnstableDivision;
      if (!r.all_finite()) st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, kTested);
    }
    return r;
  }

  SF_DEV DStoch& operator+=(const DStoch& b) { return *this = *this + b; }
  SF_DEV DStoch& operator-=(const DStoch& b) { return *this = *this - b; }
  SF_DEV DStoch& operator*=(const DStoch& b) { return *this = *this * b; }
  SF_DEV DStoch& operator/=(const DStoch& b) { return *this = *this / b; }

  // fma(a, b, c) = a b + c with one random rounding; overflow settled as for the other operations.
  friend SF_DEV_FN DStoch fma(const DStoch& a, const DStoch& b, const DStoch& c) {
    DThreadState& st = dstate();
    if (st.nearness) {
      // The error of RN(a b + c) from the exact product (p + pe) and 2Sum of p + c.
      const DStoch r = nearness(st, [&](int i, T u) {
        using cestac::fp::add;
        using cestac::fp::sub;
        const T x = a.s[i], y = b.s[i], z = c.s[i];
        const T r0 = fma_rn(x, y, z), p = cestac::fp::mul(x, y), pe = fma_rn(x, y, -p);
        const T t = add(p, z), te = two_sum_err(p, z, t);
        return cestac::detail::sr_choice<T>(r0, add(sub(t, r0), add(te, pe)), T(1), u);
      });
      if (st.detect && !r.all_finite())
        st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, kTested);
      return r;
    }
    const uint32_t bits = cestac::rounding_bits(st, L);
    DStoch r;
    for (int i = 0; i < L; ++i)
      r.s[i] = fma_dir(a.s[i], b.s[i], c.s[i], !cestac::lane_bit(bits, i));
    if (cestac::detail::any_at_overflow<L>(r.s)) {
      for (int i = 0; i < L; ++i) {
        if (!(fabs(r.s[i]) >= cestac::FloatBits<T>::kMax) || !isfinite(a.s[i]) ||
            !isfinite(b.s[i]) || !isfinite(c.s[i]))
          continue;
        r.s[i] = cestac::detail::settle_sample(r.s[i], fma(a.s[i], b.s[i], c.s[i]));
      }
    }
    if (st.detect && !r.all_finite())
      st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, kTested);
    return r;
  }

  friend SF_DEV_FN DStoch sqrt(const DStoch& a) {
    DThreadState& st = dstate();
    DStoch r;
    if (st.nearness) {
      // exact - q = (a - q^2) / (sqrt(a) + q), about rho / 2q, rho = a - q^2 exact.
      r = nearness(st, [&](int i, T u) {
        const T x = a.s[i], q = sqrt_rn(x);
        return cestac::detail::sr_choice<T>(q, fma_rn(-q, q, x), cestac::fp::add(q, q), u);
      });
    } else {
      const uint32_t bits = cestac::rounding_bits(st, L);
      for (int i = 0; i < L; ++i) r.s[i] = sqrt_dir(a.s[i], !cestac::lane_bit(bits, i));
    }
    if (st.detect) {
      if (a.noisy_zero()) st.flags |= cestac::kFlagUnstableFunction;
      if (!r.all_finite())
        st.flags |= cestac::classify_nonfinite(r.s, a.s, static_cast<const T*>(nullptr), kTested);
    }
    return r;
  }

  friend SF_DEV_FN DStoch exp(const DStoch& a) {
    DThreadState& st = dstate();
    if (kExpDrawsPattern && L == 4) {
      bool in_range = true;
      for (int i = 0; i < L; ++i) in_range &= fabs(static_cast<double>(a.s[i])) <= kExpPatternLimit;
      if (in_range) {
        // Double: the pattern's direction moves each lane one ulp off libm's result (the interval
        // holds the exact value); float: the double result rounded to float on the pattern's side
        // (bit set: up, as the CPU's float exp). Finite and positive: nothing to report.
        const uint32_t bits = cestac::rounding_bits(st, 4);
        DStoch r;
        for (int i = 0; i < L; ++i) {
          const uint32_t bit = cestac::lane_bit(bits, i);
          r.s[i] = round_wide<T>(fn_exp(static_cast<double>(a.s[i])),
                                 sizeof(T) == 4 ? bit << 1 : ((1u - bit) << 1) | 1u);
        }
        return r;
      }
    }
    return elementary(a, st, false, [](double x) { return fn_exp(x); });
  }
  friend SF_DEV_FN DStoch log(const DStoch& a) {
    return elementary(a, dstate(), true, [](double x) { return fn_log(x); });
  }
  friend SF_DEV_FN DStoch log1p(const DStoch& a) {
    return elementary(a, dstate(), false, [](double x) { return fn_log1p(x); });
  }
  friend SF_DEV_FN DStoch tanh(const DStoch& a) {
    return elementary(a, dstate(), false, [](double x) { return fn_tanh(x); });
  }

  // Exact per sample; unstable intrinsic when the samples disagree on the sign (every lane, as
  // the CPU's fabs).
  friend SF_DEV_FN DStoch fabs(const DStoch& a) {
    DStoch r;
    bool pos = false, neg = false;
    for (int i = 0; i < L; ++i) {
      r.s[i] = fabs(a.s[i]);
      pos |= a.s[i] > 0;
      neg |= a.s[i] < 0;
    }
    if (pos && neg) {
      DThreadState& st = dstate();
      if (st.detect) st.flags |= cestac::kFlagUnstableIntrinsic;
    }
    return r;
  }
  // v * 2^k per sample, rounded to nearest (exact unless the result is subnormal).
  friend SF_DEV DStoch ldexp(const DStoch& a, int k) {
    DStoch r;
    for (int i = 0; i < L; ++i) r.s[i] = ldexp(a.s[i], k);
    return r;
  }
  // The mean of the first kMean samples, in double (the CPU's Stoch::mean, in long double there).
  SF_DEV double mean() const {
    double m = 0;
    for (int i = 0; i < kMean; ++i) m = cestac::fp::add(m, static_cast<double>(s[i]));
    return cestac::fp::div(m, static_cast<double>(kMean));
  }
  friend SF_DEV bool isfinite(const DStoch& a) { return isfinite(a.s[0]); }
  friend SF_DEV bool isinf(const DStoch& a) { return isinf(a.s[0]); }
  friend SF_DEV bool isnan(const DStoch& a) { return isnan(a.s[0]); }

  // CADNA semantics: a comparison whose difference is a computational zero is "equal" and, unless
  // the samples tie exactly, unstable branching.
  friend SF_DEV_FN bool operator<(const DStoch& a, const DStoch& b) { return compare(a, b) < 0; }
  friend SF_DEV_FN bool operator>(const DStoch& a, const DStoch& b) { return compare(a, b) > 0; }
  friend SF_DEV_FN bool operator<=(const DStoch& a, const DStoch& b) { return compare(a, b) <= 0; }
  friend SF_DEV_FN bool operator>=(const DStoch& a, const DStoch& b) { return compare(a, b) >= 0; }
  friend SF_DEV_FN bool operator==(const DStoch& a, const DStoch& b) { return compare(a, b) == 0; }
  friend SF_DEV_FN bool operator!=(const DStoch& a, const DStoch& b) { return compare(a, b) != 0; }

 private:
  // fma and sqrt of T in round to nearest, in T (not through double on the host).
#if defined(__CUDACC__)
  static SF_DEV T fma_rn(T x, T y, T z) { return fma(x, y, z); }
  static SF_DEV T sqrt_rn(T x) { return sqrt(x); }
#else
  static T fma_rn(T x, T y, T z) { return std::fma(x, y, z); }
  static T sqrt_rn(T x) { return std::sqrt(x); }
#endif
  // 2Sum's exact error of s = RN(a + b), every step through fp:: (no contraction).
  static SF_DEV T two_sum_err(T a, T b, T s) {
    using cestac::fp::add;
    using cestac::fp::sub;
    const T bb = sub(s, a);
    return add(sub(a, sub(s, bb)), sub(b, bb));
  }

  // Stochastic rounding to nearness lane by lane, as the CPU's Stoch<T, L> off its four-lane
  // vector path (stoch_nearness.h), with the same draws in the same order: `choice(i, u)` is lane
  // i's sr_choice, u from 16 random bits; then uncollapse (every lane equal while some lane was
  // inexact: the first inexact lane from a random one, 4 bits, takes its other neighbour).
  template <class Choice>
  static SF_DEV DStoch nearness(DThreadState& st, Choice choice) {
    DStoch r;
    T other[L];
    bool inexact[L];
    bool any = false;
    for (int i = 0; i < L; ++i) {
      const T u = static_cast<T>(cestac::detail::uniform16(cestac::random_bits(st, 16)));
      const cestac::detail::SrChoice<T> c = choice(i, u);
      r.s[i] = c.value;
      other[i] = c.other;
      inexact[i] = c.inexact;
      any |= c.inexact;
    }
    if (any && cestac::detail::all_equal<L>(r.s)) {
      const uint32_t j = cestac::random_bits(st, 4);
      for (int k = 0; k < L; ++k) {
        const int i = static_cast<int>((j + static_cast<uint32_t>(k)) % L);
        if (inexact[i]) {
          r.s[i] = other[i];
          break;
        }
      }
    }
    return r;
  }

  // The cancellation test of a + or - (the CPU's check_add_fast): when the result's exponent
  // dropped cancel_bits below the larger operand's, or a lane is not finite.
  SF_DEV void check_sum_drop(const DStoch& a, const DStoch& b, DThreadState& st) const {
    using cestac::detail::exponent_field;
    const int ea = exponent_field(a.s[0]), eb = exponent_field(b.s[0]);
    if ((ea > eb ? ea : eb) - exponent_field(s[0]) >= st.cancel_bits || !all_finite())
      flag_sum(a, b, st);
  }

  // Overflow settling (cestac::detail::settle_sample) of the lanes at overflow with finite
  // operands; `op` recomputes a lane in round to nearest.
  template <class Op>
  SF_DEV void settle(const DStoch& a, const DStoch& b, Op op) {
    if (!cestac::detail::any_at_overflow<L>(s)) return;
    for (int i = 0; i < L; ++i) {
      if (!(fabs(s[i]) >= cestac::FloatBits<T>::kMax) || !isfinite(a.s[i]) || !isfinite(b.s[i]))
        continue;
      s[i] = cestac::detail::settle_sample(s[i], op(a.s[i], b.s[i]));
    }
  }

  // The CPU's detail::add_fast_ok for four lanes: every lane below overflow and not below
  // cancel_ratio max(|a|, |b|) (that product rounded up, as the CPU computes it in its run's mode;
  // the max as the vector max: the second operand unless the first is larger).
  static SF_DEV bool add_fast_ok(const DStoch& a, const DStoch& b, const DStoch& r,
                                 const DThreadState& st) {
    const T ratio = static_cast<T>(st.cancel_ratio);
    bool ok = true;
    for (int i = 0; i < L; ++i) {
      const T fa = fabs(a.s[i]), fb = fabs(b.s[i]), fr = fabs(r.s[i]);
      ok &= fr < cestac::FloatBits<T>::kMax && fr >= mul_dir(fa > fb ? fa : fb, ratio, true);
    }
    return ok;
  }
  // Cancellation or a non-finite result of a + or - (cestac::detail::sum_flags).
  SF_DEV void flag_sum(const DStoch& a, const DStoch& b, DThreadState& st) const {
    st.flags |=
        cestac::detail::sum_flags<kTested, kMean>(a.s, b.s, s, kPrecisionOf<T>, st.cancel_digits);
  }

  // An elementary function: two random bits per lane (round_wide); unstable function when
  // `zero_is_unstable` and the argument is a noisy zero.
  template <class F>
  static SF_DEV DStoch elementary(const DStoch& a, DThreadState& st, bool zero_is_unstable, F fn) {
    const uint32_t bits = cestac::random_bits(st, 2 * L);
    DStoch r;
    for (int i = 0; i < L; ++i)
      r.s[i] = round_wide<T>(fn(static_cast<double>(a.s[i])), (bits >> (2 * i)) & 3u);
    if (st.detect) {
      if (zero_is_unstable && a.noisy_zero()) st.flags |= cestac::kFlagUnstableFunction;
      if (!r.all_finite())
        st.flags |= cestac::classify_nonfinite(r.s, a.s, static_cast<const T*>(nullptr), kTested);
    }
    return r;
  }

  // -1, 0, +1 from the tested samples' difference (the CPU's compare_at); 0 when it is noise.
  static SF_DEV_FN int compare(const DStoch& a, const DStoch& b) {
    T d[kTested];
    bool tie = true, nan = false;
    for (int i = 0; i < kTested; ++i) {
      tie &= a.s[i] == b.s[i];  // also equal infinities
      d[i] = cestac::fp::sub(a.s[i], b.s[i]);
      nan |= isnan(d[i]);
    }
    if (tie) return 0;
    if (nan) return a.s[0] < b.s[0] ? -1 : (a.s[0] > b.s[0] ? 1 : 0);  // NaN or inf operands
    if (!cestac::detail::clearly_nonzero<kTested>(d) &&
        cestac::detail::computational_zero<kTested, kMean>(d)) {
      DThreadState& st = dstate();
      if (st.detect) st.flags |= cestac::kFlagUnstableBranching;
      return 0;
    }
    T sum = 0;
    for (int i = 0; i < kMean; ++i) sum = cestac::fp::add(sum, d[i]);
    return sum < 0 ? -1 : (sum > 0 ? 1 : 0);
  }
};

// ---- the same vocabulary for native float and double, so kernels are written once ------------
template <class T>
struct ScalarOf {
  using type = T;
};
template <class T, int L>
struct ScalarOf<DStoch<T, L>> {
  using type = T;
};
template <class T>
using scalar_of_t = typename ScalarOf<T>::type;

#if defined(__CUDACC__)
// Warp shuffle of a native value or of every sample of a DStoch.
__device__ __forceinline__ float shfl_down(float v, int off) {
  return __shfl_down_sync(0xffffffffu, v, off);
}
__device__ __forceinline__ double shfl_down(double v, int off) {
  return __shfl_down_sync(0xffffffffu, v, off);
}
__device__ __forceinline__ int shfl_down(int v, int off) {
  return __shfl_down_sync(0xffffffffu, v, off);
}
template <class T, int L>
__device__ __forceinline__ DStoch<T, L> shfl_down(const DStoch<T, L>& v, int off) {
  DStoch<T, L> r;
  for (int i = 0; i < L; ++i) r.s[i] = __shfl_down_sync(0xffffffffu, v.s[i], off);
  return r;
}
#endif

}  // namespace stabfuzz::gpu
