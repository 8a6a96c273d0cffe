// `stabfuzz replay PATH...`: re-runs corpus files on their recorded implementation and checks
// their expectation (a stable target stays within tolerance, an injected one is still detected).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/corpus/corpus.h"

namespace stabfuzz::corpus {

struct ReplayOutcome {
  std::string path;
  bool ok = false;
  std::string message;  // the verdict, or why the file is malformed
};

// Checks one parsed entry against the registry: unknown family, implementation or dtype, or an
// input the family rejects, throws InputError; otherwise evaluates it and compares.
// Isolated targets (plugins) run in a forked child with `timeout_ms` per input (<= 0: none).
ReplayOutcome check(const Registry& registry, const Entry& e, const std::string& path,
                    int64_t timeout_ms = 0);

// Every corpus file under the paths: files as given, directories recursively (files ending in
// .txt), in sorted order. A path that does not exist throws InputError.
std::vector<std::string> collect(const std::vector<std::string>& paths);

// Replays every file, printing one line per file and a total; malformed files are reported with
// file:line and skipped. Returns 0 when every expectation holds and no file is malformed, else 1.
// With `junit_path`, also writes JUnit XML there: one testcase per file, a failed expectation as
// <failure>, a malformed file as <error>. Isolated targets (plugins) get `timeout_ms` per input.
int replay(const Registry& registry, const std::vector<std::string>& paths, std::ostream& out,
           const std::string& junit_path = "", int64_t timeout_ms = 0);

// The JUnit XML of replay outcomes (`malformed`: message is the parse error).
struct JunitCase {
  std::string path, impl, dtype, message;
  bool ok = false, malformed = false;
  double seconds = 0;
};
std::string render_replay_junit(const std::vector<JunitCase>& cases);

}  // namespace stabfuzz::corpus
