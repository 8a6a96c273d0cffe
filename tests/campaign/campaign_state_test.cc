// The campaign's checkpoint (harness/campaign/campaign_state.cc): campaign.json round-trips, bad
// files are one error naming the file, a torn findings line is cut, and shell words are quoted.
#include "harness/campaign/campaign_state.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::campaign {
namespace {

CampaignState sample_state() {
  CampaignState s;
  s.seed = 42;
  s.targets = "softmax/cpu/stable,var/injected/naive_one_pass";
  s.shard = "2/3";
  s.time_s = 600;
  s.jobs = 2;
  s.unit_flags = {"--dtype", "f32"};
  s.impls = {"softmax/cpu/stable", "var/injected/naive_one_pass"};
  s.unavailable = {"softmax/gpu/x: no GPU"};
  RoundRecord r;
  r.number = 2;
  r.engine = round_engine(2);
  UnitRecord u;
  u.item = 1;
  u.engine = r.engine;
  u.round = 2;
  u.budget_s = 12.5;
  u.seed = 77;
  u.dir = "units/r02-0001";
  u.command = "stabfuzz run --target 'a b'";
  u.status = "error";
  u.exit_code = 2;
  u.problem = "stabfuzz: error: bad";
  u.findings = 3;
  u.new_findings = 1;
  u.executions = 1000;
  u.corpus_added = 4;
  u.corpus_merged = true;
  u.seconds = 13.25;
  r.units = {u};
  s.rounds = {r};
  s.elapsed_s = 99.5;
  s.finished = true;
  return s;
}

TEST(CampaignState, SavedStateLoadsBackTheSame) {
  const std::string dir = testing::temp_dir("");
  const CampaignState s = sample_state();
  save_state(s, dir);
  const CampaignState r = load_state(dir);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_EQ(r.targets, s.targets);
  EXPECT_EQ(r.shard, "2/3");
  EXPECT_EQ(r.time_s, 600);
  EXPECT_EQ(r.jobs, 2);
  EXPECT_EQ(r.unit_flags, s.unit_flags);
  EXPECT_EQ(r.impls, s.impls);
  EXPECT_EQ(r.unavailable, s.unavailable);
  EXPECT_EQ(r.elapsed_s, 99.5);
  EXPECT_TRUE(r.finished);
  ASSERT_EQ(r.rounds.size(), 1u);
  EXPECT_EQ(r.rounds[0].number, 2);
  EXPECT_EQ(r.rounds[0].engine, s.rounds[0].engine);
  ASSERT_EQ(r.rounds[0].units.size(), 1u);
  const UnitRecord& u = r.rounds[0].units[0];
  const UnitRecord& w = s.rounds[0].units[0];
  EXPECT_EQ(u.item, w.item);
  EXPECT_EQ(u.budget_s, w.budget_s);
  EXPECT_EQ(u.seed, w.seed);
  EXPECT_EQ(u.dir, w.dir);
  EXPECT_EQ(u.command, w.command);
  EXPECT_EQ(u.status, w.status);
  EXPECT_EQ(u.exit_code, w.exit_code);
  EXPECT_EQ(u.problem, w.problem);
  EXPECT_EQ(u.findings, w.findings);
  EXPECT_EQ(u.new_findings, w.new_findings);
  EXPECT_EQ(u.executions, w.executions);
  EXPECT_EQ(u.corpus_added, w.corpus_added);
  EXPECT_EQ(u.corpus_merged, w.corpus_merged);
  EXPECT_EQ(u.seconds, w.seconds);
}

TEST(CampaignState, MissingOrMalformedStateIsOneErrorNamingTheFile) {
  const std::string dir = testing::temp_dir("");
  EXPECT_THROW(load_state(dir + "/none"), InputError);
  for (const char* bad : {"", "{", "[]", "{\"version\": \"one\"}"}) {
    try {
      parse_state(bad, "x/campaign.json");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x/campaign.json", 0), 0u) << e.what();
    }
  }
}

TEST(CampaignState, TornLastLineIsCut) {
  const std::string path = testing::temp_dir("") + "/findings.jsonl";
  std::ofstream(path) << "{\"a\":1}\n{\"b\":2}\n{\"c\":";
  cut_torn_tail(path);
  EXPECT_EQ(testing::slurp(path), "{\"a\":1}\n{\"b\":2}\n");
  cut_torn_tail(path);  // whole lines: nothing to cut
  EXPECT_EQ(testing::slurp(path), "{\"a\":1}\n{\"b\":2}\n");
  std::ofstream(path) << "{\"half";
  cut_torn_tail(path);
  EXPECT_EQ(testing::slurp(path), "");
}

TEST(CampaignState, ShellWordsAreBareWhenSafeElseQuoted) {
  EXPECT_EQ(shell_word("softmax/cpu/stable"), "softmax/cpu/stable");
  EXPECT_EQ(shell_word("--time=5m"), "--time=5m");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
}

}  // namespace
}  // namespace stabfuzz::campaign
