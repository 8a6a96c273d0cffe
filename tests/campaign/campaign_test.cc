// Campaigns: the work list, shards, budget split, finding identity, and `stabfuzz campaign` /
// `merge` end to end — including a campaign killed with SIGKILL and resumed, which must find every
// finding once.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "harness/campaign/campaign_state.h"
#include "harness/campaign/merge.h"
#include "harness/campaign/plan.h"
#include "reports/json.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"
#include "tests/support/require.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::campaign {
namespace {

using testing::run_stabfuzz;
using testing::temp_dir;

// Two stable references and two planted bugs: small enough for a few-second campaign.
constexpr const char* kTargets =
    "var/cpu/stable,var/injected/naive_one_pass,softmax/cpu/stable,softmax/injected/"
    "no_max_subtract";

std::multiset<std::string> identities(const std::string& dir) {
  std::multiset<std::string> out;
  std::vector<std::string> problems;
  for (const auto& f : read_findings(dir + "/findings.jsonl", &problems))
    out.insert(finding_identity(f));
  EXPECT_TRUE(problems.empty()) << problems.front();
  return out;
}

TEST(CampaignRun, CoversTheListWritesEveryOutputAndRefusesToOverwrite) {
  const std::string dir = temp_dir("c");
  const auto o = run_stabfuzz(std::string("campaign --targets ") + kTargets +
                              " --runs 30 --seed 3 --jobs 2 --out " + dir);
  ASSERT_EQ(o.code, 0) << o.out << o.err;  // references clean; planted bugs are expected findings
  for (const char* f :
       {"campaign.json", "findings.jsonl", "summary.json", "report.md", "report.html", "junit.xml"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  const json::Value s = json::parse(testing::slurp(dir + "/summary.json"));
  std::set<std::string> impls;
  for (const auto& r : s.at("results").as_array()) impls.insert(r.at("impl").as_string());
  EXPECT_EQ(impls.size(), 4u);
  EXPECT_EQ(s.at("campaign").at("units").at("done").as_number(), 8);  // 4 x (property, fuzz)
  EXPECT_TRUE(s.at("campaign").at("not_covered").as_array().empty());
  const auto ids = identities(dir);
  EXPECT_GT(ids.size(), 0u);
  for (const auto& id : ids) EXPECT_EQ(ids.count(id), 1u) << id;
  EXPECT_NE(o.out.find("planted bug detected in"), std::string::npos) << o.out;
  // The campaign ends with its files, one a line: the reports last.
  std::vector<std::string> lines;
  std::stringstream out(o.out);
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 6u);
  const std::vector<std::string> last(lines.end() - 6, lines.end());
  EXPECT_EQ(last[0].rfind("findings: " + dir + "/findings.jsonl (", 0), 0u) << o.out;
  EXPECT_EQ(last[1], "summary:  " + dir + "/summary.json");
  EXPECT_EQ(last[2], "state:    " + dir + "/campaign.json");
  EXPECT_EQ(last[3], "report:   " + dir + "/report.md");
  EXPECT_EQ(last[4], "report:   " + dir + "/report.html");
  EXPECT_EQ(last[5], "report:   " + dir + "/junit.xml");
  EXPECT_EQ(o.out.back(), '\n');
  // The fuzz corpora were moved into the campaign's corpus directory.
  size_t corpus = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir + "/corpus"))
    corpus += e.is_regular_file();
  EXPECT_GT(corpus, 0u);
  const auto again = run_stabfuzz(std::string("campaign --targets var --runs 5 --out ") + dir);
  EXPECT_EQ(again.code, 2) << again.err;
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
}

bool all_done(const std::string& dir, int* done, int* total) {
  *done = *total = 0;
  try {
    const json::Value s = json::parse(testing::slurp(dir + "/campaign.json"));
    for (const auto& r : s.at("rounds").as_array())
      for (const auto& u : r.at("units").as_array()) {
        ++*total;
        *done += u.at("status").as_string() == "done";
      }
  } catch (const std::exception&) {
    return false;
  }
  return *total > 0 && *done == *total;
}

pid_t start_campaign(const std::string& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1), ::dup2(null, 2);
    ::execl("/bin/sh", "sh", "-c", (std::string("exec ") + STABFUZZ_BINARY + " " + args).c_str(),
            nullptr);
    ::_exit(127);
  }
  return pid;
}

// Processes whose command line names `needle` (the campaign's units), from /proc.
int processes_naming(const std::string& needle) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string cmd = testing::slurp(e.path().string() + "/cmdline");
    std::string flat;
    for (char c : cmd) flat += c ? c : ' ';
    n += flat.find(needle) != std::string::npos;
  }
  return n;
}

// After a kill: the campaign's units die with it (PR_SET_PDEATHSIG); none may write on after it.
int units_left_after_kill(const std::string& dir) {
  for (int i = 0; i < 200 && processes_naming(dir + "/units") > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return processes_naming(dir + "/units");
}

// Resumes the killed campaign to its end: every unit done, and the findings of the uninterrupted
// run as a set, each written once.
void resume_and_expect_findings(const std::string& killed,
                                const std::multiset<std::string>& expected) {
  const auto resumed = run_stabfuzz("campaign --resume --out " + killed);
  ASSERT_EQ(resumed.code, 0) << resumed.out << resumed.err;
  int done = 0, total = 0;
  EXPECT_TRUE(all_done(killed, &done, &total));
  const auto got = identities(killed);
  for (const auto& id : got) EXPECT_EQ(got.count(id), 1u) << "written twice: " << id;
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
            std::set<std::string>(expected.begin(), expected.end()));
  EXPECT_EQ(got.size(), expected.size());
}

TEST(CampaignRun, KilledWithSigkillAndResumedFindsEveryFindingOnce) {
  const std::string args =
      std::string("campaign --targets ") + kTargets + " --runs 120 --seed 5 --jobs 2 --quiet";
  const std::string whole = temp_dir("whole"), killed = temp_dir("killed");
  ASSERT_EQ(run_stabfuzz(args + " --out " + whole).code, 0);
  const auto expected = identities(whole);
  ASSERT_GT(expected.size(), 5u);

  const pid_t pid = start_campaign(args + " --out " + killed);
  int done = 0, total = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < until) {  // kill it once some units are done, not all
    all_done(killed, &done, &total);
    if (done >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(done, 2);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_FALSE(all_done(killed, &done, &total))
      << "the campaign finished before the kill; nothing was tested";
  EXPECT_EQ(units_left_after_kill(killed), 0);
  resume_and_expect_findings(killed, expected);
}

// A full disk in the middle of a campaign (a file-size limit standing in for it: writes fail the
// same way, with EFBIG): one error line and exit 2, findings.jsonl holds whole findings only, and
// once there is room again --resume ends with the uninterrupted run's findings, each once.
TEST(CampaignRun, DiskFullStopsWithOneLineAndResumesLosingNothing) {
  const std::string args =
      std::string("campaign --targets ") + kTargets + " --runs 120 --seed 5 --jobs 2 --quiet";
  const std::string whole = temp_dir("whole");
  ASSERT_EQ(run_stabfuzz(args + " --out " + whole).code, 0);
  const auto expected = identities(whole);
  const auto size = std::filesystem::file_size(whole + "/findings.jsonl");
  std::uintmax_t unit_max = 0;  // the largest findings.jsonl a unit writes
  for (const auto& e : std::filesystem::directory_iterator(whole + "/units"))
    if (std::filesystem::exists(e.path() / "findings.jsonl"))
      unit_max = std::max(unit_max, std::filesystem::file_size(e.path() / "findings.jsonl"));
  ASSERT_LT(unit_max, size);

  // Room for a third of the findings: a unit's write fails first. Room for every unit's file but
  // not the campaign's: the campaign's own write fails.
  for (const auto& [limit, file] :
       {std::pair{size / 3, std::string("/units/")}, {(unit_max + size) / 2, "/findings.jsonl"}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    const std::string full = temp_dir("full");
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    rlimit small = saved;
    small.rlim_cur = limit;
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // ignored stays ignored across exec
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const auto o = run_stabfuzz(args + " --out " + full);
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);

    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_EQ(testing::count_lines(o.err), 1) << o.err;
    EXPECT_EQ(o.err.rfind("stabfuzz: error: cannot write " + full + file, 0), 0u) << o.err;
    EXPECT_NE(o.err.find(": File too large (the findings written before are kept)"),
              std::string::npos)
        << o.err;
    const std::string kept = testing::slurp(full + "/findings.jsonl");
    if (!kept.empty()) EXPECT_EQ(kept.back(), '\n');  // whole findings only
    EXPECT_LT(identities(full).size(), expected.size());
    EXPECT_EQ(units_left_after_kill(full), 0);
    resume_and_expect_findings(full, expected);
  }
}

// Killed with SIGKILL at 20 moments drawn from a seeded generator across the whole campaign (its
// start, its units, its checkpoints, its reports), resumed after each: the final findings are those
// of the uninterrupted run, as a set, each written once. (label slow: ci/test --full, ci/nightly)
TEST(CampaignRun, KilledTwentyTimesAtRandomMomentsLosesAndRepeatsNothing) {
  const std::string args =
      std::string("campaign --targets ") + kTargets + " --runs 40 --seed 11 --jobs 2 --quiet";
  const std::string whole = temp_dir("whole20"), killed = temp_dir("killed20");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(run_stabfuzz(args + " --out " + whole).code, 0);
  const double whole_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto expected = identities(whole);
  ASSERT_GT(expected.size(), 5u);

  // The moments: uniform over a third of the uninterrupted run, so that the 20 attempts spread over
  // the whole campaign (a killed unit starts again on resume) rather than finishing it in three.
  std::mt19937 rng(20);
  std::uniform_real_distribution<double> moment(0.0, whole_ms / 3);
  int kills = 0, kills_unfinished = 0, finished_before_kill = 0, done = 0, total = 0;
  for (int i = 0; i < 20; ++i) {
    const bool first = !std::filesystem::exists(killed + "/campaign.json");
    const bool unfinished = !all_done(killed, &done, &total);
    const pid_t pid =
        start_campaign(first ? args + " --out " + killed
                             : std::string("campaign --resume --quiet --out ") + killed);
    const auto at = std::chrono::steady_clock::now() +
                    std::chrono::microseconds(static_cast<int64_t>(moment(rng) * 1000));
    int status = 0;
    pid_t w = 0;
    while ((w = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < at)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (w == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ASSERT_TRUE(WIFSIGNALED(status));
      ++kills;
      kills_unfinished += unfinished;
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "attempt " << i;
      ++finished_before_kill;  // it ended (or rewrote the finished campaign's reports) in time
    }
    ASSERT_EQ(units_left_after_kill(killed), 0) << "a unit outlived its campaign";
  }
  EXPECT_GE(kills_unfinished, 10) << kills << " kills, " << finished_before_kill << " runs ended";
  resume_and_expect_findings(killed, expected);
  all_done(killed, &done, &total);
  // The summary counts what findings.jsonl holds.
  const json::Value s = json::parse(testing::slurp(killed + "/summary.json"));
  EXPECT_EQ(s.at("campaign").at("units").at("done").as_number(), total);
  RecordProperty("kills", kills);
  RecordProperty("kills_unfinished", kills_unfinished);
  RecordProperty("finished_before_kill", finished_before_kill);
}

// Two campaigns on one output directory: the second refuses with one line naming the holder, fresh
// or --resume; the lock dies with its holder (kill -9 leaves none behind).
TEST(CampaignRun, SecondCampaignOnTheSameDirectoryIsRefused) {
  const std::string dir = temp_dir("locked");
  const std::string args =
      std::string("campaign --targets ") + kTargets + " --runs 120 --seed 4 --jobs 1 --out " + dir;
  const pid_t pid = start_campaign(args);
  for (int i = 0; i < 2000 && !std::filesystem::exists(dir + "/campaign.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(std::filesystem::exists(dir + "/campaign.json"));
  for (const std::string& second : {args, "campaign --resume --out " + dir}) {
    const auto o = run_stabfuzz(second);
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_EQ(testing::count_lines(o.err), 1) << o.err;
    EXPECT_NE(
        o.err.find(dir + " is in use by a running campaign (pid " + std::to_string(pid) + ")"),
        std::string::npos)
        << o.err;
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the first campaign ended before the test";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  const auto resumed = run_stabfuzz("campaign --resume --quiet --out " + dir);
  EXPECT_EQ(resumed.code, 0) << resumed.err;
}

TEST(CampaignRun, InterruptedBySigintSaysHowToResume) {
  const std::string dir = temp_dir("int");
  const pid_t pid = start_campaign(std::string("campaign --targets ") + kTargets +
                                   " --runs 120 --seed 2 --jobs 1 --out " + dir);
  int done = 0, total = 0;
  for (int i = 0; i < 12000 && done < 1; ++i) {
    all_done(dir, &done, &total);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto sent = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), 2.0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const CampaignState s = load_state(dir);
  EXPECT_FALSE(s.finished);
  // A valid summary of the units done so far.
  const json::Value sum = json::parse(testing::slurp(dir + "/summary.json"));
  EXPECT_GE(sum.at("campaign").at("units").at("done").as_number(), 1);
  EXPECT_EQ(run_stabfuzz("campaign --resume --quiet --out " + dir).code, 0);
  EXPECT_TRUE(load_state(dir).finished);
}

TEST(CampaignRun, ShardsMergeIntoTheWholeCampaign) {
  const std::string base = temp_dir("shards");
  const std::string args =
      std::string("campaign --targets ") + kTargets + " --runs 30 --seed 9 --jobs 2 --quiet";
  ASSERT_EQ(run_stabfuzz(args + " --out " + base + "/whole").code, 0);
  for (int i = 1; i <= 2; ++i)
    ASSERT_EQ(run_stabfuzz(args + " --shard " + std::to_string(i) + "/2 --out " + base + "/shard-" +
                           std::to_string(i))
                  .code,
              0);
  const auto m =
      run_stabfuzz("merge " + base + "/shard-1 " + base + "/shard-2 --out " + base + "/merged");
  ASSERT_EQ(m.code, 0) << m.out << m.err;
  EXPECT_TRUE(m.err.empty()) << m.err;  // both shards present, same settings
  const int check = std::system((std::string(STABFUZZ_UNION_CHECK) + " " + base + "/merged " +
                                 base + "/shard-1 " + base + "/shard-2 > /dev/null")
                                    .c_str());
  EXPECT_EQ(check, 0);
  // Units take their seeds from the campaign seed and the implementation: sharding changes nothing
  // found.
  const auto merged = identities(base + "/merged"), whole = identities(base + "/whole");
  EXPECT_EQ(merged, whole);
  // A missing shard is named.
  const auto one = run_stabfuzz("merge " + base + "/shard-1 --out " + base + "/half");
  EXPECT_NE(one.err.find("shard 2/2 is missing"), std::string::npos) << one.err;
}

TEST(CampaignRun, BaselineDiffIsTheMorningAnswer) {
  const std::string base = temp_dir("nightly");
  const std::string args = " --runs 30 --seed 4 --jobs 2 --quiet";
  // Last night covered var only; tonight also softmax's planted bug and references.
  ASSERT_EQ(run_stabfuzz("campaign --targets var/cpu/stable,var/injected/naive_one_pass" + args +
                         " --out " + base + "/n1")
                .code,
            0);
  const auto same = run_stabfuzz("campaign --targets var/cpu/stable,var/injected/naive_one_pass" +
                                 args + " --out " + base + "/n2 --baseline " + base + "/n1");
  EXPECT_EQ(same.code, 0) << same.out << same.err;  // nothing new
  EXPECT_TRUE(std::filesystem::exists(base + "/n2/diff.md"));
  EXPECT_TRUE(std::filesystem::exists(base + "/n2/diff.json"));
  EXPECT_NE(same.out.find("diff against"), std::string::npos);
  // The diff's path comes last, after the reports'.
  EXPECT_NE(
      same.out.find("report:   " + base + "/n2/junit.xml\ndiff:     " + base + "/n2/diff.md\n"),
      std::string::npos)
      << same.out;
  // A night whose reference would regress is simulated by a baseline that lacks the findings of a
  // library target with known findings: oneDNN's softmax flushes subnormal outputs (f32).
  const json::Value list = json::parse(run_stabfuzz("--list --json").out);
  bool onednn = false;
  for (const auto& f : list.at("families").as_array())
    for (const auto& t : f.at("targets").as_array())
      onednn |= t.at("id").as_string() == "softmax/onednn/softmax";
  if (!onednn) STABFUZZ_SKIP_UNLESS_REQUIRED("onednn", "oneDNN not built here");
  const auto worse = run_stabfuzz(
      "campaign --targets softmax/onednn/softmax --runs 300 --seed 1 --jobs 2 --quiet --out " +
      base + "/n3 --baseline " + base + "/n1");
  EXPECT_EQ(worse.code, 1) << worse.out << worse.err;
  EXPECT_NE(worse.out.find("NEWLY FAILING"), std::string::npos) << worse.out;
  EXPECT_NE(worse.out.find("softmax/onednn/softmax f32 (not tested last time)"), std::string::npos)
      << worse.out;
  EXPECT_NE(testing::slurp(base + "/n3/diff.md").find("new:"), std::string::npos);
  // And the other way round: last night's failing library pair, tonight tested as much and clean
  // is "no longer failing" (exit 0); here tonight does not test it at all, so it is not compared.
  const auto back = run_stabfuzz("campaign --targets var/cpu/stable" + args + " --out " + base +
                                 "/n4 --baseline " + base + "/n3");
  EXPECT_EQ(back.code, 0) << back.out << back.err;
}

}  // namespace
}  // namespace stabfuzz::campaign
