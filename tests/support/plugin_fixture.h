// The example plugin (examples/plugin) for the plugin tests: built once by ctest's fixture
// plugin_example_build, or by the test itself when run outside ctest.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reports/json.h"

namespace stabfuzz::testing {

inline const std::string kPlugin = STABFUZZ_EXAMPLE_PLUGIN;

// Not in an anonymous namespace: every file's TEST_F(Plugin, ...) must share this one class.
class Plugin : public ::testing::Test {
 protected:
  // ctest's fixture builds the example once; run outside ctest, the test builds it itself.
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kPlugin)) {
      const std::string cmd = std::string(STABFUZZ_EXAMPLE_BUILD) + " > /dev/null 2>&1";
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  }
  void SetUp() override { ASSERT_TRUE(std::filesystem::exists(kPlugin)) << kPlugin; }

  static std::string plugin() { return "--plugin " + kPlugin; }
  static std::vector<json::Value> findings(const std::string& dir) {
    std::vector<json::Value> out;
    std::ifstream f(dir + "/findings.jsonl");
    for (std::string line; std::getline(f, line);)
      if (!line.empty()) out.push_back(json::parse(line));
    return out;
  }
};

}  // namespace stabfuzz::testing
