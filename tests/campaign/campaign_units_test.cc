// A campaign's units (harness/campaign/campaign_units.cc): each unit's command line as the
// checkpoint records it, its directory and log, and the baseline's corpus handed to fuzz units.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/campaign/campaign_state.h"
#include "harness/campaign/plan.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::campaign {
namespace {

using testing::run_stabfuzz;
using testing::temp_dir;

constexpr const char* kImpl = "softmax/cpu/stable";

// The command a unit of the one-implementation campaign below runs (after "stabfuzz").
std::string expected_command(const std::string& dir, const UnitRecord& u,
                             const std::string& baseline) {
  const std::string unit_dir = dir + "/" + u.dir;
  std::string c = u.engine == Engine::fuzz ? "stabfuzz fuzz" : "stabfuzz";
  c += " --target softmax --impl " + std::string(kImpl) + " --seed " + std::to_string(u.seed) +
       " --runs 3 --out " + shell_word(unit_dir) + " --quiet --no-reports";
  if (u.engine == Engine::fuzz) c += " --keep-going";
  c += " --timeout-ms 250";
  if (u.engine == Engine::fuzz) {
    c += " -- " + shell_word(unit_dir + "/corpus") + " " +
         shell_word(dir + "/corpus/" + slug(kImpl));
    if (!baseline.empty()) c += " " + shell_word(baseline + "/corpus/" + slug(kImpl));
  }
  return c;
}

// Checks every unit of the campaign in `dir`; returns how many ran each engine.
void expect_units(const std::string& dir, const std::string& baseline, int* property, int* fuzz) {
  const CampaignState s = load_state(dir);
  *property = *fuzz = 0;
  for (const auto& r : s.rounds)
    for (const auto& u : r.units) {
      SCOPED_TRACE(u.dir);
      EXPECT_EQ(u.status, "done");
      EXPECT_EQ(u.command, expected_command(dir, u, baseline));
      EXPECT_TRUE(std::filesystem::exists(dir + "/" + u.dir + "/log.txt"));
      ++(u.engine == Engine::fuzz ? *fuzz : *property);
    }
}

TEST(CampaignUnits, EachUnitRecordsTheCommandItRanAndItsLog) {
  const std::string dir = temp_dir("units");
  const auto o = run_stabfuzz(std::string("campaign --targets ") + kImpl +
                              " --runs 3 --seed 4 --timeout-ms 250 --out " + dir);
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  int property = 0, fuzz = 0;
  expect_units(dir, "", &property, &fuzz);
  EXPECT_EQ(property, 1);
  // The recorded command line replays the unit: the property unit runs again, as it ran.
  for (const auto& r : load_state(dir).rounds)
    for (const auto& u : r.units)
      if (u.engine == Engine::property) {
        const auto again = run_stabfuzz(u.command.substr(std::string("stabfuzz ").size()));
        EXPECT_EQ(again.code, 0) << u.command << "\n" << again.err;
      }

  // A campaign with a baseline gives its fuzz units the baseline's corpus to read too.
  if (fuzz == 0) {  // built without libFuzzer: no fuzz units
    std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
    return;
  }
  const std::string next = temp_dir("units-next");
  ASSERT_TRUE(std::filesystem::is_directory(dir + "/corpus/" + slug(kImpl)));
  const auto b =
      run_stabfuzz(std::string("campaign --targets ") + kImpl +
                   " --runs 3 --seed 4 --timeout-ms 250 --baseline " + dir + " --out " + next);
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  int property2 = 0, fuzz2 = 0;
  expect_units(next, dir, &property2, &fuzz2);
  EXPECT_EQ(fuzz2, fuzz);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
  std::filesystem::remove_all(std::filesystem::path(next).parent_path());
}

}  // namespace
}  // namespace stabfuzz::campaign
