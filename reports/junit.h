// junit.xml for CI systems: one testcase per implementation x dtype of a run.
#pragma once

#include <string>

#include "reports/run_data.h"

namespace stabfuzz::reports {

// One <testsuite> per family. A reference or library testcase fails when it has a failing input;
// an injected one fails when its planted bug went undetected (what the run's exit code means).
std::string render_junit(const RunData& run);

// Text escaped for XML character data and attribute values.
std::string xml_escape(const std::string& s);

}  // namespace stabfuzz::reports
