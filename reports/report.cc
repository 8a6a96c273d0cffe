// write_reports: one load, three renderers.
#include "reports/report.h"

#include <ostream>

#include "reports/findings.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/markdown.h"
#include "reports/run_data.h"

namespace stabfuzz::reports {

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
