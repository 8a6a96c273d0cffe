// The plugin loader (harness/plugin/loader.cc): every malformed plugin, or one misbehaving while
// it loads, refused with one line naming the problem and exit 2; a plugin loaded twice refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "tests/support/plugin_fixture.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::Plugin;
using testing::run_stabfuzz;

// Each malformed plugin: exit 2 and one line on stderr naming the problem.
TEST_F(Plugin, MalformedPluginsAreRefusedWithOneLine) {
  const std::string bad = STABFUZZ_BAD_PLUGIN_DIR;
  const std::string junk = testing::temp_dir("plugin_junk");
  std::filesystem::create_directories(junk);
  std::ofstream(junk + "/junk.so") << "not an ELF file\n";
  const std::pair<std::string, std::string> cases[] = {
      {junk + "/junk.so", "does not load"},
      {junk + "/missing.so", "does not load"},
      {bad + "/no_entry.so", "exports no stabfuzz_plugin_v1"},
      {bad + "/abi.so", "speaks plugin ABI version 99"},
      {bad + "/family.so", "unknown family 'no_such_family'"},
      {bad + "/dtype.so", "bad dtype mask 0x30"},
      {bad + "/arity.so", "reads 2 input tensor(s), but softmax passes 1"},
      // Misbehaving while loaded (a static constructor): the probe child takes the blow.
      {bad + "/init_crash.so", "crashes while loading: signal 11"},
      {bad + "/init_exit.so", "calls exit(3) while loading"},
      {bad + "/init_stdout.so", "writes to stdout while loading (\"mylib 1.0 loaded\")"},
      {bad + "/init_hang.so", "hangs while loading (not loaded within 10 s)"},
  };
  for (const auto& [lib, what] : cases) {
    const auto o = run_stabfuzz("--list --plugin " + lib);
    EXPECT_EQ(o.code, 2) << lib;
    EXPECT_EQ(testing::count_lines(o.err), 1) << o.err;
    EXPECT_EQ(o.err.rfind("stabfuzz: error: plugin " + lib, 0), 0u) << o.err;
    EXPECT_NE(o.err.find(what), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "") << lib;  // nothing of the plugin's reached stdout
  }
  // The same plugin twice: its targets would be registered twice.
  const auto twice = run_stabfuzz("--list " + plugin() + " " + plugin());
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("already registered"), std::string::npos) << twice.err;
}

}  // namespace
}  // namespace stabfuzz
