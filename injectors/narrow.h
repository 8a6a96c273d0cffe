// Narrower<T>: the next lower precision of a scalar type, for mutants that accumulate in it.
//
// double -> float, float -> Half, Half and BFloat16 -> an 8-bit float (E5M2, so that every
// dtype's operator instantiates; mutants using it declare only f64 and f32), and Stoch<T, N> ->
// Stoch<narrower T, N> sample by sample, so a low-precision accumulator runs natively and under
// CESTAC alike. Conversions round to nearest; the arithmetic done in the narrow type then carries
// its own random rounding.
#pragma once

#include "stabfuzz/lowp.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::injectors {

template <class T>
struct Narrower;

template <>
struct Narrower<double> {
  using type = float;
  static double round_sample(double v) { return static_cast<float>(v); }
  static type down(double v) { return static_cast<float>(v); }
  static double up(type v) { return v; }
};

template <>
struct Narrower<float> {
  using type = Half;
  static double round_sample(double v) { return round_to_format(kF16, v); }
  static type down(float v) { return Half(static_cast<double>(v)); }
  static float up(type v) { return static_cast<float>(v); }
};

// FP8 E5M2: 3 significant bits, the exponent range of f16.
inline constexpr Format kF8E5M2{3, -14, 15};

template <const Format& F>
struct Narrower<LowFloat<F>> {
  using type = LowFloat<kF8E5M2>;
  static double round_sample(double v) { return round_to_format(kF8E5M2, v); }
  static type down(LowFloat<F> v) { return type(static_cast<double>(v)); }
  static LowFloat<F> up(type v) { return LowFloat<F>(static_cast<double>(v)); }
};

template <class T, int N, cestac::Rounding R>
struct Narrower<Stoch<T, N, R>> {
  using Wide = Stoch<T, N, R>;
  using type = Stoch<typename Narrower<T>::type, N, R>;
  static_assert(Wide::kLanes == type::kLanes);
  static type down(const Wide& v) {
    type r;
    for (int i = 0; i < type::kLanes; ++i)
      r.s[i] = static_cast<typename type::Sample>(
          Narrower<T>::round_sample(static_cast<double>(v.s[i])));
    return r;
  }
  static Wide up(const type& v) {
    Wide r;
    for (int i = 0; i < Wide::kLanes; ++i) r.s[i] = static_cast<typename Wide::Sample>(v.s[i]);
    return r;
  }
};

// The narrower type of T.
template <class T>
using narrow_t = typename Narrower<T>::type;

}  // namespace stabfuzz::injectors
