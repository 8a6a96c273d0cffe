// The double-double paths of attention and adam against their MPFR paths (oracles/linalg.cc): the
// same outputs, signs and conditions wherever the double-double path answers, on every regime in
// every dtype and on hard inputs, and an answer for most inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "families/regimes.h"
#include "oracles/linalg.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/family.h"
#include "tests/oracles/linalg_check.h"

namespace stabfuzz {
namespace {

using namespace linalg_check;

// Samples of every regime of `name` in dtype d that the family accepts.
std::vector<Input> regime_inputs(const char* name, DType d, int k, Entropy& e) {
  const Family& fam = family(name);
  std::vector<Input> ins;
  for (int i = 0; i < k; ++i) {
    Input in = fam.regimes[static_cast<size_t>(i) % fam.regimes.size()].sample(e, d);
    if (!fam.validate(in)) ins.push_back(std::move(in));
  }
  return ins;
}

void expect_same(const OracleResult& dd, const OracleResult& mp, DType d) {
  ASSERT_TRUE(mp.decidable);
  ASSERT_EQ(dd.exact.size(), mp.exact.size());
  for (size_t i = 0; i < mp.exact.size(); ++i) {
    ASSERT_EQ(dd.exact[i], mp.exact[i]) << dtype_name(d) << " output " << i;
    ASSERT_EQ(std::signbit(dd.exact[i]), std::signbit(mp.exact[i])) << i;
    if (std::isinf(mp.cond[i]))
      ASSERT_EQ(dd.cond[i], mp.cond[i]) << i;
    else
      ASSERT_NEAR(dd.cond[i], mp.cond[i], 1e-9 * std::fmax(1.0, mp.cond[i]))
          << dtype_name(d) << " output " << i;
  }
}

// Attention: rows of every regime, and heads built to be hard: equal keys (uniform weights, O a
// mean that can be a tie), scores far apart (terms below e^-600), one key, causal masks, a zero
// column of V, V of mixed signs whose weighted sum cancels.
TEST(AttentionOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(5, 67);
  int rows = 0, fast = 0;
  for (DType d : kAllDTypes) {
    std::vector<Input> ins = regime_inputs("attention", d, 120, e);
    ins.push_back(attention_input(d, 1, 2, 2, 2, {0.3, -8}, {1, 2, 1, 2}, {1, 2, 3, 4}));
    ins.push_back(attention_input(d, 1, 1, 3, 1, {1}, {0, 700, 3}, {1, 2, -3}, {{"scale", 1}}));
    ins.push_back(attention_input(d, 2, 2, 1, 3, {50, -3, 0.5, 9}, {7, 2}, {1.5, 0, -4}));
    ins.push_back(attention_input(d, 2, 1, 2, 1, {1, 1}, {0, 10}, {5, 6}, {{"causal", 1}}));
    ins.push_back(attention_input(d, 1, 1, 2, 2, {1}, {0.5, -0.5}, {0, 1, 0, -1}));
    ins.push_back(attention_input(d, 1, 1, 2, 1, {0}, {1, 1}, {1, -1}));
    for (const Input& in : ins) {
      ++rows;
      const auto dd = oracle::detail::attention_double_double(in);
      if (!dd) continue;
      ++fast;
      expect_same(*dd, oracle::detail::attention_mpfr(in), d);
    }
  }
  EXPECT_GT(fast, rows * 3 / 4);
}

// Adam: rows of every regime, at steps 1, 2, 3, 1000 and 10^6 (bias corrections exact, near 0 and
// near 1), and hard rows (m' = 0, v' = 0, lr = 0, eps = 0 with v' > 0).
TEST(AdamOracle, DoubleDoubleAgreesWithMpfrOnEveryRegimeAndDtype) {
  SeededEntropy e(5, 61);
  int rows = 0, fast = 0;
  for (DType d : kAllDTypes) {
    std::vector<Input> ins = regime_inputs("adam", d, 150, e);
    for (double step : {1.0, 2.0, 3.0, 1000.0, 1e6}) {
      ins.push_back(
          adam_input(d, {0.75, -2, 1e3}, {3, 1, -0.5}, {1, 0, 0.25}, {4, 0, 2}, {{"step", step}}));
      ins.push_back(
          adam_input(d, {1, 0.5}, {0, 2}, {0, -1}, {0, 0.5}, {{"step", step}, {"eps", 0}}));
    }
    ins.push_back(adam_input(d, {0.75, -2}, {3, 1}, {1, 0}, {4, 0}, {{"lr", 0}}));
    for (const Input& in : ins) {
      ++rows;
      const auto dd = oracle::detail::adam_double_double(in);
      if (!dd) continue;
      ++fast;
      expect_same(*dd, oracle::detail::adam_mpfr(in), d);
    }
  }
  EXPECT_GT(fast, rows * 3 / 4);
}

}  // namespace
}  // namespace stabfuzz
