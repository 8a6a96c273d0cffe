// report.md writer: summary table, then per implementation its findings worst first.
#include "reports/markdown.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "reports/catalog.h"

namespace stabfuzz::reports {
namespace {

// Table cells may not hold a raw '|' or newline.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string verdict(const ImplSummary& r) {
  std::string v = verdict_text(r);
  for (const char* word : {"NOT DETECTED", "UNSTABLE"})
    if (v.rfind(word, 0) == 0) return "**" + std::string(word) + "**" + v.substr(strlen(word));
  return v;
}

// Findings per kind over the run: how many, on how many implementation x dtype pairs.
void write_kinds(std::ostream& os, const RunData& run) {
  std::map<std::string, long long> findings;
  std::map<std::string, std::set<std::string>> pairs;
  for (const auto& f : run.findings) {
    ++findings[f.kind];
    pairs[f.kind].insert(f.impl + " " + f.dtype);
  }
  if (findings.empty()) return;
  os << "## Findings by kind\n\n| kind | findings | implementation x dtype pairs |\n"
        "|---|---:|---:|\n";
  for (const char* k : kFindingKinds)
    if (findings.count(k))
      os << "| " << k << " | " << findings[k] << " | " << pairs[k].size() << " |\n";
  os << "\n";
}

// A library row's black-box digits with its rounding-sensitive and nondeterministic inputs;
// blank for other rows, "-" when none was measured.
std::string bb_digits(const ImplSummary& r) {
  if (!r.has_blackbox) return "";
  if (!r.bb_min_digits) return "-";
  std::string s = num(*r.bb_min_digits, 2);
  if (r.bb_sensitive_inputs > 0)
    s += " (" + std::to_string(r.bb_sensitive_inputs) + " rounding-sensitive)";
  if (r.bb_nondeterministic_inputs > 0)
    s += " (" + std::to_string(r.bb_nondeterministic_inputs) + " nondeterministic)";
  return s;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void write_finding(std::ostream& os, int index, const Finding& f) {
  os << "#### " << index << ". " << f.dtype << ", " << f.kind << ", " << f.severity << ": case "
     << f.case_index << ", regime `" << f.regime << "`\n\n";
  os << "- replay: `" << f.replay << "`\n";
  if (!f.kind_detail.empty()) os << "- " << f.kind << ": " << f.kind_detail << "\n";
  if (!f.failure.empty()) {  // a crash, hang or exception: no output, so no error to quote
    os << "- **" << f.failure << "**: " << f.failure_detail << "\n";
    os << "- input: n = " << f.n << " (as run, not shrunk), max |x| = " << num(f.magnitude)
       << "; the exact values are the hex floats of findings.jsonl line " << f.line << "\n\n";
    return;
  }
  os << "- computed `" << f.computed << "` (" << num(f.computed_dec, 9) << "), exact `" << f.exact
     << "` (" << num(f.exact_dec, 9) << ") at output " << f.worst_index
     << (f.nonfinite ? " — non-finite output" : "") << "\n";
  os << "- ULP error " << num(f.max_ulp) << " = " << num(f.error_over_tolerance)
     << " x the tolerance (" << num(f.tolerance_ulps) << " ULP x max(1, cond))"
     << (f.undecidable ? "; the oracle could not decide the rounding" : "") << "\n";
  os << "- condition number " << num(f.cond) << " (largest over the outputs " << num(f.max_cond)
     << ")\n";
  if (f.has_cestac)
    os << "- CESTAC digits " << num(f.digits, 2) << ", expected " << num(f.expected_digits, 2)
       << " from the conditioning (lowest over the outputs " << num(f.min_digits, 2)
       << "); self-validation " << f.self_validation << "\n";
  else
    os << "- CESTAC: not run (no scalar type to swap)\n";
  os << "- detectors fired: " << (f.detectors.empty() ? "none" : join(f.detectors, ", ")) << "\n";
  os << "- input: n = " << f.n;
  if (f.original_n != f.n)
    os << " (shrunk from " << f.original_n << " in " << f.shrink_steps << " steps)";
  os << ", max |x| = " << num(f.magnitude);
  std::string vals;
  for (size_t i = 0; i < f.input.size() && i < 8; ++i) vals += (i ? ", " : "") + num(f.input[i], 6);
  if (f.input.size() > 8) vals += ", ...";
  os << ": [" << vals << "]\n";
  if (!f.instabilities.empty()) {
    os << "- instability sites:\n\n  | site | kind | count |\n  |---|---|---:|\n";
    for (const auto& s : f.instabilities)
      os << "  | `" << cell(s.site) << "` | " << s.kind << " | " << s.count << " |\n";
    os << "\n";
  }
  const Suggestion sug = suggest(f);
  if (!sug.fix.empty()) os << "- **suggested fix**: " << sug.fix << " (" << sug.source << ")\n";
  os << "\n";
}

}  // namespace

std::string render_markdown(const RunData& run) {
  std::ostringstream os;
  os << "# stabfuzz report: " << run.target << ", seed " << run.seed << "\n\n";
  long long inputs = 0, failing = 0, recorded = 0;
  for (const auto& r : run.results) {
    inputs += r.inputs;
    failing += r.failing_inputs;
    recorded += r.findings;
  }
  os << run.results.size() << " implementation x dtype pairs, " << inputs << " inputs, " << failing
     << " failing, " << run.findings.size() << " findings in findings.jsonl (" << recorded
     << " recorded by the run), " << num(run.seconds) << " s. A finding means the "
     << "implementation lost more accuracy than the problem's condition number explains.\n\n";
  if (!run.problems.empty()) {
    os << "**" << run.problems.size() << " unreadable line(s) skipped:**\n\n";
    for (const auto& p : run.problems) os << "- `" << cell(p) << "`\n";
    os << "\n";
  }
  write_kinds(os, run);
  os << "## Summary\n\n| implementation | kind | dtype | inputs | failing | findings | max ULP | "
        "min digits | bb digits | verdict |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : run.results)
    os << "| " << r.impl << " | " << r.impl_kind << " | " << r.dtype << " | " << r.inputs << " | "
       << r.failing_inputs << " | " << r.findings << " | " << num(r.max_ulp) << " | "
       << (r.min_digits ? num(*r.min_digits, 2) : "-") << " | " << bb_digits(r) << " | "
       << verdict(r) << " |\n";
  os << "\n## Findings by implementation (worst first)\n\n";
  bool any = false;
  // Reference and library implementations first; the planted bugs (injected ones) after them.
  std::vector<std::string> impls = run.impls();
  auto injected = [&](const std::string& impl) {
    return std::any_of(run.results.begin(), run.results.end(),
                       [&](const ImplSummary& r) { return r.impl == impl && r.injected(); });
  };
  std::stable_partition(impls.begin(), impls.end(),
                        [&](const std::string& impl) { return !injected(impl); });
  for (const auto& impl : impls) {
    const auto fs = run.worst_first(impl);
    if (fs.empty()) continue;
    any = true;
    os << "### " << impl << " (" << fs.front()->impl_kind << ", " << fs.size() << " finding"
       << (fs.size() == 1 ? "" : "s") << ")\n\n";
    if (!fs.front()->plants.empty())
      os << "Planted: " << fs.front()->plants << ". Fails where: " << fs.front()->fails_where
         << ".\n\n";
    int k = 0;
    for (const Finding* f : fs) write_finding(os, ++k, *f);
  }
  if (!any) os << "No findings.\n\n";
  return os.str();
}

}  // namespace stabfuzz::reports
