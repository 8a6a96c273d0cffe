// What several commands share (harness/cli/common.h).
#include "harness/cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "harness/campaign/plan.h"
#include "harness/core/console.h"
#include "harness/core/duration.h"
#include "reports/findings.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

namespace stabfuzz::cli {
namespace {

// 1.08e+17: large ULP errors keep the table's column width.
std::string sci(double v) {
  std::ostringstream os;
  os << std::scientific << std::setprecision(2) << v;
  return os.str();
}

// The pair's verdict in words, as the reports word it (reports::verdict_text).
std::string verdict_text(const pipeline::ImplResult& r, const KindSet& fail_on) {
  reports::ImplSummary row;
  row.impl_kind = std::string(target_kind_name(r.kind));
  row.failing_inputs = r.failing_inputs;
  for (FindingKind k : kAllFindingKinds)
    if (r.failing(k) > 0) row.failing_by_kind[std::string(finding_kind_name(k))] = r.failing(k);
  row.failed_flag = r.fails(fail_on);
  return reports::verdict_text(row);
}

}  // namespace

std::string fmt(double v, int prec) {
  if (std::isinf(v)) return "inf";
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

void emit_json(const std::string& path, const json::Value& v) {
  if (path == "-") {
    std::cout << json::dump(v, 2) << "\n";
  } else {
    reports::write_json_atomically(path, v);
  }
}

std::ostream& progress_stream(bool quiet) {
  static std::ostringstream sink;
  return quiet ? static_cast<std::ostream&>(sink) : std::cerr;
}

std::string default_out_dir(const std::string& name, uint64_t seed) {
  return "runs/" + campaign::slug(name) + "-" + local_timestamp() + "-s" + std::to_string(seed) +
         "-p" + std::to_string(::getpid());
}

void no_arguments(const char* command, size_t args) {
  if (args > 0) throw InputError(std::string(command) + " takes no arguments besides flags");
}

namespace {

// The fewest significant digits a pair kept: CESTAC's (white box), else the black-box estimate
// from the four rounding modes (library targets); "-" when neither was measured.
std::string digits(const campaign::ImplResult& r) {
  // No digit left prints 0.0, not -0.0.
  if (r.has_cestac) return fmt(std::max(0.0, r.min_digits), 1);
  if (r.blackbox && r.blackbox->measured_inputs > 0)
    return fmt(std::max(0.0, r.blackbox->min_digits), 1);
  return "-";
}

// 1.08e+17 beyond `limit`: large values keep the column's width.
std::string number(double v, double limit, int prec) {
  return v >= limit && std::isfinite(v) ? sci(v) : fmt(v, prec);
}

// Where the verdict column starts (the dtype rows' fixed columns end).
constexpr size_t kVerdictColumn = 60;

}  // namespace

void print_table(const campaign::RunResult& res, std::ostream& os) {
  // One line per implementation (id and kind), one row per dtype under it: ids of any length fit.
  os << std::left << std::setw(8) << "  dtype" << std::right << std::setw(8) << "inputs"
     << std::setw(8) << "failing" << std::setw(9) << "findings" << std::setw(9) << "max_ulp"
     << std::setw(9) << "err/tol" << std::setw(7) << "digits"
     << "  verdict\n";
  const std::string* impl = nullptr;
  for (const auto& r : res.results) {
    if (!impl || *impl != r.impl) os << r.impl << "  " << target_kind_name(r.kind) << "\n";
    impl = &r.impl;
    std::string verdict = verdict_text(r, res.fail_on);
    if (r.crashes + r.timeouts + r.exceptions > 0)  // isolated targets: how they failed
      verdict += " (" + std::to_string(r.crashes) + " crashed, " + std::to_string(r.timeouts) +
                 " timed out, " + std::to_string(r.exceptions) + " threw)";
    std::ostringstream row;
    row << "  " << std::left << std::setw(6) << dtype_name(r.dtype) << std::right << std::setw(8)
        << r.inputs << std::setw(8) << r.failing_inputs << std::setw(9) << r.findings
        << std::setw(9) << number(r.max_ulp, 1e7, 0)
        << std::setw(9)  // the worst ULP error over its tolerance at the input's conditioning
        << number(r.max_ratio, 1e5, 2) << std::setw(7) << digits(r) << "  ";
    wrap(os, row.str(), verdict, kVerdictColumn);
    if (r.undecidable)
      os << "    " << r.undecidable << " inputs undecidable by the oracle (no oracle verdict)\n";
  }
}

}  // namespace stabfuzz::cli
