// Records of findings and results, in the formats the reports read.
#include "harness/pipeline/record.h"

#include "injectors/fault_plan.h"
#include "reports/findings.h"

namespace stabfuzz::pipeline {

namespace {

json::Value hex_values(const std::vector<double>& v) {
  json::Array a;
  a.reserve(v.size());
  for (double x : v) a.emplace_back(reports::hex_float(x));
  return a;
}

}  // namespace

void set_input_json(json::Value& j, const Input& in) {
  json::Array args;
  for (const auto& a : in.args) {
    json::Value arg;
    json::Array shape;
    for (auto s : a.shape) shape.emplace_back(static_cast<long long>(s));
    arg.set("shape", std::move(shape));
    arg.set("values", hex_values(a.values));
    args.push_back(std::move(arg));
  }
  j.set("input", std::move(args));
  json::Value params{json::Object{}};
  for (const auto& [name, value] : in.params) params.set(name, value);
  j.set("params", std::move(params));
}

json::Value case_json(const Family& f, const Target& t, const CaseKey& key,
                      const std::string& engine, const std::string& regime) {
  json::Value j;
  j.set("target", f.name);
  j.set("impl", t.id);
  j.set("impl_kind", target_kind_name(t.kind));
  j.set("dtype", dtype_name(key.dtype));
  j.set("seed", static_cast<unsigned long long>(key.seed));
  j.set("case", static_cast<long long>(key.index));
  j.set("engine", engine);
  j.set("regime", regime);
  return j;
}

json::Value finding_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Verdict& v,
                         size_t original_n, int64_t shrink_steps, const std::string& engine,
                         const std::string& replay) {
  json::Value j = case_json(f, t, key, engine, regime);
  j.set("kind", finding_kind_name(v.kind));
  if (!v.kind_detail.empty()) j.set("kind_detail", v.kind_detail);
  j.set("detectors", v.detectors());
  j.set("severity", severity_name(v.severity()));
  j.set("max_ulp", v.max_ulp);
  j.set("error_over_tolerance", v.max_ratio);
  j.set("tolerance_ulps", v.tolerance_ulps);
  j.set("cond", v.cond);
  j.set("max_cond", v.max_cond);
  j.set("worst_index", static_cast<unsigned long>(v.worst));
  j.set("computed", reports::hex_float(v.computed));
  j.set("exact", reports::hex_float(v.exact));
  j.set("computed_dec", v.computed);
  j.set("exact_dec", v.exact);
  j.set("nonfinite", v.nonfinite);
  j.set("undecidable", v.undecidable);
  if (v.has_cestac) {
    j.set("digits", v.cestac_digits);
    j.set("expected_digits", v.expected_digits);
    j.set("min_digits", v.min_digits);
    j.set("self_validation", v.self_validation_failed ? "failed" : "ok");
    json::Array inst;
    for (const auto& s : v.log.sites) {
      json::Value r;
      r.set("kind", cestac::kind_name(s.kind));
      r.set("site", cestac::symbolize(s.address));
      r.set("count", static_cast<unsigned long long>(s.count));
      inst.push_back(std::move(r));
    }
    j.set("instabilities", std::move(inst));
  }
  j.set("n", static_cast<unsigned long>(in.total_size()));
  j.set("original_n", static_cast<unsigned long>(original_n));
  j.set("shrink_steps", static_cast<long long>(shrink_steps));
  set_input_json(j, in);
  if (t.injection) {
    j.set("plants", t.injection->plants);
    j.set("fails_where", t.injection->fails_where);
    j.set("suggested_fix", t.injection->fix);
  }
  if (const fault::Report* fr = fault::last_report(t.id))  // a fault mutant: where it struck
    j.set("fault_site", fault::describe(*fr));
  j.set("replay", replay);
  return j;
}

bool ImplResult::fails(const KindSet& fail_on) const {
  if (kind == TargetKind::injected) return failing_inputs == 0;
  for (FindingKind k : kAllFindingKinds)
    if (fail_on.has(k) && failing(k) > 0) return true;
  return false;
}

json::Value impl_result_json(const ImplResult& r, const KindSet& fail_on) {
  json::Value j;
  j.set("family", r.family);
  j.set("impl", r.impl);
  j.set("impl_kind", target_kind_name(r.kind));
  j.set("dtype", dtype_name(r.dtype));
  j.set("inputs", static_cast<long long>(r.inputs));
  j.set("failing_inputs", static_cast<long long>(r.failing_inputs));
  j.set("findings", static_cast<long long>(r.findings));
  j.set("oracle_detections", static_cast<long long>(r.oracle_detections));
  j.set("cestac_detections", static_cast<long long>(r.cestac_detections));
  j.set("crashes", static_cast<long long>(r.crashes));
  j.set("timeouts", static_cast<long long>(r.timeouts));
  j.set("exceptions", static_cast<long long>(r.exceptions));
  j.set("undecidable", static_cast<long long>(r.undecidable));
  j.set("max_ulp", r.max_ulp);
  j.set("max_error_over_tolerance", r.max_ratio);
  j.set("min_digits", r.has_cestac ? json::Value(r.min_digits) : json::Value());
  j.set("seconds", r.seconds);
  json::Value regimes;
  for (const auto& [name, n] : r.regime_inputs) regimes.set(name, static_cast<long long>(n));
  j.set("inputs_per_regime", std::move(regimes));
  json::Value kinds{json::Object{}};
  for (FindingKind k : kAllFindingKinds)
    if (r.failing(k) > 0)
      kinds.set(std::string(finding_kind_name(k)), static_cast<long long>(r.failing(k)));
  j.set("failing_by_kind", std::move(kinds));
  j.set("failed", r.fails(fail_on));
  if (r.blackbox) j.set("blackbox", blackbox::totals_json(*r.blackbox));
  return j;
}

Recorder::Recorder(const std::string& dir)
    : writer_(dir + "/findings.jsonl"), summary_path_(dir + "/summary.json") {
  run_.dir = dir;
}

void Recorder::finding(const json::Value& j) {
  writer_.append(j);
  // What a reader of findings.jsonl gets back (non-finite numbers are written as strings).
  reports::Finding f = reports::parse_finding(json::parse(json::dump(j)));
  f.line = ++lines_;
  run_.findings.push_back(std::move(f));
}

void Recorder::summary(const json::Value& s) {
  reports::write_json_atomically(summary_path_, s);
  run_.results.clear();
  reports::parse_summary(json::parse(json::dump(s)), run_);
}

}  // namespace stabfuzz::pipeline
