// The `campaign` and `merge` subcommands (dispatched from harness/cli/main.cc).
#pragma once

#include "harness/cli/options.h"

namespace stabfuzz::campaign {

int campaign_command(const cli::Options& o);
int merge_command(const cli::Options& o);

}  // namespace stabfuzz::campaign
