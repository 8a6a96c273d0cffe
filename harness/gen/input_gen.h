// RapidCheck generators of operator inputs from a family's named value regimes.
//
// A generator maps (rc::Random, size) to a Shrinkable input: the regime draws the values, and
// shrinking moves toward shorter rows and simpler floats (fewer mantissa bits, smaller exponents,
// integers, zero) while the family still accepts the input.
#pragma once

#include <rapidcheck.h>

#include <iosfwd>
#include <vector>

#include "stabfuzz/family.h"

namespace stabfuzz::gen {

// Inputs from one regime, or from a regime chosen uniformly when `regime` is empty.
rc::Gen<Input> input_gen(const Family& family, DType d, const std::string& regime = "");

// The regime an index picks: the runner cycles through regimes so every one is exercised.
rc::Gen<Input> regime_gen(const Family& family, const Regime& regime, DType d);

// Simpler candidates for one float, simplest first: 0, integer part, fewer mantissa bits,
// half the exponent, the positive twin. Each is exactly representable in `d`.
std::vector<double> simpler_floats(double v, DType d);

// All shrinks of an input that the family still accepts.
rc::Seq<Input> shrink_input(const Family& family, const Input& in);

}  // namespace stabfuzz::gen

namespace stabfuzz {
// RapidCheck prints counterexamples through this (hex floats: exact).
void showValue(const Input& in, std::ostream& os);
}  // namespace stabfuzz
