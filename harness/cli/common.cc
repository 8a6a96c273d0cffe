// What several commands share (harness/cli/common.h).
#include "harness/cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "harness/campaign/plan.h"
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

// A library row's black-box digits (harness/pipeline/blackbox.h): "-" when none was measured,
// blank for other rows.
std::string bb_digits(const campaign::ImplResult& r) {
  if (!r.blackbox) return "";
  return r.blackbox->measured_inputs > 0 ? fmt(r.blackbox->min_digits, 1) : "-";
}

}  // namespace

void print_table(const campaign::RunResult& res, std::ostream& os) {
  size_t w = 36;  // library ids run longer (attention/torch/scaled_dot_product_attention)
  for (const auto& r : res.results) w = std::max(w, r.impl.size() + 2);
  os << std::left << std::setw(static_cast<int>(w)) << "implementation" << std::setw(10) << "kind"
     << std::setw(6) << "dtype" << std::right << std::setw(7) << "inputs" << std::setw(9)
     << "failing" << std::setw(10) << "findings" << std::setw(11) << "max_ulp" << std::setw(10)
     << "err/tol" << std::setw(11) << "min_digits" << std::setw(10) << "bb_digits"
     << "  verdict\n";
  for (const auto& r : res.results) {
    std::string verdict = verdict_text(r, res.fail_on);
    if (r.crashes + r.timeouts + r.exceptions > 0)  // isolated targets: how they failed
      verdict += " (" + std::to_string(r.crashes) + " crashed, " + std::to_string(r.timeouts) +
                 " timed out, " + std::to_string(r.exceptions) + " threw)";
    os << std::left << std::setw(static_cast<int>(w)) << r.impl << std::setw(10)
       << target_kind_name(r.kind) << std::setw(6) << dtype_name(r.dtype) << std::right
       << std::setw(7) << r.inputs << std::setw(9) << r.failing_inputs << std::setw(10)
       << r.findings << std::setw(11)
       << (r.max_ulp >= 1e9 && std::isfinite(r.max_ulp) ? sci(r.max_ulp) : fmt(r.max_ulp, 0))
       << std::setw(10)  // the worst ULP error over its tolerance at the input's conditioning
       << (r.max_ratio >= 1e5 && std::isfinite(r.max_ratio) ? sci(r.max_ratio)
                                                            : fmt(r.max_ratio, 2))
       << std::setw(11) << (r.has_cestac ? fmt(r.min_digits, 1) : "-") << std::setw(10)
       << bb_digits(r) << "  " << verdict << "\n";
    if (r.undecidable)
      os << "    " << r.undecidable << " inputs undecidable by the oracle (no oracle verdict)\n";
  }
}

}  // namespace stabfuzz::cli
