// The `fuzz` and `fuzz-compare` commands' entry points: configurations in, libFuzzer or the
// comparison run; and the re-entry of libFuzzer's children (harness/cli/ reads the command line).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/fuzz/compare.h"
#include "harness/fuzz/engine.h"

namespace stabfuzz::fuzz {

// `stabfuzz fuzz`: `stabfuzz_words` are the command's words before `--` (`fuzz` and its flags),
// f.libfuzzer_args the words after it. Checks that something limits the run, leaves the words in
// the environment for libFuzzer's children (with --seed when the seed was picked, not given) and
// runs libFuzzer; returns the run's exit code.
int command(const FuzzOptions& f, const std::vector<std::string>& stabfuzz_words, bool seed_given,
            TablePrinter table);

// libFuzzer's merge and fork modes re-run the binary with libFuzzer flags only; the parent left its
// stabfuzz words in the environment. Returns them (`fuzz` first), or nullopt when this process is
// not such a child.
std::optional<std::vector<std::string>> libfuzzer_child_words(int argc, char** argv);

// A child: the parent's options, libFuzzer's flags from argv. Does not return (libFuzzer ends the
// process it started).
int run_child(FuzzOptions f, int argc, char** argv, TablePrinter table);

// `stabfuzz fuzz-compare`: the engine comparison (compare.h); Markdown on stdout, JSON to
// OUT/compare.json and to `json` ("-": stdout) when not empty.
int compare_command(CompareOptions c, const std::string& out, const std::string& json);

}  // namespace stabfuzz::fuzz
