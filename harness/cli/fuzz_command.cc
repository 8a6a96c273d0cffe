// `stabfuzz fuzz` and `stabfuzz fuzz-compare`: their flags, read into the fuzz engine's options.
#include <unistd.h>

#include <algorithm>

#include "harness/cli/command.h"
#include "harness/cli/common.h"
#include "harness/cli/flags.h"
#include "harness/core/duration.h"
#include "harness/fuzz/fuzz_cli.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::cli {
namespace {

class FuzzCommand final : public Command {
 public:
  const char* name() const override { return "fuzz"; }
  const char* summary() const override {
    return "libFuzzer over a family, guided by error and instability";
  }
  const char* usage() const override {
    return "stabfuzz fuzz --target FAMILY[/LIBRARY] [--impl ID] [--dtype D] [--time DURATION] "
           "[--runs N]\n"
           "              [--seed S] [--corpus DIR] [--feedback error|coverage] [--keep-going] "
           "[--out DIR]\n"
           "              [-- LIBFUZZER_FLAGS]";
  }
  po::options_description options() override;
  int run(const Invocation& inv) override;
  fuzz::FuzzOptions config(const Invocation& inv);

 private:
  std::vector<std::string> plugins_;
  std::string target_, impl_, dtype_, time_, corpus_, feedback_, generator_, out_, fail_on_;
  int64_t runs_ = 0, max_findings_ = 0, shrink_evals_ = 0, timeout_ms_ = 0;
  uint64_t seed_ = 0;
  int cancel_digits_ = 0;
  bool keep_going_ = false, quiet_ = false, no_reports_ = false;
};

po::options_description FuzzCommand::options() {
  po::options_description d("Options");
  flag::target(d, &target_,
               "one family to fuzz, e.g. softmax, or one library's implementations of it, e.g. "
               "softmax/torch (required; see --list)");
  flag::impl(d, &impl_);
  flag::dtype(d, &dtype_);
  flag::time(d, &time_, "0", "stop after this long: 90 or 90s, 5m, 2h, 1h30m (0: no time limit)");
  flag::runs(d, &runs_,
             "stop after this many executions (default: no limit; give --time or --runs)");
  flag::seed(d, &seed_);
  flag::value(d, "corpus", &corpus_, "DIR", "libFuzzer's corpus directory (read and grown)");
  flag::value(d, "feedback", &feedback_, "error", "error|coverage",
              "libFuzzer keeps inputs that reach new error, digits-lost and instability buckets "
              "(error), or code coverage only (coverage)");
  flag::generator(d, &generator_,
                  "values from the families' value regimes before libFuzzer's edits, or the naive "
                  "uniform baseline (values uniform in [-1, 1])");
  flag::toggle(d, "keep-going", &keep_going_,
               "go on after the first finding (up to --max-findings per implementation and dtype)");
  flag::max_findings(d, &max_findings_);
  flag::cancel_digits(d, &cancel_digits_);
  flag::shrink_evals(d, &shrink_evals_);
  flag::out(d, &out_, "output directory (default: runs/fuzz-<family>-<date>-s<seed>-p<pid>)");
  flag::quiet(d, &quiet_);
  flag::no_reports(d, &no_reports_);
  flag::plugin(d, &plugins_,
               "accepted for campaign units; fuzz runs built-in targets only (plugins' targets are "
               "isolated) and loads none");
  flag::timeout_ms(d, &timeout_ms_, "accepted for campaign units; fuzz runs no isolated targets");
  flag::fail_on(d, &fail_on_);
  return d;
}

fuzz::FuzzOptions FuzzCommand::config(const Invocation& inv) {
  fuzz::FuzzOptions f;
  if (target_.empty())
    throw InputError("fuzz needs --target FAMILY or FAMILY/LIBRARY (stabfuzz --list shows them)");
  f.family = target_;
  f.impl = impl_;
  if (auto d = flag::dtype_of(dtype_)) f.dtypes = {*d};
  f.time_s = parse_duration(time_, "--time");
  if (inv.given("runs") && runs_ <= 0) throw InputError("--runs must be positive");
  f.runs = inv.given("runs") ? runs_ : 0;
  f.seed = flag::pick_seed(seed_);
  f.corpus_dir = corpus_;
  if (feedback_ == "error")
    f.feedback = fuzz::Feedback::error;
  else if (feedback_ == "coverage")
    f.feedback = fuzz::Feedback::coverage;
  else
    throw InputError("unknown --feedback '" + feedback_ + "' (error or coverage)");
  if (generator_ == "uniform")
    f.base = fuzz::Base::uniform;
  else if (generator_ != "regimes")
    throw InputError("unknown --generator '" + generator_ + "' (regimes or uniform)");
  f.keep_going = keep_going_;
  flag::check_max_findings(max_findings_);
  f.max_findings = max_findings_;
  f.shrink_evals = shrink_evals_;
  flag::check_cancel_digits(cancel_digits_);
  f.cestac.cancel_digits = cancel_digits_;
  f.fail_on = KindSet::parse(fail_on_);
  f.quiet = quiet_;
  f.write_reports = !no_reports_;
  f.progress_tty = !quiet_ && ::isatty(STDERR_FILENO);
  f.out_dir = out_.empty() ? default_out_dir("fuzz-" + f.family, f.seed) : out_;
  return f;
}

int FuzzCommand::run(const Invocation& inv) {
  const auto dash = std::find(inv.words.begin(), inv.words.end(), "--");
  const std::vector<std::string> lf(dash == inv.words.end() ? dash : dash + 1, inv.words.end());
  // Positional words must be the ones after `--`.
  if (inv.args.size() != lf.size())
    throw InputError("fuzz takes no arguments besides flags; libFuzzer flags go after `--`");
  fuzz::FuzzOptions f = config(inv);
  f.libfuzzer_args = lf;
  return fuzz::command(f, std::vector<std::string>(inv.words.begin(), dash), inv.given("seed"),
                       print_table);
}

class FuzzCompareCommand final : public Command {
 public:
  const char* name() const override { return "fuzz-compare"; }
  const char* summary() const override {
    return "inputs to the first detection of planted bugs, per engine";
  }
  const char* usage() const override {
    return "stabfuzz fuzz-compare [MUTANT...] [--runs N] [--time DURATION] [--seed S] [--out DIR] "
           "[--json PATH]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::runs(d, &runs_, 2000, "input budget per engine, mutant and seed");
    flag::time(d, &time_, "30s",
               "time cap per engine, mutant and seed: 90 or 90s, 5m, 2h (0: this default)");
    flag::seed(d, &seed_, 1, "the first of the seeds (0: 1)");
    flag::out(d, &out_, "output directory (default: runs/fuzz-compare-s<seed>)");
    flag::json(d, &json_);
    return d;
  }
  int run(const Invocation& inv) override {
    fuzz::CompareOptions c;
    c.mutants = inv.args;
    if (runs_ <= 0) throw InputError("--runs must be positive");
    c.budget_inputs = runs_;
    const double t = parse_duration(time_, "--time");
    c.time_cap_s =
        t > 0 ? t : parse_duration(flag::default_of<std::string>(options(), "time"), "--time");
    c.seed = seed_ != 0 ? seed_ : 1;
    const std::string out = out_.empty() ? "runs/fuzz-compare-s" + std::to_string(c.seed) : out_;
    return fuzz::compare_command(c, out, json_);
  }

 private:
  std::string time_, out_, json_;
  int64_t runs_ = 0;
  uint64_t seed_ = 0;
};

}  // namespace

std::unique_ptr<Command> make_fuzz_command() { return std::make_unique<FuzzCommand>(); }
std::unique_ptr<Command> make_fuzz_compare_command() {
  return std::make_unique<FuzzCompareCommand>();
}

std::optional<int> libfuzzer_child(int argc, char** argv) {
  const auto words = fuzz::libfuzzer_child_words(argc, argv);
  if (!words) return std::nullopt;
  FuzzCommand c;
  const Invocation inv = parse(c, *words, 1);
  return fuzz::run_child(c.config(inv), argc, argv, print_table);
}

}  // namespace stabfuzz::cli
