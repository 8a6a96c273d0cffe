// Options: the parsed command line, generated from flags.inc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stabfuzz/cestac.h"

namespace stabfuzz::cli {

struct Options {
#define STABFUZZ_FLAG(member, type, name, def, value_label, help) type member = def;
#define STABFUZZ_SWITCH(member, name, help) bool member = false;
#define STABFUZZ_OPTIONAL(member, type, name, def, implicit, value_label, help) type member = def;
#define STABFUZZ_LIST(member, name, value_label, help) std::vector<std::string> member;
#include "harness/cli/flags.inc"
#undef STABFUZZ_FLAG
#undef STABFUZZ_SWITCH
#undef STABFUZZ_OPTIONAL
#undef STABFUZZ_LIST
  std::vector<std::string> command;  // positional words (subcommands)
  double time_s = 0;                 // --time in seconds
  bool runs_given = false;
  bool seed_given = false;
  bool model_given = false, data_given = false, precision_given = false;  // monitor infer
};

// Parses argv; throws InputError with one line naming the problem.
Options parse(int argc, const char* const* argv);

// --help text, from the flag table.
std::string help_text();

// A command line that sets exactly the given flags (cli name, value), in table order.
std::string command_line(const std::vector<std::pair<std::string, std::string>>& flags);

}  // namespace stabfuzz::cli
