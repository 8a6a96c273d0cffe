// The results table: one line per implementation, one row per dtype, every line within 100
// columns whatever the ids and verdicts; the numbers and verdicts a row shows.
#include "harness/cli/common.h"

#include <gtest/gtest.h>

#include <sstream>

#include "harness/core/console.h"

namespace stabfuzz::cli {
namespace {

campaign::ImplResult row(const std::string& impl, TargetKind kind, DType d) {
  campaign::ImplResult r;
  r.family = impl.substr(0, impl.find('/'));
  r.impl = impl;
  r.kind = kind;
  r.dtype = d;
  r.inputs = 1234567;
  r.min_digits = 14.2;
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

campaign::RunResult results() {
  campaign::RunResult res;
  auto stable = row("softmax/cpu/stable", TargetKind::reference, DType::f64);
  stable.has_cestac = true;
  res.results.push_back(stable);
  // The longest library id, every finding kind failing, huge errors, crashes: the worst row.
  auto lib = row("bce_with_logits/torch/binary_cross_entropy_with_logits", TargetKind::library,
                 DType::bf16);
  lib.failing_inputs = lib.findings = 1234567;
  for (auto& n : lib.failing_by_kind) n = 123456;
  lib.max_ulp = 1.08e+39;
  lib.max_ratio = 5.1e+38;
  lib.crashes = lib.timeouts = lib.exceptions = 12345;
  lib.undecidable = 3;
  lib.blackbox.emplace();
  res.results.push_back(lib);
  res.results.push_back(row(lib.impl, TargetKind::library, DType::f32));
  return res;
}

TEST(Table, EveryLineFits100Columns) {
  std::ostringstream os;
  print_table(results(), os);
  const auto ls = lines(os.str());
  ASSERT_GE(ls.size(), 6u);
  for (const auto& l : ls) EXPECT_LE(columns(l), 100u) << l;
}

TEST(Table, OneLinePerImplementationOneRowPerDtype) {
  std::ostringstream os;
  print_table(results(), os);
  const auto ls = lines(os.str());
  EXPECT_EQ(ls[0], "  dtype   inputs failing findings  max_ulp  err/tol digits  verdict");
  EXPECT_EQ(ls[1], "softmax/cpu/stable  reference");
  EXPECT_EQ(ls[2], "  f64    1234567       0        0        0     0.00   14.2  ok");
  EXPECT_EQ(ls[3], "bce_with_logits/torch/binary_cross_entropy_with_logits  library");
  EXPECT_EQ(
      ls[4].rfind("  bf16   1234567 1234567  1234567 1.08e+39 5.10e+38      -  UNSTABLE (", 0), 0u)
      << ls[4];
  // The verdict wraps under its own column; the crash counts and undecidable inputs follow.
  std::string joined;  // the wrapped verdict as one line
  for (size_t i = 4; i < ls.size() && (i == 4 || ls[i].rfind(std::string(60, ' '), 0) == 0); ++i)
    joined += (i == 4 ? ls[i] : " " + ls[i].substr(60));
  EXPECT_NE(joined.find("(12345 crashed, 12345 timed out, 12345 threw)"), std::string::npos)
      << joined;
  EXPECT_EQ(ls[5].find_first_not_of(' '), 60u) << ls[5];
  EXPECT_NE(os.str().find("    3 inputs undecidable by the oracle"), std::string::npos);
  // The same implementation's next dtype: no second id line.
  EXPECT_EQ(ls.back().rfind("  f32 ", 0), 0u) << ls.back();
}

}  // namespace
}  // namespace stabfuzz::cli
