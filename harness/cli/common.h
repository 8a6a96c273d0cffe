// What several commands' entry points share: output streams, JSON output, the result table.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "harness/campaign/runner.h"
#include "reports/json.h"

namespace stabfuzz::cli {

// Writes `v` to PATH, or to standard output for "-".
void emit_json(const std::string& path, const json::Value& v);

// v with `prec` decimals; "inf" for infinity.
std::string fmt(double v, int prec);

// Standard error, or a sink with --quiet.
std::ostream& progress_stream(bool quiet);

// The table of a run's results in 100 columns: a line per implementation (id and kind), under it a
// row per dtype, its verdict wrapped under the verdict column.
void print_table(const campaign::RunResult& res, std::ostream& os);

// runs/<name>-<local time>-s<seed>-p<pid>: a run's default output directory.
std::string default_out_dir(const std::string& name, uint64_t seed);

// Throws InputError unless the command got no positional words.
void no_arguments(const char* command, size_t args);

}  // namespace stabfuzz::cli
