// `stabfuzz fuzz-compare` (harness/fuzz/compare.cc): every engine's trials through the binary; the
// medians over seeds, the Markdown table and the JSON, in process.
#include "harness/fuzz/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"
#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::slurp;
using testing::temp_dir;
namespace fs = std::filesystem;

#ifdef STABFUZZ_HAVE_LIBFUZZER

TEST(FuzzCli, CompareTablesEveryEngine) {
  const std::string out = temp_dir("cmp");
  const auto r = run_stabfuzz(
      "fuzz-compare softmax/injected/no_max_subtract --runs 6 --time 2 --seed 1 --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| softmax/injected/no_max_subtract |"), std::string::npos) << r.out;
  const json::Value j = json::parse(slurp(out + "/compare.json"));
  const json::Value& m = j.at("mutants").as_array().at(0);
  for (const char* e : {"property", "fuzz-error", "fuzz-coverage", "uniform", "fuzz-error-uniform",
                        "fuzz-coverage-uniform"}) {
    const auto& trials = m.at("engines").at(e).at("trials").as_array();
    ASSERT_EQ(trials.size(), 5u) << e;
    for (const auto& t : trials) EXPECT_LE(t.at("inputs").as_number(), 6) << e;
  }
  // The regimes reach the overflow within 5 inputs; 6 uniform inputs in [-1, 1] never do.
  EXPECT_FALSE(m.at("engines").at("property").at("median_inputs").is_null());
  EXPECT_TRUE(m.at("engines").at("uniform").at("median_inputs").is_null());
  EXPECT_TRUE(m.at("hard").as_bool());
  fs::remove_all(fs::path(out).parent_path());
}

#endif  // STABFUZZ_HAVE_LIBFUZZER

// A trial per seed: detected after `inputs` inputs (0: a miss).
std::vector<fuzz::Trial> trials(const std::vector<int64_t>& inputs) {
  std::vector<fuzz::Trial> out;
  for (int64_t n : inputs) {
    fuzz::Trial t;
    t.detected = n > 0;
    t.inputs = n > 0 ? n : 1000;
    t.seconds = n > 0 ? 0.25 * static_cast<double>(n) : 30;
    out.push_back(t);
  }
  return out;
}

// A miss counts as more than the budget: the median of 3 seeds is a miss when 2 missed.
TEST(FuzzCompare, MediansCountAMissAsInfinite) {
  EXPECT_EQ(fuzz::median_inputs(trials({7, 3, 100})), 7);
  EXPECT_EQ(fuzz::median_inputs(trials({4, 0, 2})), 4);
  EXPECT_TRUE(std::isinf(fuzz::median_inputs(trials({0, 5, 0}))));
  EXPECT_EQ(fuzz::median_inputs(trials({2, 6, 0, 10})), 8);  // even count: the middle two's mean
  EXPECT_TRUE(std::isinf(fuzz::median_inputs({})));
  EXPECT_EQ(fuzz::median_seconds(trials({7, 3, 100})), 1.75);
  EXPECT_TRUE(std::isinf(fuzz::median_seconds(trials({0, 0, 1}))));
}

std::vector<fuzz::MutantRow> two_rows() {
  fuzz::MutantRow hard;  // uniform misses; error-guided fuzzing beats coverage-only
  hard.id = "softmax/injected/no_max_subtract";
  hard.trials = {trials({2, 3, 4}), trials({10, 12, 0}), trials({50, 0, 0}),
                 trials({0, 0, 0}), trials({8, 8, 8}),   trials({6, 6, 6})};
  fuzz::MutantRow easy;
  easy.id = "var/injected/naive_one_pass";
  easy.trials = {trials({1, 1, 1}), trials({1, 1, 1}), trials({1, 1, 1}),
                 trials({2, 2, 2}), trials({1, 1, 1}), trials({1, 1, 1})};
  return {hard, easy};
}

fuzz::CompareOptions options() {
  fuzz::CompareOptions o;
  o.seed = 4;
  o.seeds = 3;
  o.budget_inputs = 1000;
  o.time_cap_s = 30;
  return o;
}

TEST(FuzzCompare, MarkdownMarksHardMutantsAndCountsErrorGuidedWins) {
  const std::string md = fuzz::compare_markdown(two_rows(), options());
  EXPECT_EQ(md.rfind("Inputs / seconds to first detection, median over 3 seeds (4..6), budget "
                     "1000 inputs or 30 s per run;",
                     0),
            0u)
      << md;
  EXPECT_NE(md.find("| softmax/injected/no_max_subtract | yes | 3 in / 0.75 s (3/3) | 12 in / "
                    "3.00 s (2/3) | miss (1/3) | miss (0/3) | 8 in / 2.00 s (3/3) | 6 in / 1.50 s "
                    "(3/3) |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| var/injected/naive_one_pass | no | 1 in / 0.25 s (3/3) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Hard mutants (uniform misses, median): 1; of those, error-guided fuzzing "
                    "needed fewer inputs (median) than coverage-only on 1 from the regimes, on 0 "
                    "from uniform values."),
            std::string::npos)
      << md;
}

TEST(FuzzCompare, JsonGivesEveryEngineItsTrialsAndNullForAMiss) {
  const json::Value j = fuzz::compare_json(two_rows(), options());
  EXPECT_EQ(j.at("seed").as_number(), 4);
  EXPECT_EQ(j.at("seeds").as_number(), 3);
  const auto& ms = j.at("mutants").as_array();
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].at("mutant").as_string(), "softmax/injected/no_max_subtract");
  EXPECT_TRUE(ms[0].at("hard").as_bool());
  EXPECT_FALSE(ms[1].at("hard").as_bool());
  for (const char* e : fuzz::kEngines)
    EXPECT_EQ(ms[0].at("engines").at(e).at("trials").as_array().size(), 3u) << e;
  EXPECT_EQ(ms[0].at("engines").at("property").at("median_inputs").as_number(), 3);
  EXPECT_TRUE(ms[0].at("engines").at("uniform").at("median_inputs").is_null());
  EXPECT_TRUE(ms[0].at("engines").at("fuzz-coverage").at("median_seconds").is_null());
  const auto& t = ms[0].at("engines").at("fuzz-error").at("trials").as_array();
  EXPECT_FALSE(t[2].at("detected").as_bool());
  EXPECT_EQ(t[2].at("inputs").as_number(), 1000);
  // Round trip through the text written as compare.json.
  EXPECT_EQ(json::parse(json::dump(j)).at("mutants").as_array().size(), 2u);
}

TEST(FuzzCompare, DefaultMutantsArePlantedBugsAndAnUnknownOneIsRefused) {
  const Registry& reg = default_registry();
  const auto ids = fuzz::default_compare_mutants();
  EXPECT_GE(ids.size(), 10u);
  for (const auto& id : ids) {
    const auto [f, t] = reg.find_target(id);
    ASSERT_NE(t, nullptr) << id;
    EXPECT_EQ(t->kind, TargetKind::injected) << id;
  }
  fuzz::CompareOptions o = options();
  o.mutants = {"softmax/injected/nosuch"};
  std::ostringstream progress;
  try {
    fuzz::run_compare(reg, o, progress);
    ADD_FAILURE() << "an unknown mutant ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown implementation 'softmax/injected/nosuch'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(progress.str().empty());
}

}  // namespace
}  // namespace stabfuzz
