// Shared by the oracle tests of the normalization and loss families (normalization_test.cc,
// losses_test.cc): their inputs, and the check against a long double reference.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "families/row_families.h"
#include "stabfuzz/dtype.h"
#include "stabfuzz/family.h"

namespace stabfuzz::normalization_check {

using families::row_gen::Params;
using LD = long double;

// One row, and two rows of one length, as the families' generators build them.
inline Input row(DType d, std::vector<double> x, Params p = {}) {
  return families::row_gen::one_row(d, std::move(x), std::move(p));
}
inline Input rows2(DType d, std::vector<double> a, std::vector<double> b) {
  return families::row_gen::two_rows(d, std::move(a), std::move(b));
}

inline double to_dtype(DType d, LD v) {
  return d == DType::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v));
}

// The oracle agrees with a long double reference within 1 ULP (long double carries 11 more bits).
inline void expect_matches(const OracleResult& r, const std::vector<LD>& ref, DType d) {
  ASSERT_TRUE(r.decidable);
  ASSERT_EQ(r.exact.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i)
    EXPECT_LE(ulp_distance(d, r.exact[i], to_dtype(d, ref[i])), 1.0)
        << dtype_name(d) << " i=" << i << " oracle " << r.exact[i] << " ref "
        << static_cast<double>(ref[i]);
}

}  // namespace stabfuzz::normalization_check
