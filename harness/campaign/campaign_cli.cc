// `stabfuzz campaign` and `stabfuzz merge`: flags checked and handed to the campaign.
#include "harness/campaign/campaign_cli.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "harness/campaign/campaign.h"
#include "harness/campaign/merge.h"
#include "harness/core/duration.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

int campaign_command(const cli::Options& o) {
  if (o.command.size() > 1)
    throw InputError("campaign takes no arguments besides flags (see --help)");
  CampaignOptions c;
  c.targets = o.targets;
  c.resume = o.resume;
  if (o.resume && o.out.empty())
    throw InputError("--resume needs --out DIR, the campaign to continue");
  if (o.time_s < 0) throw InputError("--time must not be negative");
  if (o.runs_given && o.runs <= 0) throw InputError("--runs must be positive");
  c.runs = o.runs_given ? o.runs : 0;
  c.time_s = o.time_s;
  if (c.time_s <= 0 && c.runs <= 0) c.time_s = 600;  // the default budget: 10 minutes
  if (o.jobs < 0) throw InputError("--jobs must not be negative");
  c.jobs = o.jobs;
  if (c.jobs == 0 && !o.resume)
    c.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (c.jobs > 512)
    throw InputError("--jobs " + std::to_string(c.jobs) +
                     " is more workers than make sense (at most 512)");
  c.shard = parse_shard(o.shard);
  c.seed = o.seed_given && o.seed != 0
               ? o.seed
               : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() %
                                       1000000007ULL) +
                     1;
  c.baseline = o.baseline;
  if (!c.baseline.empty() && !std::filesystem::exists(c.baseline + "/summary.json"))
    throw InputError("--baseline " + c.baseline +
                     " holds no summary.json (not a finished campaign or run)");
  if (o.out.empty()) {
    c.out_dir = "runs/campaign-" + local_timestamp() + "-s" + std::to_string(c.seed);
  } else {
    c.out_dir = o.out;
  }
  std::error_code ec;
  c.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw InputError("cannot find the stabfuzz binary (/proc/self/exe)");
  // What every unit must also be told: plugins (absolute, units may run elsewhere), detector
  // settings.
  const cli::Options defaults;
  for (const auto& p : o.plugin) {
    const auto abs = std::filesystem::absolute(p, ec);
    c.unit_flags.insert(c.unit_flags.end(), {"--plugin", ec ? p : abs.lexically_normal().string()});
  }
  if (o.timeout_ms != defaults.timeout_ms)
    c.unit_flags.insert(c.unit_flags.end(), {"--timeout-ms", std::to_string(o.timeout_ms)});
  if (o.cancel_digits < 1 || o.cancel_digits > 15)
    throw InputError("--cancel-digits must be in 1..15");
  if (o.cancel_digits != defaults.cancel_digits)
    c.unit_flags.insert(c.unit_flags.end(), {"--cancel-digits", std::to_string(o.cancel_digits)});
  if (o.max_findings < 0) throw InputError("--max-findings must not be negative");
  if (o.max_findings != defaults.max_findings)
    c.unit_flags.insert(c.unit_flags.end(), {"--max-findings", std::to_string(o.max_findings)});
  if (o.shrink_evals != defaults.shrink_evals)
    c.unit_flags.insert(c.unit_flags.end(), {"--shrink-evals", std::to_string(o.shrink_evals)});
  c.write_reports = !o.no_reports;
  c.progress_tty = !o.quiet && ::isatty(STDERR_FILENO);
  static std::ostringstream sink;
  std::ostream& progress = o.quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  return run_campaign(default_registry(), c, std::cout, progress);
}

int merge_command(const cli::Options& o) {
  MergeOptions m;
  m.dirs.assign(o.command.begin() + 1, o.command.end());
  m.out_dir = o.out;
  m.baseline = o.baseline;
  m.write_reports = !o.no_reports;
  if (!m.baseline.empty() && !std::filesystem::exists(m.baseline + "/summary.json"))
    throw InputError("--baseline " + m.baseline +
                     " holds no summary.json (not a finished campaign or run)");
  return merge_runs(m, std::cout, std::cerr);
}

}  // namespace stabfuzz::campaign
