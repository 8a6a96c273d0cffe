// Build and machine descriptions (harness/core/version.cc): what `stabfuzz --version` and the
// generated results files say about this build and machine.
#include "stabfuzz/version.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <regex>
#include <string>
#include <thread>

namespace stabfuzz {
namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Version, BuildConfigurationNamesEveryOptionalPart) {
  const std::string c = build_configuration();
  EXPECT_TRUE(has(c, "libfuzzer on") || has(c, "libfuzzer off")) << c;
  EXPECT_TRUE(has(c, "cuda compiled (") || has(c, "cuda off")) << c;
  EXPECT_TRUE(has(c, "onednn on") || has(c, "onednn off")) << c;
  EXPECT_TRUE(has(c, "cblas on") || has(c, "cblas off")) << c;
  EXPECT_TRUE(has(c, "libtorch on") || has(c, "libtorch off")) << c;
  EXPECT_TRUE(has(c, std::string(", mpfr ") + mpfr_get_version())) << c;
}

TEST(Version, BuildConfigurationStartsWithTheCompiler) {
  const std::string c = build_configuration();
#if defined(__clang__)
  EXPECT_EQ(c.rfind("clang ", 0), 0u) << c;
#elif defined(__GNUC__)
  EXPECT_EQ(c.rfind("gcc ", 0), 0u) << c;
#endif
  EXPECT_EQ(c.find(" ,"), std::string::npos) << c;  // no trailing space before a comma
}

TEST(Version, MachineDescriptionCountsTheCpus) {
  const std::string m = machine_description();
  EXPECT_TRUE(has(m, std::to_string(std::thread::hardware_concurrency()) + " CPUs")) << m;
}

TEST(Version, UtcDateIsIsoDate) {
  const std::string d = utc_date();
  EXPECT_TRUE(std::regex_match(d, std::regex("20[0-9]{2}-[01][0-9]-[0-3][0-9]"))) << d;
}

}  // namespace
}  // namespace stabfuzz
