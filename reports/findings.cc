// findings.jsonl and summary.json writers, hex floats.
#include "reports/findings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "stabfuzz/errors.h"

namespace stabfuzz::reports {

FindingsWriter::FindingsWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) throw InputError("cannot open " + path + ": " + std::strerror(errno));
}

FindingsWriter::~FindingsWriter() {
  if (f_) std::fclose(f_);
}

void FindingsWriter::append(const json::Value& finding) {
  const std::string line = json::dump(finding) + "\n";
  const int fd = ::fileno(f_);
  const off_t before = ::lseek(fd, 0, SEEK_END);  // "a": every write lands at the end
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0) {
    // A full disk (or a file-size limit): the line may be half written. Cut it off, so the file
    // holds whole findings only, and stop with one line (exit 2); the findings before it stay.
    const int err = errno;
    if (before >= 0 && ::ftruncate(fd, before) != 0) {
    }
    std::clearerr(f_);
    throw InputError("cannot write " + path_ + ": " + std::strerror(err) +
                     " (the findings written before are kept)");
  }
  ::fsync(fd);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string move_previous_run(const std::string& dir) {
  struct stat st {};
  auto exists = [&](const std::string& p) { return ::stat(p.c_str(), &st) == 0; };
  if (!exists(dir + "/findings.jsonl") && !exists(dir + "/summary.json")) return "";
  std::string prev;
  for (int n = 1;; ++n) {
    prev = dir + "/previous-" + std::to_string(n);
    if (!exists(prev)) break;
  }
  if (::mkdir(prev.c_str(), 0755) != 0)
    throw InputError("cannot create " + prev + ": " + std::strerror(errno));
  for (const char* name :
       {"findings.jsonl", "summary.json", "inject.json", "report.md", "report.html", "junit.xml"}) {
    const std::string from = dir + "/" + name;
    if (exists(from) && std::rename(from.c_str(), (prev + "/" + name).c_str()) != 0)
      throw InputError("cannot move " + from + " to " + prev + ": " + std::strerror(errno));
  }
  return prev;
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw InputError("cannot write " + tmp + ": " + std::strerror(errno));
  const bool written =
      std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    // A full disk: the old file (if any) stays whole, the temporary one goes.
    std::remove(tmp.c_str());
    throw InputError("cannot write " + path + ": " + std::strerror(written ? errno : err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp.c_str());
    throw InputError("cannot rename " + tmp + " to " + path + ": " + std::strerror(rename_err));
  }
}

void write_json_atomically(const std::string& path, const json::Value& v) {
  write_text_atomically(path, json::dump(v, 2) + "\n");
}

std::string hex_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

double parse_float(const std::string& s) {
  if (s == "inf" || s == "+inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  if (s == "nan") return NAN;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) throw json::ParseError("not a float: '" + s + "'");
  return d;
}

}  // namespace stabfuzz::reports
