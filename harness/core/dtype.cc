// DType names, format constants, rounding and ULP distance.
#include "stabfuzz/dtype.h"

#include <bit>
#include <cmath>
#include <limits>

#include "stabfuzz/lowp.h"

namespace stabfuzz {

std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::f64:
      return "f64";
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType d : kAllDTypes)
    if (dtype_name(d) == s) return d;
  return std::nullopt;
}

const Format& dtype_format(DType d) {
  switch (d) {
    case DType::f64:
      return kF64;
    case DType::f32:
      return kF32;
    case DType::f16:
      return kF16;
    case DType::bf16:
      return kBF16;
  }
  return kF64;
}

int dtype_precision(DType d) { return dtype_format(d).p; }

double dtype_unit_roundoff(DType d) { return std::ldexp(1.0, -dtype_precision(d)); }

// One value per dtype, computed once: GCC folds log10 of a constant at compile time (correctly
// rounded) where a call at run time goes through libm, and the two can differ in the last bit;
// every caller must see the same value (available_digits compares against it).
double dtype_max_digits(DType d) {
  static const double digits[] = {
      -std::log10(dtype_unit_roundoff(DType::f64)), -std::log10(dtype_unit_roundoff(DType::f32)),
      -std::log10(dtype_unit_roundoff(DType::f16)), -std::log10(dtype_unit_roundoff(DType::bf16))};
  switch (d) {
    case DType::f64:
      return digits[0];
    case DType::f32:
      return digits[1];
    case DType::f16:
      return digits[2];
    case DType::bf16:
      return digits[3];
  }
  return digits[0];
}

double dtype_min_normal(DType d) { return dtype_format(d).min_normal(); }

double round_to(DType d, double v) {
  switch (d) {
    case DType::f64:
      return v;
    case DType::f32:
      // A double beyond the float range cannot be cast (undefined behaviour): round it properly.
      if (std::fabs(v) > std::numeric_limits<float>::max()) return round_to_format(kF32, v);
      return static_cast<double>(static_cast<float>(v));
    default:
      return round_to_format(dtype_format(d), v);
  }
}

bool representable(DType d, double v) { return std::isnan(v) || round_to(d, v) == v; }

namespace {
// Maps a value onto a signed integer line where neighbours differ by one (sign-magnitude to
// two's complement), so that the difference counts the representable values in between.
int64_t ordinal(double v) {
  const auto bits = std::bit_cast<int64_t>(v);
  return bits < 0 ? std::numeric_limits<int64_t>::min() - bits : bits;
}
int64_t ordinal(float v) {
  const auto bits = static_cast<int64_t>(std::bit_cast<int32_t>(v));
  return bits < 0 ? int64_t{std::numeric_limits<int32_t>::min()} - bits : bits;
}
}  // namespace

double ulp_distance(DType d, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  if (a == b) return 0.0;  // also +0 == -0
  if (std::isinf(a) || std::isinf(b)) return INFINITY;
  int64_t oa, ob;
  if (d == DType::f64) {
    oa = ordinal(a);
    ob = ordinal(b);
  } else if (d == DType::f32) {
    const double fmax = std::numeric_limits<float>::max();
    if (std::fabs(a) > fmax || std::fabs(b) > fmax) return INFINITY;  // not float values
    oa = ordinal(static_cast<float>(a));
    ob = ordinal(static_cast<float>(b));
  } else {
    oa = format_ordinal(dtype_format(d), a);
    ob = format_ordinal(dtype_format(d), b);
  }
  // Ordinals span 2^64: subtract exactly in 128 bits, then convert.
  const __int128 diff = static_cast<__int128>(oa) - static_cast<__int128>(ob);
  return static_cast<double>(diff < 0 ? -diff : diff);
}

double ulp_error(DType d, double computed, double exact) {
  if (std::isnan(computed) || std::isnan(exact))
    return std::isnan(computed) && std::isnan(exact) ? 0.0 : INFINITY;
  if (computed == exact) return 0.0;
  const Format& f = dtype_format(d);
  // An exact result that rounds to inf lies beyond the largest finite value, at or past the
  // overflow boundary max + ulp(max) / 2: a finite result of its sign is measured from that
  // next step, so the largest finite value is 1 ulp away, not infinitely far.
  if (std::isinf(exact) && std::isfinite(computed) &&
      std::signbit(exact) == std::signbit(computed)) {
    const double q = format_quantum(f, f.max_finite());
    return (f.max_finite() - std::fabs(computed)) / q + 1.0;
  }
  // Symmetrically, inf of the sign of an exact result that rounds to the largest finite value is
  // that overflow step, 1 ulp away (exp just under its overflow threshold returning inf is a
  // last-place error); inf for any smaller exact value is infinitely wrong.
  if (std::isinf(computed) && std::fabs(exact) == f.max_finite() &&
      std::signbit(exact) == std::signbit(computed))
    return 1.0;
  if (std::isinf(computed) || std::isinf(exact)) return INFINITY;
  return std::fabs(computed - exact) / format_quantum(f, exact);
}

double available_digits(DType d, double v) {
  const double full = dtype_max_digits(d);
  const double a = std::fabs(v);
  const double mn = dtype_min_normal(d);
  if (a == 0) return 0.0;  // an exact zero carries no significant digits to compare
  if (!std::isfinite(a) || a >= mn) return full;
  // A subnormal of magnitude a has lost log2(mn / a) bits of precision.
  const double lost_bits = std::log2(mn / a);
  return std::max(0.0, full - lost_bits * std::log10(2.0));
}

}  // namespace stabfuzz
