// `stabfuzz monitor train|sweep`: the subcommand's entry point.
#pragma once

#include "harness/cli/options.h"

namespace stabfuzz::monitor {

// Returns the process exit code (0); throws InputError on bad flags or data.
int run_monitor(const cli::Options& o);

}  // namespace stabfuzz::monitor
