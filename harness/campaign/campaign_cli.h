// The `campaign` and `merge` commands' entry points: a configuration in, the campaign or the merge
// run (harness/cli/ reads the command line into the configuration).
#pragma once

#include <string>

#include "harness/campaign/campaign.h"
#include "harness/campaign/merge.h"

namespace stabfuzz::campaign {

// Throws InputError unless `dir` (given as `flag`) holds a finished campaign or run.
void check_baseline(const std::string& dir, const std::string& flag = "--baseline");

// Runs the campaign over the default registry; progress on standard error unless `quiet`.
int campaign_command(const CampaignOptions& c, bool quiet);

// Joins campaign shards (merge.h); the summary on standard output, progress on standard error.
int merge_command(const MergeOptions& m);

}  // namespace stabfuzz::campaign
