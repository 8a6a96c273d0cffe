// junit.xml writer.
#include "reports/junit.h"

#include <map>
#include <sstream>

namespace stabfuzz::reports {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
      case '\t':
      case '\r':
        out += static_cast<char>(c);
        break;
      default:
        if (c >= 0x20) out += static_cast<char>(c);  // XML 1.0 allows no other control characters
    }
  }
  return out;
}

std::string render_junit(const RunData& run) {
  std::vector<std::string> families;
  std::map<std::string, std::vector<const ImplSummary*>> by_family;
  for (const auto& r : run.results) {
    if (!by_family.count(r.family)) families.push_back(r.family);
    by_family[r.family].push_back(&r);
  }
  int failures = 0;
  double seconds = 0;
  for (const auto& r : run.results) {
    failures += r.failed();
    seconds += r.seconds;
  }
  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"stabfuzz "
     << xml_escape(run.target) << " seed " << run.seed << "\" tests=\"" << run.results.size()
     << "\" failures=\"" << failures << "\" errors=\"0\" time=\"" << num(seconds, 6) << "\">\n";
  for (const auto& fam : families) {
    const auto& rows = by_family[fam];
    int fam_failures = 0;
    double fam_seconds = 0;
    for (const auto* r : rows) {
      fam_failures += r->failed();
      fam_seconds += r->seconds;
    }
    os << "  <testsuite name=\"" << xml_escape(fam) << "\" tests=\"" << rows.size()
       << "\" failures=\"" << fam_failures << "\" errors=\"0\" skipped=\"0\" time=\""
       << num(fam_seconds, 6) << "\">\n";
    for (const auto* r : rows) {
      os << "    <testcase classname=\"" << xml_escape(fam + "." + r->impl) << "\" name=\""
         << xml_escape(r->impl + " " + r->dtype) << "\" time=\"" << num(r->seconds, 6) << "\">\n";
      std::vector<const Finding*> mine;
      for (const Finding* f : run.worst_first(r->impl))
        if (f->dtype == r->dtype) mine.push_back(f);
      if (r->failed()) {
        std::string message;
        if (r->injected())
          message = "planted bug not detected in " + std::to_string(r->inputs) + " inputs";
        else
          message = std::to_string(r->failing_inputs) + " of " + std::to_string(r->inputs) +
                    " inputs failing (" + kinds_text(r->failing_by_kind) + "); max ULP error " +
                    num(r->max_ulp) +
                    (mine.empty() ? "" : ", worst finding " + mine.front()->severity);
        // The type is the worst finding's kind (accuracy, overflow, nan, ..., crash, hang).
        const std::string type = r->injected()  ? "undetected"
                                 : mine.empty() ? "numerical-instability"
                                                : mine.front()->kind;
        os << "      <failure type=\"" << xml_escape(type) << "\" message=\"" << xml_escape(message)
           << "\">";
        for (const Finding* f : mine)
          if (!f->failure.empty())  // a crash, timeout or exception of an isolated target
            os << xml_escape(f->failure + ": " + f->failure_detail + ", regime " + f->regime +
                             "\n  replay: " + f->replay + "\n");
          else
            os << xml_escape(f->kind + ", " + f->severity + ": ULP error " + num(f->max_ulp) +
                             ", cond " + num(f->cond) +
                             (f->has_cestac ? ", CESTAC digits " + num(f->digits, 2) : "") +
                             ", regime " + f->regime + "\n  replay: " + f->replay + "\n");
        os << "</failure>\n";
      }
      os << "      <system-out>"
         << xml_escape(
                std::to_string(r->inputs) + " inputs, " + std::to_string(r->failing_inputs) +
                " failing" +
                (r->failing_by_kind.empty() ? "" : " (" + kinds_text(r->failing_by_kind) + ")") +
                ", " + std::to_string(r->findings) + " findings, max ULP " + num(r->max_ulp) +
                ", min digits " + (r->min_digits ? num(*r->min_digits, 2) : "-"))
         << "</system-out>\n    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

}  // namespace stabfuzz::reports
