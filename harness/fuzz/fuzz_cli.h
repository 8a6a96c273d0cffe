// The `stabfuzz fuzz` subcommand: flags -> FuzzOptions; and the re-entry of libFuzzer's children.
#pragma once

#include <optional>

#include "harness/cli/options.h"
#include "harness/fuzz/engine.h"

namespace stabfuzz::fuzz {

// `stabfuzz fuzz --target F [...] [-- LIBFUZZER_FLAGS...]`: argv is the raw command line (the
// words after `--` go to libFuzzer unchanged). Does not return once libFuzzer starts.
int command(const cli::Options& o, int argc, char** argv, TablePrinter table);

// `stabfuzz fuzz-compare [MUTANT...] [--runs N] [--time S] [--seed S] [--out DIR] [--json PATH]`:
// the engine comparison (compare.h); Markdown on stdout, JSON to OUT/compare.json and --json.
int compare_command(const cli::Options& o);

// libFuzzer's merge and fork modes re-run the binary with libFuzzer flags only; the parent leaves
// its own stabfuzz flags in the environment. Returns nullopt when this process is not such a child.
std::optional<int> libfuzzer_child(int argc, char** argv, TablePrinter table);

}  // namespace stabfuzz::fuzz
