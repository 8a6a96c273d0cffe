// Results clear of the overflow threshold (f16, bf16), for the regimes of the sums, moments and
// norms (families/reductions.cc).
//
// A correctly rounded result near the largest finite value M is M or inf by one rounding (from
// M + ulp/2 up it is inf), and a kernel within its tolerance can land on the other side: the
// verdict measures finite against inf as an infinite error. In f32 and f64 that band is ~1e-6
// of a binade wide and no regime lands in it; in f16 and bf16 (tolerances of several ULPs of
// 2^-11 and 2^-8) rows would. So in those formats a row whose result lies in [M/4, 4M] is scaled
// by 1/4 (exactly, up to values that turn subnormal) until it does not: results stay either
// clearly finite or clearly overflowing, and inf is still tested where it is the exact answer.
#pragma once

#include <functional>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::families::overflow_band {

// Whether a row's results (in long double: exact for f16 sums, within 2^-60 relative otherwise)
// come near the largest finite value m.
using NearOverflow = std::function<bool(const std::vector<double>&, long double m)>;

bool sum_near_overflow(const std::vector<double>& x, long double m);
// Every prefix is an output, and a scan of values near m crosses m/4..4m on its way to overflow:
// there is no clear side, so a cumsum row keeps every prefix below m/4.
bool prefix_near_overflow(const std::vector<double>& x, long double m);
// The variance (the unbiased one, the larger) and the standard deviation.
bool var_near_overflow(const std::vector<double>& x, long double m);
bool norm_near_overflow(const std::vector<double>& x, long double m);

// The sampler `s`, its f16 and bf16 rows scaled by 1/4 until `near` no longer holds.
std::function<Input(Entropy&, DType)> clear_of_overflow(std::function<Input(Entropy&, DType)> s,
                                                        NearOverflow near);

}  // namespace stabfuzz::families::overflow_band
