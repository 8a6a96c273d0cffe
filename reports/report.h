// Rendering a run directory: report.md, report.html and junit.xml next to its JSON.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace stabfuzz::reports {

struct RunData;

// Writes the three reports of `run` into DIR and returns their paths.
std::vector<std::string> write_reports(const RunData& run, const std::string& dir);

// Loads DIR (reports/run_data.h) and writes the three reports into it; each unreadable
// findings.jsonl line is named on `log` ("stabfuzz: FILE:LINE: skipped: ...") and left out.
// Returns the paths written. Throws InputError when DIR is not a run directory.
std::vector<std::string> write_reports(const std::string& dir, std::ostream& log);

}  // namespace stabfuzz::reports
