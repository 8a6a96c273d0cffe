// Loading a run directory: summary.json, findings.jsonl one line at a time, inject.json.
#include "reports/run_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::reports {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string str(const json::Value& v, std::string_view key) {
  const json::Value* x = v.get(key);
  return x && !x->is_null() ? x->as_string() : std::string();
}
double number(const json::Value& v, std::string_view key, double fallback = 0) {
  const json::Value* x = v.get(key);
  return x && !x->is_null() ? x->as_number() : fallback;
}
// An integer field; a non-integral or out-of-range value is a malformed line, not UB in a cast.
long long integer(const json::Value& v, std::string_view key, long long fallback = 0) {
  const double d = number(v, key, static_cast<double>(fallback));
  if (!(d >= -9.2e18 && d <= 9.2e18) || d != std::floor(d))
    throw json::ParseError("'" + std::string(key) + "' is not an integer");
  return static_cast<long long>(d);
}
uint64_t seed_of(const json::Value& v) {
  const double d = number(v, "seed");
  if (!(d >= 0 && d < 18446744073709551616.0))
    throw json::ParseError("'seed' is not a 64-bit seed");
  return static_cast<uint64_t>(d);
}
bool boolean(const json::Value& v, std::string_view key) {
  const json::Value* x = v.get(key);
  return x && x->as_bool();
}
// A library row's "blackbox" object, when there is one.
void parse_blackbox(const json::Value& r, ImplSummary& i) {
  const json::Value* bb = r.get("blackbox");
  if (!bb || bb->is_null()) return;
  i.has_blackbox = true;
  if (const json::Value* d = bb->get("min_digits"); d && !d->is_null())
    i.bb_min_digits = d->as_number();
  i.bb_sensitive_inputs = integer(*bb, "rounding_sensitive_inputs");
  i.bb_nondeterministic_inputs = integer(*bb, "nondeterministic_inputs");
}

}  // namespace

double Finding::digits_lost() const {
  return has_cestac ? std::max(0.0, expected_digits - digits) : 0.0;
}

int Finding::severity_rank() const {
  if (severity == "critical") return 3;
  if (severity == "major") return 2;
  if (severity == "minor") return 1;
  return 0;
}

int compare_badness(const Finding& a, const Finding& b) {
  if (a.severity_rank() != b.severity_rank()) return a.severity_rank() > b.severity_rank() ? 1 : -1;
  if (a.nonfinite != b.nonfinite) return a.nonfinite ? 1 : -1;
  const double ra = std::isnan(a.error_over_tolerance) ? INFINITY : a.error_over_tolerance;
  const double rb = std::isnan(b.error_over_tolerance) ? INFINITY : b.error_over_tolerance;
  if (ra != rb) return ra > rb ? 1 : -1;
  if (a.digits_lost() != b.digits_lost()) return a.digits_lost() > b.digits_lost() ? 1 : -1;
  return 0;
}

bool worse(const Finding& a, const Finding& b) {
  const int c = compare_badness(a, b);
  return c != 0 ? c > 0 : a.line < b.line;
}

std::string num(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string kinds_text(const std::map<std::string, long long>& counts) {
  std::string out;
  auto add = [&](const std::string& k, long long n) {
    if (n > 0) out += (out.empty() ? "" : ", ") + k + " " + std::to_string(n);
  };
  for (const char* k : kFindingKinds)
    if (auto it = counts.find(k); it != counts.end()) add(k, it->second);
  for (const auto& [k, n] : counts)
    if (std::find(std::begin(kFindingKinds), std::end(kFindingKinds), k) == std::end(kFindingKinds))
      add(k, n);
  return out;
}

std::string verdict_text(const ImplSummary& r) {
  if (r.injected()) return r.failing_inputs ? "detected (planted)" : "NOT DETECTED (planted)";
  const std::string kinds = kinds_text(r.failing_by_kind);
  if (r.failed()) return kinds.empty() ? "UNSTABLE" : "UNSTABLE (" + kinds + ")";
  if (r.failing_inputs > 0) return "ok (policy: " + kinds + ")";
  return "ok";
}

Finding parse_finding(const json::Value& v) {
  if (!v.is_object()) throw json::ParseError("not a JSON object");
  Finding f;
  f.impl = v.at("impl").as_string();
  f.dtype = v.at("dtype").as_string();
  f.severity = v.at("severity").as_string();
  f.target = str(v, "target");
  if (f.target.empty()) f.target = f.impl.substr(0, f.impl.find('/'));
  if (v.get("impl_kind")) {
    f.impl_kind = str(v, "impl_kind");
    f.kind = str(v, "kind");
    f.kind_detail = str(v, "kind_detail");
  } else {  // written before finding kinds: "kind" was the target's
    f.impl_kind = str(v, "kind");
  }
  f.regime = str(v, "regime");
  f.engine = str(v, "engine");
  f.replay = str(v, "replay");
  if (const json::Value* d = v.get("detectors")) {
    if (d->is_string()) {  // "oracle", "cestac" or "oracle+cestac"
      std::string s = d->as_string();
      for (size_t p = 0; p <= s.size();) {
        const size_t e = std::min(s.find_first_of("+,", p), s.size());
        if (e > p) f.detectors.push_back(s.substr(p, e - p));
        p = e + 1;
      }
    } else {
      for (const auto& x : d->as_array()) f.detectors.push_back(x.as_string());
    }
  }
  f.seed = seed_of(v);
  f.case_index = integer(v, "case", -1);
  f.max_ulp = number(v, "max_ulp");
  f.error_over_tolerance = number(v, "error_over_tolerance");
  f.tolerance_ulps = number(v, "tolerance_ulps");
  f.cond = number(v, "cond");
  f.max_cond = number(v, "max_cond");
  f.worst_index = integer(v, "worst_index");
  f.computed = str(v, "computed");
  f.exact = str(v, "exact");
  f.computed_dec = f.computed.empty() ? number(v, "computed_dec", NAN) : parse_float(f.computed);
  f.exact_dec = f.exact.empty() ? number(v, "exact_dec", NAN) : parse_float(f.exact);
  f.nonfinite = boolean(v, "nonfinite");
  f.undecidable = boolean(v, "undecidable");
  if (v.get("digits") && !v.at("digits").is_null()) {
    f.has_cestac = true;
    f.digits = number(v, "digits");
    f.expected_digits = number(v, "expected_digits");
    f.min_digits = number(v, "min_digits", f.digits);
    f.self_validation = str(v, "self_validation");
  }
  if (const json::Value* inst = v.get("instabilities"))
    for (const auto& s : inst->as_array())
      f.instabilities.push_back({s.at("kind").as_string(), str(s, "site"), integer(s, "count")});
  f.n = integer(v, "n");
  f.original_n = integer(v, "original_n", f.n);
  f.shrink_steps = integer(v, "shrink_steps");
  if (const json::Value* in = v.get("input"))
    for (const auto& arg : in->as_array())
      for (const auto& x : arg.at("values").as_array()) {
        const double d = x.is_string() ? parse_float(x.as_string()) : x.as_number();
        f.input.push_back(d);
        if (std::isfinite(d)) f.magnitude = std::max(f.magnitude, std::fabs(d));
      }
  f.plants = str(v, "plants");
  f.fails_where = str(v, "fails_where");
  f.suggested_fix = str(v, "suggested_fix");
  if (f.suggested_fix.empty()) f.suggested_fix = str(v, "fix");
  f.failure = str(v, "failure");
  f.failure_detail = str(v, "failure_detail");
  if (f.kind.empty())  // written before finding kinds: what the fields say
    f.kind = f.failure == "timeout" ? "hang" : !f.failure.empty() ? "crash" : "accuracy";
  return f;
}

std::vector<const Finding*> RunData::worst_first(const std::string& impl) const {
  std::vector<const Finding*> out;
  for (const auto& f : findings)
    if (f.impl == impl) out.push_back(&f);
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding* a, const Finding* b) { return worse(*a, *b); });
  return out;
}

std::vector<std::string> RunData::impls() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const auto& r : results) add(r.impl);
  for (const auto& f : findings) add(f.impl);  // a summary cut short still shows its findings
  return out;
}

void parse_summary(const json::Value& s, RunData& run) {
  run.target = str(s, "target");
  run.seed = seed_of(s);
  run.seconds = number(s, "seconds");
  for (const auto& r : s.at("results").as_array()) {
    ImplSummary i;
    i.impl = r.at("impl").as_string();
    i.dtype = r.at("dtype").as_string();
    i.family = str(r, "family");
    if (i.family.empty()) i.family = i.impl.substr(0, i.impl.find('/'));
    i.impl_kind = str(r, r.get("impl_kind") ? "impl_kind" : "kind");
    if (const json::Value* k = r.get("failing_by_kind"); k && k->is_object())
      for (const auto& [name, n] : k->as_object())
        i.failing_by_kind[name] = static_cast<long long>(n.as_number());
    if (const json::Value* fl = r.get("failed"); fl && fl->is_bool()) i.failed_flag = fl->as_bool();
    i.inputs = integer(r, "inputs");
    i.failing_inputs = integer(r, "failing_inputs");
    i.findings = integer(r, "findings");
    i.undecidable = integer(r, "undecidable");
    i.oracle_detections = integer(r, "oracle_detections");
    i.cestac_detections = integer(r, "cestac_detections");
    i.max_ulp = number(r, "max_ulp");
    i.max_error_over_tolerance = number(r, "max_error_over_tolerance");
    if (const json::Value* d = r.get("min_digits"); d && !d->is_null())
      i.min_digits = d->as_number();
    i.seconds = number(r, "seconds");
    parse_blackbox(r, i);
    run.results.push_back(std::move(i));
  }
}

void read_summary(const std::string& text, const std::string& path, RunData& run) {
  try {
    parse_summary(json::parse(text), run);
  } catch (const json::ParseError& e) {
    throw InputError(path + ": " + e.what());
  }
}

void read_findings(const std::string& text, const std::string& path, RunData& run) {
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      Finding f = parse_finding(json::parse(line));
      f.line = no;
      run.findings.push_back(std::move(f));
    } catch (const json::ParseError& e) {
      run.problems.push_back(path + ":" + std::to_string(no) + ": skipped: " + e.what());
    }
  }
}

RunData load_run(const std::string& dir) {
  RunData run;
  run.dir = dir;
  if (!exists(dir)) throw InputError("no run directory " + dir);
  const std::string summary_path = dir + "/summary.json";
  if (!exists(summary_path))
    throw InputError(dir + " holds no summary.json (not a stabfuzz run directory)");
  read_summary(read_file(summary_path), summary_path, run);
  const std::string findings_path = dir + "/findings.jsonl";
  if (exists(findings_path)) read_findings(read_file(findings_path), findings_path, run);
  const std::string inject_path = dir + "/inject.json";
  if (exists(inject_path)) {
    try {
      run.inject = json::parse(read_file(inject_path));
      run.inject->at("mutants").as_array();
    } catch (const json::ParseError& e) {
      run.inject.reset();
      run.problems.push_back(inject_path + ": skipped: " + e.what());
    }
  }
  return run;
}

}  // namespace stabfuzz::reports
