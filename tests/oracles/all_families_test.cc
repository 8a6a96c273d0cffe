// Oracle quality for every family at once: valid regimes, honest error bounds, stable targets pass.
//
// For every family of the default registry, every dtype of its stable CPU target and every regime,
// a few seeded inputs (short ones: long rows cost the oracle, not the check) must
//  (a) pass the family's own validation,
//  (b) get the same oracle answer whether Ziv's ladder starts at the default working precision or
//      64 bits higher: an error bound that round_decided trusts but the approximation does not
//      meet would let the lower start round to a different value (or decide where the higher one
//      cannot, or the reverse),
//  (c) be computed by the stable target within the family's tolerance under the verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness/pipeline/verdict.h"
#include "oracles/mpfr_util.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"

namespace stabfuzz {
namespace {

constexpr int kInputsPerRegime = 2;
constexpr size_t kMaxValues = 256;  // redraw longer inputs: the whole test stays in seconds
constexpr int kMaxDraws = 64;

// Bitwise equality, so that NaN equals NaN and -0 differs from +0.
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

const Target* stable_target(const Family& f) {
  for (const auto& t : f.targets)
    if (t.id == f.name + "/cpu/stable") return &t;
  return nullptr;
}

// An input of the regime with at most kMaxValues values (the shortest of kMaxDraws draws).
Input draw(const Regime& r, DType d, Entropy& e) {
  Input best = r.sample(e, d);
  for (int k = 1; k < kMaxDraws && best.total_size() > kMaxValues; ++k) {
    Input in = r.sample(e, d);
    if (in.total_size() < best.total_size()) best = std::move(in);
  }
  return best;
}

std::string where(const Family& f, const Regime& r, DType d, int k) {
  return f.name + " " + std::string(dtype_name(d)) + " regime " + r.name + " input " +
         std::to_string(k);
}

class AllFamilies : public ::testing::TestWithParam<std::string> {};

TEST_P(AllFamilies, RegimesValidOraclesHonestStableTargetsWithinTolerance) {
  const Family* f = default_registry().find_family(GetParam());
  ASSERT_NE(f, nullptr);
  const Target* t = stable_target(*f);
  ASSERT_NE(t, nullptr) << f->name << " has no cpu/stable target";
  int decided = 0, total = 0;
  for (const DType d : t->dtypes) {
    for (size_t ri = 0; ri < f->regimes.size(); ++ri) {
      const Regime& r = f->regimes[ri];
      SeededEntropy e(2026, ri * 16 + static_cast<uint64_t>(d));
      for (int k = 0; k < kInputsPerRegime; ++k) {
        const Input in = draw(r, d, e);
        const std::string at = where(*f, r, d, k);
        const auto bad = f->validate(in);
        ASSERT_FALSE(bad.has_value()) << at << ": " << *bad;  // (a)
        const OracleResult lo = f->oracle(in);
        OracleResult hi;
        {
          oracle::StartPrecisionOverride start(oracle::kStartPrecision + 64);
          hi = f->oracle(in);
        }
        ++total;
        // (b) Where both decide, they agree bit for bit (the two ladders end at different
        // precisions below the cap, so only one of them may give up on a hard case).
        if (lo.decidable && hi.decidable) {
          ASSERT_EQ(lo.exact.size(), hi.exact.size()) << at;
          for (size_t i = 0; i < lo.exact.size(); ++i)
            EXPECT_TRUE(same(lo.exact[i], hi.exact[i]))
                << at << " output " << i << ": " << lo.exact[i] << " (start "
                << oracle::kStartPrecision << ") vs " << hi.exact[i] << " (start +64)";
        }
        if (!lo.decidable) continue;
        ++decided;
        // (c) The stable target, judged by the verdict without CESTAC.
        const std::vector<double> y = t->native(in);
        const Verdict v = judge(*f, in, y, lo, nullptr);
        EXPECT_FALSE(v.oracle_fired)
            << at << ": output " << v.worst << " computed " << v.computed << " exact " << v.exact
            << " cond " << v.cond << " error/tolerance " << v.max_ratio;
      }
    }
  }
  EXPECT_GE(decided, total * 9 / 10) << f->name << ": too many undecidable inputs";
}

// The override moves where every oracle's ladder starts (else check (b) would compare an oracle
// with itself): a dot product of exact small integers decides at the first rung.
TEST(StartPrecision, OverrideMovesTheLadderAndRestores) {
  const Family* f = default_registry().find_family("dot");
  ASSERT_NE(f, nullptr);
  Input in;
  in.dtype = DType::f32;
  in.args = {Tensor{{2}, {3.0, 5.0}}, Tensor{{2}, {7.0, 11.0}}};
  EXPECT_EQ(f->oracle(in).precision_bits, oracle::kStartPrecision);
  {
    oracle::StartPrecisionOverride start(oracle::kStartPrecision + 64);
    EXPECT_EQ(oracle::start_precision(), oracle::kStartPrecision + 64);
    const OracleResult r = f->oracle(in);
    EXPECT_EQ(r.precision_bits, oracle::kStartPrecision + 64);
    EXPECT_EQ(r.exact, std::vector<double>{76.0});
  }
  EXPECT_EQ(oracle::start_precision(), oracle::kStartPrecision);
}

std::vector<std::string> family_names() {
  std::vector<std::string> v;
  for (const auto& f : default_registry().families()) v.push_back(f.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Registry, AllFamilies, ::testing::ValuesIn(family_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace stabfuzz
