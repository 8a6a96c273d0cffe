// The findings file and exact floats (reports/findings.cc): hex floats and back, the append-only
// findings.jsonl writer, an earlier run moved aside.
#include "reports/findings.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "reports/json.h"
#include "reports/run_data.h"
#include "tests/support/report_fixture.h"

namespace stabfuzz {
namespace {

using json::Object;
using json::ParseError;
using json::Value;
using testing::fixture_dir;
using testing::kResults;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// Raw bit patterns: size-scaled (tiny magnitudes, subnormals) or full width (any exponent, sign).
rc::Gen<uint64_t> any_bits() {
  return rc::gen::oneOf(rc::gen::arbitrary<uint64_t>(),
                        rc::gen::resize(100, rc::gen::arbitrary<uint64_t>()));
}

TEST(HexFloat, ExactTextForKnownValues) {
  EXPECT_EQ(reports::hex_float(3.0), "0x1.8p+1");
  EXPECT_EQ(reports::hex_float(-0.5), "-0x1p-1");
  EXPECT_EQ(reports::hex_float(INFINITY), "inf");
  EXPECT_EQ(reports::hex_float(-INFINITY), "-inf");
  EXPECT_EQ(reports::hex_float(NAN), "nan");
  EXPECT_EQ(reports::parse_float("0x1.8p+1"), 3.0);
  EXPECT_EQ(reports::parse_float("1.25"), 1.25);
  EXPECT_EQ(reports::parse_float("-inf"), -INFINITY);
  for (const char* bad : {"", "abc", "1.0x", "0x", "1e5 ", "--1"})
    EXPECT_THROW(reports::parse_float(bad), ParseError) << "'" << bad << "'";
  for (double d : {0.0, -0.0, 5e-324, -5e-324, 0x1p-1022, 1.7976931348623157e308, 0.1})
    EXPECT_TRUE(same_bits(reports::parse_float(reports::hex_float(d)), d)) << d;
}

RC_GTEST_PROP(HexFloatProp, ParseFloatInvertsHexFloat, ()) {
  // Raw bit patterns cover subnormals, both zeros and NaNs; infinities are added explicitly.
  const double d = *rc::gen::weightedOneOf<double>(
      {{8, rc::gen::map(any_bits(), [](uint64_t b) { return std::bit_cast<double>(b); })},
       {1, rc::gen::element(kInf, -kInf, kNaN, -kNaN)}});
  const double back = reports::parse_float(reports::hex_float(d));
  if (std::isnan(d))
    RC_ASSERT(std::isnan(back));
  else
    RC_ASSERT(same_bits(back, d));
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FindingsWriter, AppendsOneParseableLinePerFinding) {
  const std::string path =
      ::testing::TempDir() + "findings_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  {
    reports::FindingsWriter w(path);
    EXPECT_EQ(w.path(), path);
    for (int i = 0; i < 3; ++i) {
      Value f;
      f.set("index", i);
      f.set("note", "multi\nline");  // escaped: still one line
      f.set("exact", reports::hex_float(0.1 * i));
      w.append(f);
      // Flushed before append returns: visible to a reader while the writer is open.
      EXPECT_EQ(read_lines(path).size(), static_cast<size_t>(i + 1));
    }
  }
  const auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const Value f = json::parse(lines[static_cast<size_t>(i)]);
    EXPECT_EQ(f.at("index").as_number(), i);
    EXPECT_EQ(f.at("note").as_string(), "multi\nline");
    EXPECT_EQ(reports::parse_float(f.at("exact").as_string()), 0.1 * i);
  }
  {  // A second writer appends rather than truncates.
    reports::FindingsWriter w(path);
    w.append(Value(Object{{"index", 3}}));
  }
  EXPECT_EQ(read_lines(path).size(), 4u);
  std::remove(path.c_str());
}

TEST(FindingsWriter, UnwritablePathThrows) {
  EXPECT_ANY_THROW(reports::FindingsWriter("/nonexistent-dir/sub/findings.jsonl"));
}

TEST(PreviousRun, ASecondRunIntoTheSameDirectoryMovesTheFirstAside) {
  const std::string dir = fixture_dir();
  std::ofstream(dir + "/report.md") << "old report\n";
  EXPECT_EQ(reports::move_previous_run(dir), dir + "/previous-1");
  EXPECT_EQ(testing::slurp(dir + "/previous-1/report.md"), "old report\n");
  EXPECT_EQ(testing::count_lines(testing::slurp(dir + "/previous-1/findings.jsonl")), 4);
  EXPECT_TRUE(testing::slurp(dir + "/findings.jsonl").empty());
  EXPECT_EQ(reports::move_previous_run(dir), "");  // nothing left to move
  testing::write_run(dir, kResults, {});
  EXPECT_EQ(reports::move_previous_run(dir), dir + "/previous-2");
  EXPECT_EQ(reports::load_run(dir + "/previous-1").findings.size(), 4u);
}

}  // namespace
}  // namespace stabfuzz
