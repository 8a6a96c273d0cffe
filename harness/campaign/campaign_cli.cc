// `stabfuzz campaign` and `stabfuzz merge`: configurations handed to the campaign and the merge.
#include "harness/campaign/campaign_cli.h"

#include <filesystem>
#include <iostream>
#include <sstream>

#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

void check_baseline(const std::string& dir, const std::string& flag) {
  if (dir.empty()) return;
  std::error_code ec;  // a name too long or a component not a directory: an error, not a throw
  if (!std::filesystem::exists(dir + "/summary.json", ec))
    throw InputError(flag + " " + dir + " holds no summary.json (" +
                     (ec ? ec.message() : "not a finished campaign or run") + ")");
}

int campaign_command(const CampaignOptions& c, bool quiet) {
  static std::ostringstream sink;
  std::ostream& progress = quiet ? static_cast<std::ostream&>(sink) : std::cerr;
  return run_campaign(default_registry(), c, std::cout, progress);
}

int merge_command(const MergeOptions& m) {
  check_baseline(m.baseline);
  return merge_runs(m, std::cout, std::cerr);
}

}  // namespace stabfuzz::campaign
