// Run outputs: findings.jsonl (appended and flushed one finding at a time) and summary.json.
#pragma once

#include <cstdio>
#include <string>

#include "reports/json.h"

namespace stabfuzz::reports {

// Appends one JSON object per line and flushes it to the file system before returning, so a
// killed run loses nothing it has reported.
class FindingsWriter {
 public:
  explicit FindingsWriter(const std::string& path);
  ~FindingsWriter();
  FindingsWriter(const FindingsWriter&) = delete;
  FindingsWriter& operator=(const FindingsWriter&) = delete;
  void append(const json::Value& finding);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

// Moves an earlier run's outputs in DIR (findings.jsonl, summary.json, inject.json, report.md,
// report.html, junit.xml) into DIR/previous-N, N the first unused number, so that a new run's
// findings.jsonl and summary.json describe the same run and nothing found before is lost.
// Returns that directory, or "" when DIR held no findings.jsonl or summary.json.
std::string move_previous_run(const std::string& dir);

// A whole file's contents, "" when it is missing or unreadable (callers treat both as absent).
std::string read_text(const std::string& path);

// Writes text through a temporary file and rename(): readers never see half a file. A
// failed write (a full disk) leaves the old file whole, removes the temporary one and throws
// InputError "cannot write PATH: ...".
void write_text_atomically(const std::string& path, const std::string& text);
// The same for pretty JSON.
void write_json_atomically(const std::string& path, const json::Value& v);

// Exact text for a double: C99 hex float ("0x1.8p+1"), plus "inf", "-inf", "nan".
std::string hex_float(double v);
// Inverse of hex_float (also accepts decimal); throws json::ParseError.
double parse_float(const std::string& s);

}  // namespace stabfuzz::reports
