// stabfuzz/gtest.h inside the build: its verdicts on the built binary (a pass, the example
// plugin's planted overflow as findings, every way a run can fail to happen as a failure with the
// tool's error line) and its JSON reader. examples/gtest built against an install is
// tests/plugin/gtest_example.cmake.
#include <cstdlib>
#include <filesystem>

#include "stabfuzz/gtest.h"

namespace {

using stabfuzz::testing::Options;

Options softmax(const std::string& impl) {
  Options o;
  o.impl = impl;
  o.runs = 4;
  o.seed = 3;
  o.dtype = "f64";
  return o;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(GtestHeader, ReferencePasses) {
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(softmax("softmax/cpu/stable"));
  EXPECT_TRUE(r) << r.message();
  EXPECT_TRUE(contains(r.message(), "stable on 4 inputs")) << r.message();
}

// The example plugin's planted overflow (ctest fixture plugin_example): findings with a kind,
// values and a replay line that starts with the binary that ran.
TEST(GtestHeader, PluginFindingsFail) {
  if (!std::filesystem::exists(STABFUZZ_EXAMPLE_PLUGIN))
    GTEST_SKIP() << "run under ctest: " << STABFUZZ_EXAMPLE_PLUGIN << " is missing";
  Options o = softmax("softmax/mylib/fast");
  o.plugin = STABFUZZ_EXAMPLE_PLUGIN;
  o.dtype = "f32";
  o.runs = 14;
  o.seed = 5;
  const stabfuzz::testing::Result run = stabfuzz::testing::Run(o);
  ASSERT_EQ(run.exit_code, 1) << run.error;
  ASSERT_FALSE(run.findings.empty());
  for (const auto& f : run.findings) {
    EXPECT_EQ(f.impl, "softmax/mylib/fast");
    EXPECT_EQ(f.dtype, "f32");
    EXPECT_FALSE(f.kind.empty());
    EXPECT_FALSE(f.exact.empty());
    EXPECT_EQ(f.replay.rfind(std::string(STABFUZZ_GTEST_EXECUTABLE) + " --plugin ", 0), 0u)
        << f.replay;
  }
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(o);
  EXPECT_FALSE(r);
  EXPECT_TRUE(contains(r.message(), "finding 1 of ")) << r.message();
  EXPECT_TRUE(contains(r.message(), "  replay:   " + run.findings[0].replay)) << r.message();
}

TEST(GtestHeader, PluginThatDoesNotLoadFails) {
  Options o = softmax("softmax/mylib/stable");
  o.plugin = std::string(STABFUZZ_BAD_PLUGIN_DIR) + "/abi.so";
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(o);
  EXPECT_FALSE(r);
  EXPECT_TRUE(contains(r.message(), "stabfuzz did not run: exit status 2: ")) << r.message();
  EXPECT_TRUE(contains(r.message(), "abi.so")) << r.message();
}

TEST(GtestHeader, UnknownImplementationFails) {
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(softmax("softmax/none/such"));
  EXPECT_FALSE(r);
  EXPECT_TRUE(contains(r.message(), "exit status 2: ")) << r.message();
  EXPECT_TRUE(contains(r.message(), "softmax/none/such")) << r.message();
}

TEST(GtestHeader, MissingBinaryFails) {
  Options o = softmax("softmax/cpu/stable");
  o.executable = "/nonexistent/stabfuzz";
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(o);
  EXPECT_FALSE(r);
  EXPECT_TRUE(contains(r.message(), "cannot run /nonexistent/stabfuzz: No such file"))
      << r.message();
  // The environment variable overrides the compiled-in path; Options::executable overrides both.
  ASSERT_EQ(setenv("STABFUZZ_EXECUTABLE", "/nonexistent/env/stabfuzz", 1), 0);
  const ::testing::AssertionResult env = stabfuzz::testing::Stable(softmax("softmax/cpu/stable"));
  o.executable = STABFUZZ_GTEST_EXECUTABLE;
  const ::testing::AssertionResult explicit_binary = stabfuzz::testing::Stable(o);
  unsetenv("STABFUZZ_EXECUTABLE");
  EXPECT_FALSE(env);
  EXPECT_TRUE(contains(env.message(), "cannot run /nonexistent/env/stabfuzz")) << env.message();
  EXPECT_TRUE(explicit_binary) << explicit_binary.message();
}

TEST(GtestHeader, ZeroRunsFails) {
  Options o = softmax("softmax/cpu/stable");
  o.runs = 0;
  const ::testing::AssertionResult r = stabfuzz::testing::Stable(o);
  EXPECT_FALSE(r) << r.message();
  EXPECT_TRUE(contains(r.message(), "--runs must be positive")) << r.message();
}

TEST(GtestHeader, JsonReader) {
  using stabfuzz::testing::detail::Json;
  Json v;
  std::string error;
  ASSERT_TRUE(stabfuzz::testing::detail::parse_json(
      R"( {"kind":"overflow","max_ulp":"inf","digits":1.5e-3,"ok":true,"none":null,)"
      R"("s":"a\"b\\c\u00e9","input":[{"shape":[2],"values":["0x1p+0","-0x1.8p-1"]}],"e":{}} )",
      v, error))
      << error;
  EXPECT_EQ(v.str("kind"), "overflow");
  EXPECT_EQ(v.str("max_ulp"), "inf");
  EXPECT_EQ(v.number("digits"), 1.5e-3);
  EXPECT_EQ(v.str("ok"), "true");
  EXPECT_EQ(v.str("none"), "");
  EXPECT_EQ(v.str("s"), "a\"b\\c\xc3\xa9");
  EXPECT_EQ(stabfuzz::testing::detail::format_input(v), "x0[2] = {0x1p+0, -0x1.8p-1}");
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]x", "\"open", "{\"a\":[1 2]}"})
    EXPECT_FALSE(stabfuzz::testing::detail::parse_json(bad, v, error)) << bad;
}

}  // namespace
