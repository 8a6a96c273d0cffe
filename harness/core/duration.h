// Durations and timestamps as the command line and progress lines write them.
#pragma once

#include <string>

namespace stabfuzz {

// "90", "90s", "5m", "2h", "1h30m", "1.5h" -> seconds; throws InputError naming `flag` otherwise.
double parse_duration(const std::string& text, const std::string& flag);

// 4m05s, 1h02m, 12.3s: for progress lines.
std::string format_duration(double seconds);

// The local time as 20261201-043000, for default output directories.
std::string local_timestamp();

}  // namespace stabfuzz
