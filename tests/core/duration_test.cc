// Durations (harness/core/duration.cc): parsing --time values, formatting progress times, the
// timestamp of default output directories.
#include "harness/core/duration.h"

#include <gtest/gtest.h>

#include <limits>
#include <regex>
#include <string>

#include "stabfuzz/errors.h"

namespace stabfuzz {
namespace {

TEST(Duration, ParsesUnitsAndRejectsGarbage) {
  EXPECT_DOUBLE_EQ(parse_duration("90", "--time"), 90);
  EXPECT_DOUBLE_EQ(parse_duration("90s", "--time"), 90);
  EXPECT_DOUBLE_EQ(parse_duration("5m", "--time"), 300);
  EXPECT_DOUBLE_EQ(parse_duration("1h30m", "--time"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("1.5h", "--time"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("0", "--time"), 0);
  for (const char* bad : {"", "5x", "-3", "m", "1h30", "abc", "+5m"})
    EXPECT_THROW(parse_duration(bad, "--time"), InputError) << bad;
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(3 * 3600 + 59), "3h01m");
}

TEST(Duration, DaysAndSummedUnits) {
  EXPECT_DOUBLE_EQ(parse_duration("1d", "--time"), 86400);
  EXPECT_DOUBLE_EQ(parse_duration("1d2h3m4s", "--time"), 86400 + 7200 + 180 + 4);
  EXPECT_DOUBLE_EQ(parse_duration("0.5m", "--time"), 30);
  EXPECT_DOUBLE_EQ(parse_duration("2m2m", "--time"), 240);  // repeated units add up
}

TEST(Duration, RejectsNonFiniteValues) {
  for (const char* bad : {"inf", "infs", "nan", "NaNm", "1e400"})
    EXPECT_THROW(parse_duration(bad, "--time"), InputError) << bad;
}

TEST(Duration, ErrorNamesTheFlagAndTheText) {
  try {
    parse_duration("5x", "--budget");
    FAIL() << "5x parsed";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--budget '5x' is not a duration (90 or 90s, 5m, 2h, 1h30m)");
  }
}

TEST(Duration, FormatsSecondsMinutesAndHours) {
  EXPECT_EQ(format_duration(0), "0.0s");
  EXPECT_EQ(format_duration(12.34), "12.3s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(245), "4m05s");
  EXPECT_EQ(format_duration(3600), "1h00m");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(50 * 3600), "50h00m");
}

TEST(Duration, NegativeAndNaNFormatAsZero) {
  EXPECT_EQ(format_duration(-5), "0.0s");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "0.0s");
}

TEST(Duration, LocalTimestampIsDateDashTime) {
  const std::string t = local_timestamp();
  EXPECT_TRUE(std::regex_match(
      t, std::regex("20[0-9]{2}[01][0-9][0-3][0-9]-[0-2][0-9][0-5][0-9][0-6][0-9]")))
      << t;
}

}  // namespace
}  // namespace stabfuzz
