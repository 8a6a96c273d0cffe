// The shared flags (harness/cli/flags.cc): their values, defaults, range checks and the checks
// several commands share.
#include "harness/cli/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/pipeline/finding_kind.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/errors.h"

namespace stabfuzz {
namespace {

namespace flag = cli::flag;
namespace po = boost::program_options;

// Parses `words` against `d` as a command would (store, then notify).
void parse(const po::options_description& d, const std::vector<std::string>& words) {
  po::variables_map vm;
  po::store(po::command_line_parser(words).options(d).run(), vm);
  po::notify(vm);
}

TEST(Flags, DtypeOfOneDtypeOrAll) {
  EXPECT_FALSE(flag::dtype_of("all").has_value());
  EXPECT_EQ(flag::dtype_of("f32"), DType::f32);
  EXPECT_EQ(flag::dtype_of("bf16"), DType::bf16);
  try {
    flag::dtype_of("f8");
    FAIL() << "f8 parsed";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown --dtype 'f8' (f64, f32, f16, bf16 or all)");
  }
}

TEST(Flags, CancelDigitsAndMaxFindingsRanges) {
  EXPECT_NO_THROW(flag::check_cancel_digits(1));
  EXPECT_NO_THROW(flag::check_cancel_digits(15));
  EXPECT_THROW(flag::check_cancel_digits(0), InputError);
  EXPECT_THROW(flag::check_cancel_digits(16), InputError);
  EXPECT_NO_THROW(flag::check_max_findings(0));
  EXPECT_THROW(flag::check_max_findings(-1), InputError);
}

TEST(Flags, PickSeedKeepsAGivenSeedAndPicksANonzeroOne) {
  EXPECT_EQ(flag::pick_seed(5), 5u);
  const uint64_t picked = flag::pick_seed(0);
  EXPECT_GT(picked, 0u);
  EXPECT_LE(picked, 1000000007u);
}

TEST(Flags, SeedIsAtMostTwoToThe53) {
  uint64_t seed = 0;
  po::options_description d;
  flag::seed(d, &seed);
  parse(d, {"--seed", "9007199254740992"});
  EXPECT_EQ(seed, flag::kMaxSeed);
  try {
    parse(d, {"--seed", "9007199254740993"});
    FAIL() << "2^53 + 1 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--seed 9007199254740993 is out of range: a whole number from 0 to "
                 "9007199254740992 (2^53; 0 picks one)");
  }
  EXPECT_THROW(parse(d, {"--seed", "-1"}), InputError);  // wraps to 2^64 - 1
  EXPECT_EQ(flag::default_of<uint64_t>(d, "seed"), 0u);
}

// A NaN budget ran as no budget and an infinite one never ended: every floating-point flag must be
// finite. A negative shrink budget is refused (0: no shrinking).
TEST(Flags, FloatingPointValuesAreFiniteShrinkEvalsNotNegative) {
  double budget = 0, lr = 0;
  int64_t evals = 0;
  po::options_description d;
  flag::value<double>(d, "budget-s", &budget, 0.0, "S", "seconds");
  flag::value<double>(d, "lr", &lr, "X", "rate");
  flag::shrink_evals(d, &evals);
  parse(d, {"--budget-s", "2.5", "--lr", "1e-3", "--shrink-evals", "0"});
  EXPECT_EQ(budget, 2.5);
  EXPECT_EQ(lr, 1e-3);
  EXPECT_EQ(evals, 0);
  for (const char* v : {"nan", "inf", "-inf", "1e999"}) {
    try {
      parse(d, {"--budget-s", v});
      FAIL() << v << " accepted";
    } catch (const InputError& e) {
      EXPECT_STREQ(e.what(), "--budget-s must be a finite number") << v;
    } catch (const po::error&) {
      // boost rejects 1e999 itself (out of range): a one-line error too
    }
    EXPECT_THROW(parse(d, {"--lr", v}), std::exception) << v;
  }
  try {
    parse(d, {"--shrink-evals", "-1"});
    FAIL() << "-1 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--shrink-evals must not be negative");
  }
}

TEST(Flags, DefaultsAreTheDescriptions) {
  int64_t runs = 0, max_findings = 0, shrink = 0;
  int cancel = 0;
  std::string fail_on, time;
  po::options_description d;
  flag::runs(d, &runs, 300, "inputs");
  flag::max_findings(d, &max_findings);
  flag::shrink_evals(d, &shrink);
  flag::cancel_digits(d, &cancel);
  flag::fail_on(d, &fail_on);
  flag::time(d, &time, "10m", "how long");
  EXPECT_EQ(flag::default_of<int64_t>(d, "runs"), 300);
  EXPECT_EQ(flag::default_of<int64_t>(d, "max-findings"), 10);
  EXPECT_EQ(flag::default_of<int64_t>(d, "shrink-evals"), 1000);
  EXPECT_EQ(flag::default_of<int>(d, "cancel-digits"), cestac::kDefaultCancelDigits);
  EXPECT_EQ(flag::default_of<std::string>(d, "fail-on"), KindSet::defaults().str());
  EXPECT_EQ(flag::default_of<std::string>(d, "time"), "10m");
  parse(d, {"--runs", "7"});
  EXPECT_EQ(runs, 7);
  EXPECT_EQ(max_findings, 10);  // the default, stored
}

TEST(Flags, JsonAloneMeansStandardOutputTogglesAreOffUnlessGiven) {
  std::string json;
  bool quiet = true, no_reports = true;
  po::options_description d;
  flag::json(d, &json);
  flag::quiet(d, &quiet);
  flag::no_reports(d, &no_reports);
  parse(d, {"--json", "--quiet"});
  EXPECT_EQ(json, "-");
  EXPECT_TRUE(quiet);
  EXPECT_FALSE(no_reports);
  parse(d, {"--json=out.json"});
  EXPECT_EQ(json, "out.json");
  EXPECT_FALSE(quiet);
}

TEST(Flags, PluginMayRepeat) {
  std::vector<std::string> plugins;
  po::options_description d;
  flag::plugin(d, &plugins);
  parse(d, {"--plugin", "a.so", "--plugin", "b.so"});
  EXPECT_EQ(plugins, (std::vector<std::string>{"a.so", "b.so"}));
}

}  // namespace
}  // namespace stabfuzz
