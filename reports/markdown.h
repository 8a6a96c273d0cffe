// report.md: a run's findings per implementation, worst first, each with its replay command.
#pragma once

#include <string>

#include "reports/run_data.h"

namespace stabfuzz::reports {

std::string render_markdown(const RunData& run);

}  // namespace stabfuzz::reports
