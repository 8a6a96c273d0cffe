// Hand-written run directories for the report tests: summary.json, findings.jsonl, inject.json.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "reports/findings.h"
#include "reports/json.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::testing {

struct FixtureFinding {
  std::string impl = "softmax/cpu/stable";
  std::string impl_kind = "reference";
  std::string kind = "accuracy";  // the finding's kind
  std::string dtype = "f32";
  long long case_index = 0;
  std::string severity = "major";
  std::string regime = "near_overflow";
  double max_ulp = 100;
  double ratio = 25;
  double digits = 3;               // < 0: no CESTAC fields (a black-box target)
  std::vector<std::string> kinds;  // instability kinds
  std::vector<double> input = {1.0, 2.0};
  std::string fix;  // injected targets' suggested_fix
  uint64_t seed = 1;
};

inline json::Value finding_json(const FixtureFinding& f) {
  json::Value j;
  j.set("target", f.impl.substr(0, f.impl.find('/')));
  j.set("impl", f.impl);
  j.set("impl_kind", f.impl_kind);
  j.set("dtype", f.dtype);
  j.set("seed", static_cast<unsigned long long>(f.seed));
  j.set("case", f.case_index);
  j.set("engine", "property");
  j.set("regime", f.regime);
  j.set("kind", f.kind);
  j.set("detectors", f.digits >= 0 ? "oracle+cestac" : "oracle");
  j.set("severity", f.severity);
  j.set("max_ulp", f.max_ulp);
  j.set("error_over_tolerance", f.ratio);
  j.set("tolerance_ulps", 4.0);
  j.set("cond", 1.5);
  j.set("max_cond", 2.0);
  j.set("worst_index", 1);
  j.set("computed", reports::hex_float(0.25));
  j.set("exact", reports::hex_float(0.5));
  j.set("computed_dec", 0.25);
  j.set("exact_dec", 0.5);
  j.set("nonfinite", false);
  j.set("undecidable", false);
  if (f.digits >= 0) {
    j.set("digits", f.digits);
    j.set("expected_digits", 6.5);
    j.set("min_digits", f.digits);
    j.set("self_validation", "ok");
    json::Array inst;
    for (const auto& k : f.kinds) {
      json::Value s;
      s.set("kind", k);
      s.set("site", "targets/cpu/softmax.h:42");
      s.set("count", 3);
      inst.push_back(std::move(s));
    }
    j.set("instabilities", std::move(inst));
  }
  j.set("n", static_cast<unsigned long>(f.input.size()));
  j.set("original_n", 64);
  j.set("shrink_steps", 5);
  json::Array vals;
  for (double v : f.input) vals.emplace_back(reports::hex_float(v));
  json::Value arg;
  arg.set("shape", json::Array{json::Value(static_cast<long long>(f.input.size()))});
  arg.set("values", std::move(vals));
  j.set("input", json::Array{arg});
  if (!f.fix.empty()) {
    j.set("plants", "e^x / sum e^x without the max shift");
    j.set("fails_where", "x > 88 (f32)");
    j.set("suggested_fix", f.fix);
  }
  j.set("replay", "stabfuzz --target softmax --impl " + f.impl + " --dtype " + f.dtype +
                      " --seed " + std::to_string(f.seed) + " --case " +
                      std::to_string(f.case_index));
  return j;
}

struct FixtureResult {
  std::string impl, impl_kind, dtype;
  long long inputs = 100, failing = 0, findings = 0;
};

// Writes DIR/summary.json and DIR/findings.jsonl (plus `extra_lines` appended verbatim).
inline std::string write_run(const std::string& dir, const std::vector<FixtureResult>& results,
                             const std::vector<FixtureFinding>& findings,
                             const std::string& extra_lines = "", uint64_t seed = 1) {
  std::system(("mkdir -p '" + dir + "'").c_str());
  json::Value s;
  s.set("target", "softmax");
  s.set("seed", static_cast<unsigned long long>(seed));
  s.set("seconds", 1.25);
  json::Array rs;
  for (const auto& r : results) {
    json::Value j;
    j.set("family", r.impl.substr(0, r.impl.find('/')));
    j.set("impl", r.impl);
    j.set("impl_kind", r.impl_kind);
    j.set("dtype", r.dtype);
    j.set("inputs", r.inputs);
    j.set("failing_inputs", r.failing);
    j.set("findings", r.findings);
    j.set("oracle_detections", r.failing);
    j.set("cestac_detections", r.failing);
    j.set("undecidable", 0);
    j.set("max_ulp", r.failing ? 1e6 : 1.0);
    j.set("max_error_over_tolerance", r.failing ? 1e5 : 0.2);
    j.set("min_digits", 5.0);
    j.set("seconds", 0.5);
    rs.push_back(std::move(j));
  }
  s.set("results", std::move(rs));
  reports::write_json_atomically(dir + "/summary.json", s);
  std::ofstream out(dir + "/findings.jsonl", std::ios::trunc);
  for (const auto& f : findings) out << json::dump(finding_json(f)) << "\n";
  out << extra_lines;
  return dir;
}

}  // namespace stabfuzz::testing
