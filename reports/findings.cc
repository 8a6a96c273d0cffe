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
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
  ::fsync(::fileno(f_));
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

void write_json_atomically(const std::string& path, const json::Value& v) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw InputError("cannot write " + tmp + ": " + std::strerror(errno));
    out << json::dump(v, 2) << "\n";
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
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
