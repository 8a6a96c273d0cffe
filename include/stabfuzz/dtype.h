// DType: the floating-point formats an operator is tested in, and exact rounding to them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stabfuzz {

// f16 and bf16 are storage formats: values are held exactly in wider types and every operation
// rounds back to the format (stabfuzz/lowp.h).
enum class DType : uint8_t { f64, f32, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

std::string_view dtype_name(DType d);
std::optional<DType> parse_dtype(std::string_view s);

struct Format;
const Format& dtype_format(DType d);

// Significand bits including the hidden bit (53 f64, 24 f32, 11 f16, 8 bf16).
int dtype_precision(DType d);
// Unit roundoff u = 2^-p.
double dtype_unit_roundoff(DType d);
// Decimal digits a correctly rounded value carries: -log10(u) (15.95 f64, 7.22 f32, 3.31 f16,
// 2.41 bf16).
double dtype_max_digits(DType d);
// Smallest positive normal value.
double dtype_min_normal(DType d);

// Round a double to the nearest value of the format (exact for f64). Every value a Tensor holds is
// exactly representable in its dtype, so the oracle always sees the exact input the target saw.
double round_to(DType d, double v);
bool representable(DType d, double v);

// Number of representable values of the format strictly between a and b plus one: 0 when equal,
// 1 for neighbours. Works across zero and for subnormals. Returns 0 when both are NaN, +inf when
// only one is NaN or the two differ and one is infinite.
double ulp_distance(DType d, double a, double b);

// ULP error of `computed` against `exact`: |computed - exact| / ulp(exact), where ulp(exact) is
// the format's spacing at exact's magnitude (the smallest subnormal for 0). Unlike ulp_distance it
// does not count every value between the two, so a result whose relative error reaches 1 (an
// ill-conditioned sum near 0) is measured in units of the exact value's precision. Returns 0 when
// both are NaN or equal infinities. At the overflow threshold an infinity and a finite value of
// the same sign are measured through the step after the largest finite value (inf for an exact
// result that rounds to the largest finite value is 1 ulp away); otherwise +inf when only one is
// finite.
double ulp_error(DType d, double computed, double exact);

// Decimal digits that a value of magnitude |v| can carry in this format: the full precision for
// normal values, fewer for subnormals, none for zero.
double available_digits(DType d, double v);

}  // namespace stabfuzz
