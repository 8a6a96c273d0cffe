// Instability sites name the operator's source line: the naive variance's cancelling subtraction.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "families/regimes.h"
#include "injectors/variance.h"
#include "stabfuzz/op.h"

namespace stabfuzz {
namespace {

// The line of injectors/variance.h holding `s2 - s * s / nn`, read from the source itself.
int cancelling_line() {
  std::ifstream in(std::string(STABFUZZ_SOURCE_DIR) + "/injectors/variance.h");
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find("s2 - s * s / nn") != std::string::npos) return line;
  return -1;
}

TEST(Localization, NaiveVarianceNamesItsCancellingSubtraction) {
  const int line = cancelling_line();
  ASSERT_GT(line, 0);
  for (DType d : {DType::f64, DType::f32}) {
    std::vector<double> v(512);
    SeededEntropy e(3, 0);
    for (auto& x : v) x = 1e4 + e.normal();  // |mean| / sigma = 1e4: the one-pass formula cancels
    Input in = regime::row_input(d, std::move(v));
    in.set_param("unbiased", 0);
    CestacRequest req;
    req.seed = 1;
    const CestacOutput out = op_cestac<injectors::VarianceNaive>()(in, req);
    bool named = false;
    std::string sites;
    for (const auto& s : out.log.sites) {
      const std::string where = cestac::symbolize(s.address);
      sites += std::string(cestac::kind_name(s.kind)) + "@" + where + " ";
      named |= s.kind == cestac::Kind::cancellation &&
               where == "injectors/variance.h:" + std::to_string(line);
    }
    EXPECT_TRUE(named) << dtype_name(d) << ": " << sites;
    EXPECT_LT(out.digits[0], d == DType::f64 ? 10.0 : 2.0);
  }
}

TEST(Localization, TheSameFormulaOnACentredRowDoesNotCancel) {
  // The clean twin: rows with mean 0 leave sum(x)^2 / n far below sum(x^2), nothing cancels.
  const int line = cancelling_line();
  std::vector<double> v(512);
  SeededEntropy e(3, 0);
  for (auto& x : v) x = e.normal();
  Input in = regime::row_input(DType::f64, std::move(v));
  in.set_param("unbiased", 0);
  CestacRequest req;
  req.seed = 1;
  const CestacOutput out = op_cestac<injectors::VarianceNaive>()(in, req);
  for (const auto& s : out.log.sites)
    EXPECT_NE(cestac::symbolize(s.address), "injectors/variance.h:" + std::to_string(line))
        << cestac::kind_name(s.kind);
  EXPECT_GT(out.digits[0], 12.0);
}

}  // namespace
}  // namespace stabfuzz
