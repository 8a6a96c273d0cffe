// The default run (`stabfuzz --target SELECTOR ...`), --list and --version; replay lines.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "harness/campaign/runner.h"
#include "harness/cli/command.h"
#include "harness/cli/common.h"
#include "harness/cli/flags.h"
#include "harness/cli/list.h"
#include "harness/plugin/loader.h"
#include "reports/findings.h"
#include "reports/json.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"
#include "stabfuzz/version.h"

namespace stabfuzz::cli {
namespace {

// The plugins as a replay line names them: absolute paths, so the line works from any directory.
std::vector<std::pair<std::string, std::string>> plugin_flags(
    const std::vector<std::string>& plugins, int64_t timeout_ms, int64_t default_timeout_ms) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (const auto& p : plugins) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(p, ec);
    flags.emplace_back("plugin", ec ? p : abs.lexically_normal().string());
  }
  if (timeout_ms != default_timeout_ms)
    flags.emplace_back("timeout-ms", std::to_string(timeout_ms));
  return flags;
}

class RunCommand final : public Command {
 public:
  const char* name() const override { return "run"; }
  const char* summary() const override {
    return "the default, no command word: test the implementations --target selects";
  }
  const char* usage() const override {
    return "stabfuzz --target SELECTOR[,...] [--impl ID] [--dtype D] [--runs N | --budget-s S]\n"
           "                  [--seed S] [--out DIR]\n"
           "stabfuzz --target FAMILY --impl ID --dtype D --seed S --case K   (a finding's replay)\n"
           "stabfuzz --list [--json [PATH]]\n"
           "stabfuzz --plugin LIB.so --target plugin ...   (your targets, README \"Plugins\")\n"
           "SELECTOR: all, a family (softmax), a library (onednn, onednn3, blas, mkl, torch,\n"
           "          cublas, plugin), a kind (reference, injected, library), FAMILY/LIBRARY\n"
           "          (softmax/torch), FAMILY/KIND (softmax/reference) or an implementation id\n"
           "          (softmax/cpu/stable)";
  }
  // In this order: replay lines (command_line) name their flags in it.
  po::options_description options() override {
    po::options_description d("Options");
    flag::plugin(d, &plugins_);
    flag::target(d, &target_,
                 "what to test: selectors, comma-separated: all, a family (softmax), a library "
                 "(onednn, torch, blas, plugin, ...), a kind (reference, injected, library), "
                 "FAMILY/LIBRARY (softmax/torch); see --list",
                 "SELECTOR");
    flag::impl(d, &impl_);
    flag::dtype(d, &dtype_);
    flag::runs(d, &runs_, 300, "inputs per implementation and dtype");
    flag::value<double>(d, "budget-s", &budget_s_, 0.0, "S",
                        "time budget in seconds for the whole run, split across implementations "
                        "and dtypes; without --runs, run inputs until it is spent (0: none)");
    flag::seed(d, &seed_);
    flag::out(d, &out_,
              "output directory for summary.json and findings.jsonl (default: "
              "runs/<target>-<date>-s<seed>-p<pid>)");
    flag::value<int64_t>(d, "case", &case_, -1, "K",
                         "run only input K of the run (what a finding's replay command does)");
    flag::max_findings(d, &max_findings_);
    flag::cancel_digits(d, &cancel_digits_);
    flag::shrink_evals(d, &shrink_evals_);
    flag::json(d, &json_);
    flag::toggle(d, "list", &list_,
                 "list the selectors: kinds, libraries, families and their implementations");
    flag::quiet(d, &quiet_);
    flag::toggle(d, "version", &version_, "print the version and build configuration");
    flag::timeout_ms(d, &timeout_ms_);
    flag::no_reports(d, &no_reports_);
    flag::fail_on(d, &fail_on_);
    flag::toggle(d, "no-blackbox", &no_blackbox_,
                 "library targets: skip the extra calls under the four rounding modes, "
                 "repeated and with 1 vs all threads (docs/blackbox.md)");
    return d;
  }
  int run(const Invocation& inv) override;

 private:
  campaign::RunOptions run_options(const Invocation& inv);

  std::vector<std::string> plugins_;
  std::string target_, impl_, dtype_, out_, json_, fail_on_;
  int64_t runs_ = 0, case_ = 0, max_findings_ = 0, shrink_evals_ = 0, timeout_ms_ = 0;
  double budget_s_ = 0;
  uint64_t seed_ = 0;
  int cancel_digits_ = 0;
  bool list_ = false, quiet_ = false, version_ = false, no_reports_ = false;
  bool no_blackbox_ = false;
};

campaign::RunOptions RunCommand::run_options(const Invocation& inv) {
  campaign::RunOptions ro;
  ro.family = target_;
  ro.impl = impl_;
  if (auto d = flag::dtype_of(dtype_)) ro.dtypes = {*d};
  if (inv.given("runs") && runs_ <= 0) throw InputError("--runs must be positive");
  if (budget_s_ < 0) throw InputError("--budget-s must not be negative");
  flag::check_max_findings(max_findings_);
  ro.runs = (budget_s_ > 0 && !inv.given("runs")) ? 0 : runs_;
  ro.budget_s = budget_s_;
  ro.seed = flag::pick_seed(seed_);
  if (inv.given("case") && case_ < 0) throw InputError("--case must not be negative");
  ro.only_case = case_;
  ro.max_findings = max_findings_;
  ro.shrink_evals = shrink_evals_;
  flag::check_cancel_digits(cancel_digits_);
  ro.cestac.cancel_digits = cancel_digits_;
  ro.out_dir = out_.empty() ? default_out_dir(target_, ro.seed) : out_;
  ro.timeout_ms = timeout_ms_;
  ro.write_reports = !no_reports_;
  ro.fail_on = KindSet::parse(fail_on_);
  ro.blackbox = !no_blackbox_;
  const po::options_description d = options();
  ro.replay_command =
      [cancel = cancel_digits_, default_cancel = flag::default_of<int>(d, "cancel-digits"),
       fail_on = ro.fail_on.str(), default_fail_on = KindSet::defaults().str(),
       extra = plugin_flags(plugins_, timeout_ms_, flag::default_of<int64_t>(d, "timeout-ms"))](
          const campaign::CaseKey& k) {
        std::vector<std::pair<std::string, std::string>> flags = extra;
        flags.insert(flags.end(), {{"target", k.family},
                                   {"impl", k.impl},
                                   {"dtype", std::string(dtype_name(k.dtype))},
                                   {"seed", std::to_string(k.seed)},
                                   {"case", std::to_string(k.index)}});
        if (cancel != default_cancel) flags.emplace_back("cancel-digits", std::to_string(cancel));
        if (fail_on != default_fail_on) flags.emplace_back("fail-on", fail_on);
        return command_line(flags);
      };
  ro.progress_tty = !quiet_ && ::isatty(STDERR_FILENO);
  return ro;
}

int RunCommand::run(const Invocation& inv) {
  if (version_) {
    std::cout << "stabfuzz " << kVersion << " (" << build_configuration() << ")\n";
    return 0;
  }
  if (!inv.args.empty())
    throw InputError("unknown command '" + inv.args[0] + "' (stabfuzz help lists the commands)");
  for (const auto& p : plugins_) plugin::load(mutable_default_registry(), p);
  if (list_) {
    if (!json_.empty())
      emit_json(json_, list_json(default_registry()));
    else
      list_targets(default_registry(), std::cout);
    return 0;
  }
  if (target_.empty())
    throw InputError("no --target given (a family, a library, a kind...; stabfuzz --list)");
  const campaign::RunOptions ro = run_options(inv);
  std::ostream& progress = progress_stream(quiet_);
  const campaign::RunResult res = campaign::run_family(default_registry(), ro, progress);
  print_table(res, std::cout);
  std::cout << "findings: " << res.findings_path << "\nsummary:  " << res.summary_path << "\n";
  for (const auto& p : res.report_paths) std::cout << "report:   " << p << "\n";
  if (!json_.empty()) emit_json(json_, json::parse(reports::read_text(res.summary_path)));
  return res.exit_code;
}

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

std::string command_line(const std::vector<std::pair<std::string, std::string>>& flags) {
  std::string out = "stabfuzz";
  RunCommand run;
  const po::options_description d = run.options();
  for (const auto& o : d.options())
    for (const auto& [k, v] : flags)
      if (k == o->long_name()) out += " --" + k + " " + v;
  return out;
}

}  // namespace stabfuzz::cli
