// The oneDNN targets' layouts checked on exact inputs, shared by onednn_calls_test.cc (the linked
// oneDNN) and onednn_test.cc (oneDNN 3's module).
#pragma once

#include <string>

#include "tests/libs/library_check.h"

namespace stabfuzz::testing {

// matmul's and batch normalization's layouts on `library` (onednn or onednn3).
inline void expect_exact_layouts(const std::string& library) {
  const auto [gf, gemm] = default_registry().find_target("gemm/" + library + "/matmul");
  ASSERT_NE(gemm, nullptr);
  Input mm;  // A [2, 3], B [3, 1]: C = [1 - 2 + 6, 4 - 5 + 12] = [5, 11]
  mm.args = {{{2, 3}, {1, 2, 3, 4, 5, 6}}, {{3, 1}, {1, -1, 2}}};
  expect_exact(*gemm, mm, {5, 11});
  const auto [bf, bn] =
      default_registry().find_target("batch_norm/" + library + "/batch_normalization");
  ASSERT_NE(bn, nullptr);
  Input x;  // [2, 2]: channel 0 = {1, 3}, channel 1 = {5, 5}; eps 0 is refused, so y = +-1/sqrt(1 +
            // eps)
  x.args = {{{2, 2}, {1, 5, 3, 5}}};
  x.dtype = DType::f32;
  const auto y = bn->native(x);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_LT(y[0], -0.99);
  EXPECT_GT(y[2], 0.99);
  EXPECT_EQ(y[1], 0);  // the constant channel, not the row
  EXPECT_EQ(y[3], 0);
}

}  // namespace stabfuzz::testing
