// The library's own GoogleTest suite checks its kernels with stabfuzz: each test runs the
// family's input generators, CESTAC and the MPFR oracle over one implementation of the plugin
// (MYKERNELS_PLUGIN, the .so built next to this test) for 30 inputs per dtype at seed 1.
#include "stabfuzz/gtest.h"

namespace {

stabfuzz::testing::Options softmax(const char* impl) {
  stabfuzz::testing::Options o;
  o.plugin = MYKERNELS_PLUGIN;
  o.impl = impl;
  o.runs = 30;
  o.seed = 1;
  return o;
}

TEST(MyKernelsSoftmax, Stable) { STABFUZZ_EXPECT_STABLE(softmax("softmax/mykernels/stable")); }

// Fails: exp overflows, inf / inf is NaN (a finding of kind nan; kept to show a failure).
TEST(MyKernelsSoftmax, Naive) { STABFUZZ_EXPECT_STABLE(softmax("softmax/mykernels/naive")); }

}  // namespace
