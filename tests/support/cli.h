// The command line's test helpers: a usage error (exit 2, one line naming the problem) from the
// binary or in process, whether an implementation runs here, every command's name.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/cli/command.h"
#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::testing {

inline void expect_usage_error(const std::string& args, const std::string& names) {
  const auto r = run_stabfuzz(args);
  EXPECT_EQ(r.code, 2) << args;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("stabfuzz: error: ", 0), 0u) << r.err;
}

// Whether implementation `id` runs here: listed under its family, not under "Unavailable here".
inline bool listed(const std::string& id) {
  static const std::string list = run_stabfuzz("--list").out;
  return list.substr(0, list.find("\nUnavailable here:")).find("\n  " + id + " ") !=
         std::string::npos;
}

// The InputError a command line (the words after `stabfuzz`) throws in process; "" when none.
inline std::string dispatch_error(const std::vector<std::string>& words) {
  try {
    cli::dispatch(words);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

inline constexpr const char* kCommands[] = {
    "run",      "help",  "report",        "inject",        "replay",        "fuzz",  "fuzz-compare",
    "campaign", "merge", "monitor train", "monitor sweep", "monitor infer", "bench", "calibrate"};

}  // namespace stabfuzz::testing
