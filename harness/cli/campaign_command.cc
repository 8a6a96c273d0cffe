// `stabfuzz campaign` and `stabfuzz merge`: their flags, read into the campaign's configuration.
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "harness/campaign/campaign_cli.h"
#include "harness/campaign/plan.h"
#include "harness/cli/command.h"
#include "harness/cli/common.h"
#include "harness/cli/flags.h"
#include "harness/core/duration.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::cli {
namespace {

class CampaignCommand final : public Command {
 public:
  const char* name() const override { return "campaign"; }
  const char* summary() const override {
    return "many implementations on a time budget, checkpointed (nightly)";
  }
  const char* usage() const override {
    return "stabfuzz campaign [--targets all|LIST] [--time DURATION | --runs N] [--jobs N] "
           "[--out DIR]\n"
           "                  [--baseline DIR] [--shard I/N] [--seed S]\n"
           "stabfuzz campaign --resume --out DIR [--jobs N]   (after a kill or Ctrl-C)";
  }
  po::options_description options() override;
  int run(const Invocation& inv) override {
    return campaign::campaign_command(config(inv), quiet_);
  }
  campaign::CampaignOptions config(const Invocation& inv);

 private:
  std::vector<std::string> unit_flags(const po::options_description& d) const;

  std::vector<std::string> plugins_;
  std::string targets_, time_, shard_, out_, baseline_, fail_on_;
  int64_t runs_ = 0, timeout_ms_ = 0, max_findings_ = 0, shrink_evals_ = 0;
  int jobs_ = 0, cancel_digits_ = 0;
  uint64_t seed_ = 0;
  bool resume_ = false, no_reports_ = false, quiet_ = false;
};

po::options_description CampaignCommand::options() {
  po::options_description d("Options");
  flag::value(d, "targets", &targets_, "all", "all|LIST",
              "what to cover: selectors, comma-separated: all, families (softmax), libraries "
              "(onednn, torch, blas, plugin, ...), kinds (reference, injected, library), "
              "FAMILY/LIBRARY (softmax/torch), implementation ids; see stabfuzz --list");
  flag::time(d, &time_, "10m",
             "stop after this long: 90 or 90s, 5m, 2h, 1h30m; with --runs and no --time, no time "
             "limit (0 without --runs: this default)");
  flag::runs(d, &runs_,
             "every unit runs this many inputs (executions), one round per engine (default: none, "
             "the time budget decides)");
  flag::value<int>(d, "jobs", &jobs_, 0, "N",
                   "worker processes (0: one per CPU; with --resume, as before)");
  flag::seed(d, &seed_);
  flag::value(d, "shard", &shard_, "1/1", "I/N",
              "take part I of N of the work list (deterministic; stabfuzz merge joins the parts)");
  flag::out(d, &out_, "the campaign's directory (default: runs/campaign-<date>-s<seed>)");
  flag::toggle(d, "resume", &resume_,
               "continue the campaign in --out where it stopped (after a kill or Ctrl-C)");
  flag::value(d, "baseline", &baseline_, "DIR",
              "an earlier campaign to diff against (new, fixed, changed findings; exit 1 on a new "
              "or worse one) and whose corpora and findings steer the budget");
  flag::plugin(d, &plugins_);
  flag::timeout_ms(d, &timeout_ms_);
  flag::max_findings(d, &max_findings_);
  flag::cancel_digits(d, &cancel_digits_);
  flag::shrink_evals(d, &shrink_evals_);
  flag::no_reports(d, &no_reports_);
  flag::quiet(d, &quiet_);
  flag::fail_on(d, &fail_on_);
  return d;
}

// What every unit must also be told: plugins (absolute, units may run elsewhere), detector
// settings other than their defaults.
std::vector<std::string> CampaignCommand::unit_flags(const po::options_description& d) const {
  std::vector<std::string> f;
  for (const auto& p : plugins_) {
    std::error_code ec;
    const auto abs = std::filesystem::absolute(p, ec);
    f.insert(f.end(), {"--plugin", ec ? p : abs.lexically_normal().string()});
  }
  if (timeout_ms_ != flag::default_of<int64_t>(d, "timeout-ms"))
    f.insert(f.end(), {"--timeout-ms", std::to_string(timeout_ms_)});
  flag::check_cancel_digits(cancel_digits_);
  if (cancel_digits_ != flag::default_of<int>(d, "cancel-digits"))
    f.insert(f.end(), {"--cancel-digits", std::to_string(cancel_digits_)});
  flag::check_max_findings(max_findings_);
  if (max_findings_ != flag::default_of<int64_t>(d, "max-findings"))
    f.insert(f.end(), {"--max-findings", std::to_string(max_findings_)});
  if (shrink_evals_ != flag::default_of<int64_t>(d, "shrink-evals"))
    f.insert(f.end(), {"--shrink-evals", std::to_string(shrink_evals_)});
  const std::string fail_on = KindSet::parse(fail_on_).str();
  if (fail_on != KindSet::defaults().str()) f.insert(f.end(), {"--fail-on", fail_on});
  return f;
}

campaign::CampaignOptions CampaignCommand::config(const Invocation& inv) {
  if (!inv.args.empty())
    throw InputError("campaign takes no arguments besides flags (see stabfuzz help campaign)");
  const po::options_description d = options();
  campaign::CampaignOptions c;
  c.targets = targets_;
  c.resume = resume_;
  if (resume_ && out_.empty())
    throw InputError("--resume needs --out DIR, the campaign to continue");
  const double time_s = parse_duration(time_, "--time");
  if (inv.given("runs") && runs_ <= 0) throw InputError("--runs must be positive");
  c.runs = inv.given("runs") ? runs_ : 0;
  c.time_s = inv.given("time") || c.runs <= 0 ? time_s : 0;
  // Neither a time limit nor --runs (--time 0 alone): the default budget.
  if (c.time_s <= 0 && c.runs <= 0)
    c.time_s = parse_duration(flag::default_of<std::string>(d, "time"), "--time");
  if (jobs_ < 0) throw InputError("--jobs must not be negative");
  c.jobs = jobs_;
  if (c.jobs == 0 && !resume_)
    c.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (c.jobs > 512)
    throw InputError("--jobs " + std::to_string(c.jobs) +
                     " is more workers than make sense (at most 512)");
  c.shard = campaign::parse_shard(shard_);
  c.seed = flag::pick_seed(seed_);
  c.baseline = baseline_;
  campaign::check_baseline(c.baseline);
  c.out_dir =
      out_.empty() ? "runs/campaign-" + local_timestamp() + "-s" + std::to_string(c.seed) : out_;
  std::error_code ec;
  c.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw InputError("cannot find the stabfuzz binary (/proc/self/exe)");
  c.unit_flags = unit_flags(d);
  c.fail_on = KindSet::parse(fail_on_);
  c.write_reports = !no_reports_;
  c.progress_tty = !quiet_ && ::isatty(STDERR_FILENO);
  return c;
}

class MergeCommand final : public Command {
 public:
  const char* name() const override { return "merge"; }
  const char* summary() const override { return "join a campaign's shards into one run"; }
  const char* usage() const override {
    return "stabfuzz merge DIR... --out OUT [--baseline DIR]   (exit 1 as a campaign's)";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::out(d, &m_.out_dir, "the merged run's directory (required)");
    flag::value(d, "baseline", &m_.baseline, "DIR",
                "an earlier campaign or run to diff against (exit 1 on a new or worse finding)");
    flag::no_reports(d, &no_reports_);
    return d;
  }
  int run(const Invocation& inv) override {
    m_.dirs = inv.args;
    m_.write_reports = !no_reports_;
    return campaign::merge_command(m_);
  }

 private:
  campaign::MergeOptions m_;
  bool no_reports_ = false;
};

}  // namespace

std::unique_ptr<Command> make_campaign_command() { return std::make_unique<CampaignCommand>(); }
std::unique_ptr<Command> make_merge_command() { return std::make_unique<MergeCommand>(); }

// For tests: the campaign configuration a command line (after `campaign`) gives.
campaign::CampaignOptions campaign_config(const std::vector<std::string>& words) {
  CampaignCommand c;
  std::vector<std::string> all{"campaign"};
  all.insert(all.end(), words.begin(), words.end());
  return c.config(parse(c, all, 1));
}

}  // namespace stabfuzz::cli
