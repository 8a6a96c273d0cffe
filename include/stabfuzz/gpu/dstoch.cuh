// DStoch<T, N>: the CESTAC scalar on the device. N samples of float or double, each rounded up
// or down at random by the per-instruction directed-rounding intrinsics.
//
// The rounding direction of every sample of every operation comes from a counter-based stream
// keyed by (seed, stream, thread): thread_key(launch key, linear thread id), one 64-bit word per
// operation (stabfuzz/gpu/cestac_core.h, the same mix as the CPU engine), so a launch replays bit
// for bit from its seed whatever the scheduling. Each thread's counter, key and instability flags
// live in a per-thread slot of global memory (g_dstoch_states, set before each launch); the host
// reduces the flag words after the launch. Compiled by nvcc only; build with -fmad=false and
// never --use_fast_math (contraction or approximate math would change what a sample computes).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "stabfuzz/gpu/cestac_core.h"

namespace stabfuzz::gpu {

// One device thread's CESTAC state (one slot per thread of a launch).
struct DThreadState {
  uint64_t key;
  uint64_t counter;
  uint32_t flags;         // cestac::DeviceFlag bits met by this thread
  int32_t cancel_digits;  // k of the cancellation rule
  int32_t cancel_bits;    // exponent drop that sends a +/- to the cancellation test
  int32_t detect;         // instability detection on
};

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
// One random word per operation: bit i rounds sample i up (cestac::lane_rounds_up).
__device__ __forceinline__ uint64_t next_word(DThreadState& st) {
  return cestac::stream_word(st.key, ++st.counter);
}

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
__device__ __forceinline__ float max_finite(float) { return 3.40282347e38f; }
__device__ __forceinline__ double max_finite(double) { return 1.7976931348623157e308; }
// Biased exponent field of |x| (0 for zero and subnormals).
__device__ __forceinline__ int exponent_field(float x) { return (__float_as_int(x) >> 23) & 0xff; }
__device__ __forceinline__ int exponent_field(double x) {
  return static_cast<int>((__double_as_longlong(x) >> 52) & 0x7ff);
}
template <class T>
constexpr int kPrecisionOf = sizeof(T) == 8 ? 53 : 24;

// Elementary functions evaluated per sample by CUDA's libm (round to nearest), then perturbed:
// kept with probability 1/2, else moved one ulp up or down at random, as the CPU engine does for
// libm's double results (detail::random_perturb). CUDA's documented maximum errors (CUDA Math API,
// round to nearest): expf 2 ulp, logf 1, log1pf 1, tanhf 2; exp, log, log1p, tanh 1 ulp. A
// perturbed sample is therefore within that bound + 1 ulp of the exact value, and the samples'
// spread is random rounding's. Exact results 0, +-1 and infinities are kept (moving them would
// leave the function's range or flip a sign).
template <class T>
__device__ __forceinline__ T perturb(T r, unsigned bits2) {
  const bool special = r == T(0) || r == T(1) || r == T(-1) || !isfinite(r);
  if (special || !(bits2 & 1u)) return r;
  const T to = (bits2 & 2u) ? T(INFINITY) : T(-INFINITY);
  const T n = nextafter(r, to);
  return isfinite(n) ? n : r;  // never step from the largest finite value to inf
}
__device__ __forceinline__ float fn_exp(float x) { return expf(x); }
__device__ __forceinline__ double fn_exp(double x) { return exp(x); }
__device__ __forceinline__ float fn_log(float x) { return logf(x); }
__device__ __forceinline__ double fn_log(double x) { return log(x); }
__device__ __forceinline__ float fn_log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double fn_log1p(double x) { return log1p(x); }
__device__ __forceinline__ float fn_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double fn_tanh(double x) { return tanh(x); }

template <class T, int N = 4>
struct DStoch {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "DStoch<float|double, N>");
  static_assert(N >= 2 && N <= 16, "2 <= N <= 16 samples");
  using value_type = T;
  static constexpr int kSamples = N;
  T s[N];

  DStoch() = default;  // trivial: DStoch arrays may live in shared memory
  // An exact value: every sample equal (inputs and constants carry no rounding noise).
  __device__ __forceinline__ DStoch(T v) {  // NOLINT: numeric literal use
    for (int i = 0; i < N; ++i) s[i] = v;
  }
  // Other arithmetic types convert to the nearest T (host-side constants, integer counts).
  template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value &&
                                                     !std::is_same<U, T>::value>::type>
  __device__ __forceinline__ DStoch(U v) : DStoch(static_cast<T>(v)) {}  // NOLINT

  __device__ __forceinline__ bool all_equal() const {
    bool eq = true;
    for (int i = 1; i < N; ++i) eq &= s[i] == s[0];
    return eq;
  }
  __device__ __forceinline__ bool all_finite() const {
    bool f = true;
    for (int i = 0; i < N; ++i) f &= isfinite(s[i]);
    return f;
  }
  // Cheap sufficient test that the samples are not a computational zero (CPU: clearly_nonzero).
  __device__ __forceinline__ bool clearly_nonzero() const {
    T mn = s[0], mx = s[0];
    for (int i = 1; i < N; ++i) {
      mn = s[i] < mn ? s[i] : mn;
      mx = s[i] > mx ? s[i] : mx;
    }
    return fabs(s[0]) > T(4.05) * (mx - mn);
  }
  __device__ __forceinline__ bool zero() const {
    return !clearly_nonzero() && cestac::detail::sample_zero(s, N);
  }
  // A computational zero whose samples disagree: noise, not an exact zero.
  __device__ __forceinline__ bool noisy_zero() const { return !all_equal() && zero(); }

  // ---- arithmetic
  // ---------------------------------------------------------------------------------
  friend __device__ DStoch operator+(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    const uint64_t w = next_word(st);
    DStoch r;
    bool at_overflow = false;
    for (int i = 0; i < N; ++i) {
      r.s[i] = add_dir(a.s[i], b.s[i], cestac::lane_rounds_up(w, i));
      at_overflow |= !(fabs(r.s[i]) < max_finite(T()));
    }
    if (at_overflow) settle(r, a, b, [](T x, T y) { return x + y; });
    if (st.detect) {
      if (!r.all_finite()) {
        st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, N);
      } else {
        const int ea = exponent_field(a.s[0]), eb = exponent_field(b.s[0]);
        if ((ea > eb ? ea : eb) - exponent_field(r.s[0]) >= st.cancel_bits &&
            cestac::detail::sample_cancellation(a.s, b.s, r.s, N, kPrecisionOf<T>,
                                                st.cancel_digits))
          st.flags |= cestac::kFlagCancellation;
      }
    }
    return r;
  }
  friend __device__ __forceinline__ DStoch operator-(const DStoch& a) {
    DStoch r;
    for (int i = 0; i < N; ++i) r.s[i] = -a.s[i];
    return r;
  }
  friend __device__ __forceinline__ DStoch operator-(const DStoch& a, const DStoch& b) {
    return a + (-b);
  }

  friend __device__ DStoch operator*(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    const uint64_t w = next_word(st);
    DStoch r;
    bool at_overflow = false;
    for (int i = 0; i < N; ++i) {
      r.s[i] = mul_dir(a.s[i], b.s[i], cestac::lane_rounds_up(w, i));
      at_overflow |= !(fabs(r.s[i]) < max_finite(T()));
    }
    if (at_overflow) settle(r, a, b, [](T x, T y) { return x * y; });
    if (st.detect) {
      // Both factors computational zeros, at least one of them noise (0 x 0 of exact zeros is
      // exact).
      if (a.zero() && b.zero() && !(a.all_equal() && b.all_equal()))
        st.flags |= cestac::kFlagUnstableMultiplication;
      if (!r.all_finite()) st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, N);
    }
    return r;
  }

  friend __device__ DStoch operator/(const DStoch& a, const DStoch& b) {
    DThreadState& st = dstate();
    const uint64_t w = next_word(st);
    DStoch r;
    bool at_overflow = false;
    for (int i = 0; i < N; ++i) {
      r.s[i] = div_dir(a.s[i], b.s[i], cestac::lane_rounds_up(w, i));
      at_overflow |= !(fabs(r.s[i]) < max_finite(T()));
    }
    if (at_overflow) settle(r, a, b, [](T x, T y) { return x / y; });
    if (st.detect) {
      if (b.zero()) st.flags |= cestac::kFlagUnstableDivision;
      if (!r.all_finite()) st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, N);
    }
    return r;
  }

  __device__ __forceinline__ DStoch& operator+=(const DStoch& b) { return *this = *this + b; }
  __device__ __forceinline__ DStoch& operator-=(const DStoch& b) { return *this = *this - b; }
  __device__ __forceinline__ DStoch& operator*=(const DStoch& b) { return *this = *this * b; }
  __device__ __forceinline__ DStoch& operator/=(const DStoch& b) { return *this = *this / b; }

  // fma(a, b, c) = a b + c with one random rounding.
  friend __device__ DStoch fma(const DStoch& a, const DStoch& b, const DStoch& c) {
    DThreadState& st = dstate();
    const uint64_t w = next_word(st);
    DStoch r;
    for (int i = 0; i < N; ++i)
      r.s[i] = fma_dir(a.s[i], b.s[i], c.s[i], cestac::lane_rounds_up(w, i));
    if (st.detect && !r.all_finite()) st.flags |= cestac::classify_nonfinite(r.s, a.s, b.s, N);
    return r;
  }

  friend __device__ DStoch sqrt(const DStoch& a) {
    DThreadState& st = dstate();
    const uint64_t w = next_word(st);
    DStoch r;
    for (int i = 0; i < N; ++i) r.s[i] = sqrt_dir(a.s[i], cestac::lane_rounds_up(w, i));
    if (st.detect) {
      if (a.noisy_zero()) st.flags |= cestac::kFlagUnstableFunction;
      if (!r.all_finite())
        st.flags |= cestac::classify_nonfinite(r.s, a.s, static_cast<const T*>(nullptr), N);
    }
    return r;
  }

#define SF_DSTOCH_FN(name, zero_is_unstable)                                                   \
  friend __device__ DStoch name(const DStoch& a) {                                             \
    DThreadState& st = dstate();                                                               \
    const uint64_t w = next_word(st);                                                          \
    DStoch r;                                                                                  \
    for (int i = 0; i < N; ++i) r.s[i] = perturb(fn_##name(a.s[i]), cestac::lane_bits2(w, i)); \
    if (st.detect) {                                                                           \
      if ((zero_is_unstable) && a.noisy_zero()) st.flags |= cestac::kFlagUnstableFunction;     \
      if (!r.all_finite())                                                                     \
        st.flags |= cestac::classify_nonfinite(r.s, a.s, static_cast<const T*>(nullptr), N);   \
    }                                                                                          \
    return r;                                                                                  \
  }
  SF_DSTOCH_FN(exp, false)
  SF_DSTOCH_FN(log, true)
  SF_DSTOCH_FN(log1p, false)
  SF_DSTOCH_FN(tanh, false)
#undef SF_DSTOCH_FN

  // Exact per sample; unstable intrinsic when the samples disagree on the sign.
  friend __device__ DStoch fabs(const DStoch& a) {
    DStoch r;
    bool pos = false, neg = false;
    for (int i = 0; i < N; ++i) {
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
  friend __device__ DStoch ldexp(const DStoch& a, int k) {
    DStoch r;
    for (int i = 0; i < N; ++i) r.s[i] = ldexp(a.s[i], k);
    return r;
  }
  // The mean of the samples (for host-side decisions such as an exponent).
  __device__ __forceinline__ double mean() const {
    double m = 0;
    for (int i = 0; i < N; ++i) m += s[i];
    return m / N;
  }

  // CADNA semantics: a comparison whose difference is a computational zero is "equal" and, unless
  // the samples tie exactly, unstable branching.
  friend __device__ bool operator<(const DStoch& a, const DStoch& b) { return compare(a, b) < 0; }
  friend __device__ bool operator>(const DStoch& a, const DStoch& b) { return compare(a, b) > 0; }
  friend __device__ bool operator<=(const DStoch& a, const DStoch& b) { return compare(a, b) <= 0; }
  friend __device__ bool operator>=(const DStoch& a, const DStoch& b) { return compare(a, b) >= 0; }
  friend __device__ bool operator==(const DStoch& a, const DStoch& b) { return compare(a, b) == 0; }
  friend __device__ bool operator!=(const DStoch& a, const DStoch& b) { return compare(a, b) != 0; }

 private:
  // Directed rounding sends an overflow to inf (up) or to the largest finite value (down); keep
  // round to nearest's answer instead, as the CPU engine does (detail::settle_overflow), so that
  // samples never disagree on an overflow only because of the direction.
  template <class Op>
  static __device__ void settle(DStoch& r, const DStoch& a, const DStoch& b, Op op) {
    for (int i = 0; i < N; ++i) {
      if (!(fabs(r.s[i]) >= max_finite(T())) || !isfinite(a.s[i]) || !isfinite(b.s[i])) continue;
      const T n = op(a.s[i], b.s[i]);  // round to nearest (the default of C++ operators)
      r.s[i] = isinf(n) ? n : (isinf(r.s[i]) ? copysign(max_finite(T()), r.s[i]) : r.s[i]);
    }
  }

  static __device__ int compare(const DStoch& a, const DStoch& b) {
    T d[N];
    bool tie = true, nan = false, finite = true;
    T mn = T(0), mx = T(0);
    for (int i = 0; i < N; ++i) {
      tie &= a.s[i] == b.s[i];
      d[i] = a.s[i] - b.s[i];  // its sign is exact whatever the rounding
      nan |= isnan(d[i]);
      finite &= isfinite(d[i]);
      mn = i == 0 || d[i] < mn ? d[i] : mn;
      mx = i == 0 || d[i] > mx ? d[i] : mx;
    }
    if (tie) return 0;
    if (finite && fabs(d[0]) > T(4.05) * (mx - mn)) return d[0] < 0 ? -1 : 1;
    if (nan) return a.s[0] < b.s[0] ? -1 : (a.s[0] > b.s[0] ? 1 : 0);  // NaN or inf operands
    if (cestac::detail::sample_zero(d, N)) {
      DThreadState& st = dstate();
      if (st.detect) st.flags |= cestac::kFlagUnstableBranching;
      return 0;
    }
    double sum = 0;
    for (int i = 0; i < N; ++i) sum += d[i];
    return sum < 0 ? -1 : (sum > 0 ? 1 : 0);
  }
};

// ---- the same vocabulary for native float and double, so kernels are written once ------------
template <class T>
struct ScalarOf {
  using type = T;
};
template <class T, int N>
struct ScalarOf<DStoch<T, N>> {
  using type = T;
};
template <class T>
using scalar_of_t = typename ScalarOf<T>::type;

template <class T>
__device__ __forceinline__ T ldexp_pow2(T v, int k) {
  return ldexp(v, k);
}

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
template <class T, int N>
__device__ __forceinline__ DStoch<T, N> shfl_down(const DStoch<T, N>& v, int off) {
  DStoch<T, N> r;
  for (int i = 0; i < N; ++i) r.s[i] = __shfl_down_sync(0xffffffffu, v.s[i], off);
  return r;
}

}  // namespace stabfuzz::gpu
