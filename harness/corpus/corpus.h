// Corpus files: one operator input per text file, with the implementation it ran on and what it
// must keep doing there (stay stable, or stay detected). Format: corpora/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/pipeline/finding_kind.h"
#include "stabfuzz/family.h"

namespace stabfuzz::corpus {

enum class Expect { stable, detected };
std::string_view expect_name(Expect e);

struct Entry {
  std::string family;
  std::string impl;
  Input input;  // dtype, tensors, parameters
  Expect expect = Expect::stable;
  std::optional<uint64_t> seed;     // the CESTAC stream's seed (0 when absent)
  std::string note;                 // one line of free text
  std::optional<FindingKind> kind;  // with expect detected: the finding must be of this kind
};

// The text of an entry: header lines, then `tensor <shape>` and its values as hex floats.
std::string format(const Entry& e);

// Parses the text of a corpus file named `name`. Throws InputError "name:line: what is wrong".
Entry parse(std::string_view text, const std::string& name);

// Reads and parses one file (InputError when it cannot be read or is malformed).
Entry read_file(const std::string& path);

// Writes an entry, creating the directories on the way.
void write_file(const std::string& path, const Entry& e);

// The file name an input of `impl` gets under <dir>/<family>/regression/: the implementation id
// after the family, '/' replaced by '-', plus the dtype: "fault-add_bf16-f32.txt".
std::string regression_path(const std::string& dir, const Entry& e);

}  // namespace stabfuzz::corpus
