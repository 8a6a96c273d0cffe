// `stabfuzz --list` (harness/cli/list.cc): the selectors, kinds, libraries and families in 100
// columns, and the same as JSON.
#include "harness/cli/list.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "stabfuzz/version.h"
#include "tests/support/cli.h"
#include "tests/support/toy_family.h"

namespace stabfuzz {
namespace {

using testing::listed;
using testing::run_stabfuzz;

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A toy family with one long-described target and an unavailable one.
Registry toy_registry() {
  Registry r;
  Family f = testing::toy_family("toy");
  f.summary = "y = x, the identity";
  std::string longer;
  for (int i = 0; i < 40; ++i) longer += "words ";
  f.targets[0].description = longer;
  r.add(std::move(f));
  r.add_unavailable({"toy/gpu/kernel", "no GPU on this machine"});
  return r;
}

std::string listing(const Registry& r) {
  std::ostringstream os;
  cli::list_targets(r, os);
  return os.str();
}

TEST(Cli, ListShowsFamiliesAndImplementations) {
  const auto r = run_stabfuzz("--list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("softmax/cpu/stable"), std::string::npos);
  EXPECT_NE(r.out.find("softmax/injected/no_max_subtract"), std::string::npos);
  EXPECT_NE(r.out.find("near_overflow"), std::string::npos);
}

// --list groups by selector: kinds and libraries with the families each covers, in 100 columns.
TEST(Cli, ListGroupsBySelectorsIn100Columns) {
  const auto r = run_stabfuzz("--list");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* section : {"Selectors (", "\nKinds:\n", "\nLibraries (", "\nFamilies ("})
    EXPECT_NE(r.out.find(section), std::string::npos) << section;
  for (const char* line : {"\n  reference  ", "\n  injected   ", "\n  library    ", "\n  onednn  ",
                           "\n  torch   ", "\n  blas    ", "\n  plugin  "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line;
  EXPECT_NE(r.out.find("none loaded: give --plugin LIB.so"), std::string::npos);
  if (listed("softmax/onednn/softmax")) {
    const std::string onednn = r.out.substr(r.out.find("\n  onednn  "));
    const std::string covers = onednn.substr(0, onednn.find("\n  blas "));
    EXPECT_NE(covers.find("implementations in"), std::string::npos) << covers;
    EXPECT_NE(covers.find("layer_norm"), std::string::npos) << covers;
  }
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    size_t cols = 0;
    for (char c : line) cols += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    EXPECT_LE(cols, 100u) << line;
  }
}

TEST(List, FamilyImplementationAndUnavailableLines) {
  const std::string out = listing(toy_registry());
  EXPECT_TRUE(has(out, "\ntoy — y = x, the identity\n")) << out;
  EXPECT_TRUE(has(out, "\n  regimes: any\n")) << out;
  EXPECT_TRUE(has(out, "\n  toy/cpu/ref  reference f64              oracle\n")) << out;
  EXPECT_TRUE(has(out, "\nUnavailable here:\n  toy/gpu/kernel  no GPU on this machine\n")) << out;
  EXPECT_TRUE(has(out, "\nbuild: ")) << out;
}

TEST(List, LongDescriptionsWrapWithin100Columns) {
  const std::string out = listing(toy_registry());
  std::istringstream in(out);
  int description_lines = 0;
  for (std::string line; std::getline(in, line);) {
    EXPECT_LE(columns(line), cli::kListColumns) << line;
    description_lines += line.rfind("      words", 0) == 0;
  }
  EXPECT_GE(description_lines, 3) << out;  // 240 columns of words under the implementation
}

TEST(ListJson, FamiliesTargetsUnavailableAndBuild) {
  Registry r = toy_registry();
  const json::Value j = cli::list_json(r);
  const auto& fams = j.at("families").as_array();
  ASSERT_EQ(fams.size(), 1u);
  EXPECT_EQ(fams[0].at("name").as_string(), "toy");
  EXPECT_EQ(fams[0].at("regimes").as_array()[0].at("name").as_string(), "any");
  const json::Value& t = fams[0].at("targets").as_array().at(0);
  EXPECT_EQ(t.at("id").as_string(), "toy/cpu/ref");
  EXPECT_EQ(t.at("kind").as_string(), "reference");
  EXPECT_EQ(t.at("dtypes").as_array().at(0).as_string(), "f64");
  EXPECT_FALSE(t.at("cestac").as_bool());
  EXPECT_EQ(t.get("plants"), nullptr);
  EXPECT_EQ(t.get("isolated"), nullptr);
  const auto& un = j.at("unavailable").as_array();
  ASSERT_EQ(un.size(), 1u);
  EXPECT_EQ(un[0].at("id").as_string(), "toy/gpu/kernel");
  EXPECT_EQ(un[0].at("reason").as_string(), "no GPU on this machine");
  EXPECT_EQ(j.at("build").as_string(), build_configuration());
}

TEST(ListJson, InjectedTargetsCarryTheirPlantedBug) {
  const json::Value j = cli::list_json(default_registry());
  bool found = false;
  for (const auto& f : j.at("families").as_array())
    for (const auto& t : f.at("targets").as_array())
      if (t.at("id").as_string() == "softmax/injected/no_max_subtract") {
        found = true;
        EXPECT_EQ(t.at("kind").as_string(), "injected");
        EXPECT_FALSE(t.at("plants").as_string().empty());
        EXPECT_FALSE(t.at("fix").as_string().empty());
        EXPECT_TRUE(t.at("cestac").as_bool());
      }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace stabfuzz
