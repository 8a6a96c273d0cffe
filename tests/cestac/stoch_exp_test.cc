// Stoch's exp against MPFR: the vector polynomial in round to nearest, and the randomly rounded
// samples of a run (no bias).
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "stabfuzz/stoch.h"

namespace stabfuzz {
namespace {

using D = Stoch<double>;

#if defined(__AVX2__) && defined(__FMA__)
TEST(Stoch, VectorExpIsWithinOneUlpOfTheExactValue) {
  // detail::vexp4 against MPFR's correctly rounded e^x over the range it serves.
  mpfr_t m;
  mpfr_init2(m, 200);
  double worst = 0;
  uint64_t z = 12345;
  for (int i = 0; i < 20000; ++i) {
    alignas(32) double x[4], y[4];
    for (double& v : x) {
      z = cestac::mix64(z + 1);
      v = (static_cast<double>(z >> 11) * 0x1p-53 * 2 - 1) * (i % 2 ? 708.0 : 1.0);
    }
    _mm256_store_pd(y, cestac::detail::vexp4(_mm256_load_pd(x)));
    for (int j = 0; j < 4; ++j) {
      mpfr_set_d(m, x[j], MPFR_RNDN);
      mpfr_exp(m, m, MPFR_RNDN);
      const double exact = mpfr_get_d(m, MPFR_RNDN);
      mpfr_sub_d(m, m, y[j], MPFR_RNDN);
      const double err =
          std::fabs(mpfr_get_d(m, MPFR_RNDN)) / (std::nextafter(exact, INFINITY) - exact);
      worst = std::max(worst, err);
    }
  }
  mpfr_clear(m);
  // Within one ulp (libm's own exp is within 0.51): the random perturbation of libm results
  // (detail::random_perturb) already assumes a result whose exact side is unknown.
  EXPECT_LE(worst, 1.0 + 1e-3);
  std::printf("vexp4 worst error: %.4f ulp\n", worst);
}

TEST(Stoch, ExpSamplesAreUnbiasedRandomRoundings) {
  // Stoch's exp of double samples inside a run (round toward +inf), each sample against MPFR's
  // e^(its own argument sample): within 1.7 ulps (the last addition rounded down or up: the
  // exact value lies within 0.61 ulp of those two), and no bias. Exact arguments (all samples
  // equal) and inexact ones (a noisy product) both. An earlier version meant to evaluate its
  // polynomial in round to nearest, but the compiler moved it out of the mode switch: samples of
  // inexact arguments came out of round toward +inf (here: mean +0.30 ulp, worst 2.6; now +0.13
  // and 1.47, the rest of the polynomial's rounding toward +inf).
  mpfr_t m;
  mpfr_init2(m, 200);
  double worst = 0, sum = 0;
  int n = 0;
  uint64_t z = 777;
  for (int i = 0; i < 4000; ++i) {
    z = cestac::mix64(z + 1);
    const double x = (static_cast<double>(z >> 11) * 0x1p-53 * 2 - 1) * (i % 2 ? 700.0 : 1.0);
    D a, r;
    {
      cestac::Run run(3, static_cast<uint64_t>(i));
      a = i % 4 < 2 ? D(x) * D(1.0 - 0x1p-40) : D(x);
      r = exp(a);
    }
    for (int j = 0; j < 4; ++j) {
      mpfr_set_d(m, a.s[j], MPFR_RNDN);
      mpfr_exp(m, m, MPFR_RNDN);
      const double exact = mpfr_get_d(m, MPFR_RNDN);
      const double ulp = std::nextafter(exact, INFINITY) - exact;
      mpfr_sub_d(m, m, r.s[j], MPFR_RNDN);
      const double e = -mpfr_get_d(m, MPFR_RNDN) / ulp;  // (sample - exact) in ulps
      worst = std::max(worst, std::fabs(e));
      sum += e;
      ++n;
    }
  }
  mpfr_clear(m);
  EXPECT_LE(worst, 1.7);
  EXPECT_LT(std::fabs(sum / n), 0.2) << "mean error " << sum / n << " ulp";
  std::printf("exp samples: worst %.3f ulp, mean %.4f ulp\n", worst, sum / n);
}
#endif

}  // namespace
}  // namespace stabfuzz
