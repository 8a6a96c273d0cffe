// write_reports: one load, three renderers.
#include "reports/report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>

#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::reports {

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) throw InputError("cannot write " + tmp + ": " + std::strerror(errno));
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
}

std::vector<std::string> write_reports(const std::string& dir, std::ostream& log) {
  const RunData run = load_run(dir);
  for (const auto& p : run.problems) log << "stabfuzz: " << p << "\n";
  return write_reports(run, dir);
}

std::vector<std::string> write_reports(const RunData& run, const std::string& dir) {
  const std::vector<std::string> paths = {dir + "/report.md", dir + "/report.html",
                                          dir + "/junit.xml"};
  write_text_atomically(paths[0], render_markdown(run));
  write_text_atomically(paths[1], render_html(run));
  write_text_atomically(paths[2], render_junit(run));
  return paths;
}

}  // namespace stabfuzz::reports
