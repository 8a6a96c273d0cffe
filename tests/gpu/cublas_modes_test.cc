// Each cuBLAS mode computes what its name says (ctest label gpu; skips, saying why, without a GPU):
// on shapes cuBLAS runs on tensor cores and on operands that show the mode's rounding
// (targets/cublas/gemm_modes.h probes), every output lies within the mode's emulated value and
// bound, and outside the other mode's where the mode must differ: TF32 from f32 by the rounding of
// the operands, f16 accumulation from f32 accumulation by stagnation. gemm_modes_test checks the
// emulation and these premises on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "targets/cublas/gemm_cublas.h"
#include "targets/cuda/kernels.h"
#include "tests/support/require.h"

namespace stabfuzz::cublas {
namespace {

#define SKIP_WITHOUT_GPU()                                     \
  do {                                                         \
    std::string why;                                           \
    if (stabfuzz::cuda::device_count(&why) == 0)               \
      STABFUZZ_SKIP_UNLESS_REQUIRED("gpu", "no GPU: " << why); \
  } while (0)

// Outputs of c outside e.value +- e.bound, with the first one described in `first`.
size_t outside(const std::vector<double>& c, const Emulated& e, std::string* first = nullptr) {
  size_t count = 0;
  for (size_t i = 0; i < c.size(); ++i)
    if (!(std::fabs(c[i] - e.value[i]) <= e.bound[i])) {
      if (count++ == 0 && first)
        *first = "output " + std::to_string(i) + ": " + std::to_string(c[i]) + ", emulated " +
                 std::to_string(e.value[i]) + " +- " + std::to_string(e.bound[i]);
    }
  return count;
}

bool tf32_disabled() {
  const char* v = std::getenv("NVIDIA_TF32_OVERRIDE");  // "0": no library may use TF32
  return v && std::string(v) == "0";
}

constexpr size_t kS = 256;  // m = k = n, a multiple of every tensor-core tile

TEST(CublasModes, F32KeepsF32AndTf32RoundsTheOperands) {
  SKIP_WITHOUT_GPU();
  const auto a = tf32_probe(kS * kS, 1, true), b = tf32_probe(kS * kS, 2, true);
  const Emulated f32 = emulate_gemm(Mode::f32, a, b, kS, kS, kS);
  // Below half of TF32's last place, nearest and truncation give the same operands.
  const Emulated tf32 = emulate_gemm(Mode::tf32, a, b, kS, kS, kS);
  std::string first;
  const auto c32 = gemm(Mode::f32, a, b, kS, kS, kS);
  EXPECT_EQ(outside(c32, f32, &first), 0u) << "f32: " << first;
  if (tf32_disabled()) GTEST_SKIP() << "NVIDIA_TF32_OVERRIDE=0: TF32 is off in this process";
  const auto ct = gemm(Mode::tf32, a, b, kS, kS, kS);
  EXPECT_EQ(outside(ct, tf32, &first), 0u) << "tf32: " << first;
  // The f32 and TF32 results differ by the operands' rounding: at least the distance between
  // the emulations less both bounds, which the probe keeps positive for every output.
  size_t close = 0;
  for (size_t i = 0; i < ct.size(); ++i) {
    const double gap = (f32.value[i] - tf32.value[i]) - f32.bound[i] - tf32.bound[i];
    ASSERT_GT(gap, 0) << i;
    close += !(c32[i] - ct[i] >= gap);
  }
  EXPECT_EQ(close, 0u) << "outputs where TF32 is not below f32 by the operands' rounding";
  std::printf("tf32 - f32 at output 0: %.6g (emulated %.6g)\n", ct[0] - c32[0],
              tf32.value[0] - f32.value[0]);
}

TEST(CublasModes, Tf32RoundsToNearestOrTruncates) {
  SKIP_WITHOUT_GPU();
  if (tf32_disabled()) GTEST_SKIP() << "NVIDIA_TF32_OVERRIDE=0: TF32 is off in this process";
  // Above half of TF32's last place: nearest rounds up, truncation down; NVIDIA does not say
  // which cuBLAS does, so either passes, the same one for every output.
  const auto a = tf32_probe(kS * kS, 3, false), b = tf32_probe(kS * kS, 4, false);
  const Emulated up = emulate_gemm(Mode::tf32, a, b, kS, kS, kS, Tf32Rounding::nearest_away);
  const Emulated down = emulate_gemm(Mode::tf32, a, b, kS, kS, kS, Tf32Rounding::truncate);
  const auto ct = gemm(Mode::tf32, a, b, kS, kS, kS);
  const size_t off_up = outside(ct, up), off_down = outside(ct, down);
  const char* which = off_up == 0 ? "nearest" : off_down == 0 ? "truncation" : "neither";
  std::printf(
      "TF32 conversion of the operands: %s (%zu / %zu outputs outside nearest's bound, "
      "%zu outside truncation's)\n",
      which, off_up, ct.size(), off_down);
  RecordProperty("tf32_rounding", which);
  EXPECT_TRUE(off_up == 0 || off_down == 0) << which;
}

TEST(CublasModes, SixteenBitInputsAccumulateInF32) {
  SKIP_WITHOUT_GPU();
  const size_t m = 128, k = 1024, n = 128;
  for (Mode mode : {Mode::f16_f32acc, Mode::bf16}) {
    const bool bf16 = mode == Mode::bf16;
    const auto a = half_probe(m * k, 5, bf16), b = half_probe(k * n, 6, bf16);
    std::string first;
    EXPECT_EQ(outside(gemm(mode, a, b, m, k, n), emulate_gemm(mode, a, b, m, k, n), &first), 0u)
        << mode_name(mode) << ": " << first;
  }
  // The stagnation probe: f32 accumulation keeps the 7 2^-10 that f16 partial sums drop.
  const size_t ms = 64, ks = kF16StagnationK, ns = 64;
  const std::vector<double> a(ms * ks, 1.0), b(ks * ns, kF16StagnationB);
  std::string first;
  EXPECT_EQ(outside(gemm(Mode::f16_f32acc, a, b, ms, ks, ns),
                    emulate_gemm(Mode::f16_f32acc, a, b, ms, ks, ns), &first),
            0u)
      << "f16_f32acc on the stagnation probe: " << first;
}

TEST(CublasModes, F16AccumulationRoundsThePartialSums) {
  SKIP_WITHOUT_GPU();
  // Within the f16-accumulation bound where it means something (k = 32: about 7%).
  const size_t m = 64, k = 32, n = 64;
  const auto a = half_probe(m * k, 7, false), b = half_probe(k * n, 8, false);
  std::string first;
  EXPECT_EQ(outside(gemm(Mode::f16_f16acc, a, b, m, k, n),
                    emulate_gemm(Mode::f16_f16acc, a, b, m, k, n), &first),
            0u)
      << first;
  // Below the f32-accumulation bound on the stagnation probe: 2062 exactly, f16 partial sums
  // lose most of it (2048 to 2050 when added one by one or in blocks of 16).
  const size_t ms = 64, ks = kF16StagnationK, ns = 64;
  const std::vector<double> sa(ms * ks, 1.0), sb(ks * ns, kF16StagnationB);
  const Emulated f32acc = emulate_gemm(Mode::f16_f32acc, sa, sb, ms, ks, ns);
  const auto c = gemm(Mode::f16_f16acc, sa, sb, ms, ks, ns);
  size_t kept = 0;
  for (size_t i = 0; i < c.size(); ++i) kept += !(c[i] < f32acc.value[i] - f32acc.bound[i]);
  std::printf("f16_f16acc on the stagnation probe: %.0f (exact %.0f)\n", c[0], f32acc.value[0]);
  EXPECT_EQ(kept, 0u) << "outputs as accurate as f32 accumulation, e.g. " << c[0];
}

TEST(CublasModes, SmallIntegersAreExactInEveryMode) {
  SKIP_WITHOUT_GPU();
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};  // [2,3] x [3,2]
  const std::vector<double> want = {58, 64, 139, 154};
  for (Mode m : kAllModes) EXPECT_EQ(gemm(m, a, b, 2, 3, 2), want) << mode_name(m);
}

TEST(CublasModes, ShapesOverItsIntsAreInvalidArgumentsBeforeAnyCall) {
  // No GPU needed: the shape check runs first.
  const std::vector<double> one = {1};
  EXPECT_THROW(gemm(Mode::f32, one, one, 1, 1, 2), std::invalid_argument);
  EXPECT_THROW(gemm(Mode::f32, {}, {}, 0, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace stabfuzz::cublas
