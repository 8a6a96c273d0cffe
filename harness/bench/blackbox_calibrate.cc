// Black-box calibration: the four-rounding-mode digits of every target against the oracle.
#include "harness/bench/blackbox_calibrate.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "harness/bench/calibrate.h"
#include "harness/pipeline/blackbox.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/verdict.h"

namespace stabfuzz::calibrate {
namespace {

namespace bb = pipeline::blackbox;

constexpr size_t kOutputsPerInput = 16;  // strided sample of a tensor's outputs

// The groups one target counts in: all, its kind (faults apart), its library, its family.
std::vector<std::string> group_names(const Family& f, const Target& t, DType d) {
  std::vector<std::string> g = {"all"};
  const std::string backend =
      t.id.substr(f.name.size() + 1, t.id.find('/', f.name.size() + 1) - f.name.size() - 1);
  if (t.kind == TargetKind::library)
    g.push_back("library " + backend);
  else if (backend == "fault")
    g.push_back("injected (fault mutants)");
  else
    g.push_back(std::string(target_kind_name(t.kind)) +
                (t.kind == TargetKind::injected ? " (formulations)" : ""));
  g.push_back("family " + f.name);
  g.push_back((t.kind == TargetKind::library ? "lib-impl " : "impl ") + t.id + " " +
              std::string(dtype_name(d)));
  return g;
}

// Compares one input's black-box digits with the oracle's and counts into `groups`.
void one_input(const Family& f, const Target& t, const Input& in,
               const std::vector<BlackBoxGroup*>& groups) {
  const OracleResult o = f.oracle(in);
  bb::Options opt;
  opt.sensitive_ulps = 2 * f.tolerance_ulps(in.dtype, in.total_size());
  opt.repeat = opt.threads = false;
  const bb::Result r = bb::measure(t.native, in, opt);
  if (!o.decidable || !r.measured || o.exact.size() != r.nearest.size()) {
    for (auto* g : groups) ++g->not_measured;
    return;
  }
  const bool fired = judge(f, in, r.nearest, o, nullptr).oracle_fired;
  const double full = dtype_max_digits(in.dtype);
  bool spread = false;
  for (double dg : r.digits) spread |= dg < full;
  const size_t stride = std::max<size_t>(1, r.nearest.size() / kOutputsPerInput);
  for (auto* g : groups) {
    ++g->inputs;
    g->spread_inputs += spread;
    g->sensitive_inputs += r.sensitive;
    g->oracle_findings += fired;
    g->sensitive_findings += fired && r.sensitive;
    g->max_spread_ulps = std::max(g->max_spread_ulps, r.max_spread_ulps);
  }
  for (size_t i = 0; i < r.nearest.size(); i += stride) {
    const double exact = o.exact[i], near = r.nearest[i];
    if (!std::isfinite(exact) || exact == 0 || !std::isfinite(near) || std::isnan(r.digits[i]))
      continue;
    const double truth = true_digits(near, exact, in.dtype), est = r.digits[i];
    const bool agree = std::fabs(est - truth) <= 1, over = est > truth + 1;
    const bool lossy = truth < full - 1;
    for (auto* g : groups) {
      ++g->outputs;
      g->agree += agree;
      g->overclaim += over;
      g->lossy += lossy;
      g->lossy_agree += lossy && agree;
      g->lossy_overclaim += lossy && over;
    }
  }
}

// The inputs of one target x dtype: `per` regime cases, `per` conditioned rows.
void one_pair(const Family& f, const Target& t, DType d, int per, uint64_t seed,
              std::map<std::string, BlackBoxGroup>& groups) {
  std::vector<BlackBoxGroup*> gs;
  for (const auto& name : group_names(f, t, d)) {
    gs.push_back(&groups[name]);
    gs.back()->name = name;
  }
  auto guarded = [&](const Input& in) {
    try {
      one_input(f, t, in, gs);
    } catch (const std::exception&) {  // the target or the oracle refused the input
      for (auto* g : gs) ++g->not_measured;
    }
  };
  for (int k = 0; k < per; ++k) guarded(pipeline::make_case(f, d, seed, k));
  SeededEntropy e(seed, std::hash<std::string>{}(t.id) ^ static_cast<uint64_t>(d));
  const double max_log_cond = d == DType::f64 ? 12 : 7;
  for (int k = 0; k < per; ++k)
    if (auto in = conditioned_input(f.name, d, e, max_log_cond * k / std::max(1, per - 1)))
      guarded(*in);
}

double pct(int64_t a, int64_t b) { return b > 0 ? 100.0 * double(a) / double(b) : 0; }

}  // namespace

BlackBoxSummary run_blackbox(int per, uint64_t seed, const std::string& family,
                             std::ostream& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, BlackBoxGroup> groups;
  for (const auto& f : default_registry().families()) {
    if (!family.empty() && f.name != family) continue;
    for (const auto& t : f.targets) {
      if (t.isolated) continue;  // a plugin: its calls belong in its child
      try {
        if (t.prepare) t.prepare();
      } catch (const std::exception& e) {  // a library module that does not load
        progress << "  skipped " << t.id << ": " << e.what() << std::endl;
        continue;
      }
      for (DType d : t.dtypes)
        if (d == DType::f64 || d == DType::f32) one_pair(f, t, d, per, seed, groups);
    }
    progress << "  " << f.name << ": " << groups["all"].inputs << " inputs so far" << std::endl;
  }
  BlackBoxSummary s;
  s.groups.push_back(groups["all"]);
  for (const char* prefix : {"reference", "injected", "library", "family", "lib-impl", "impl"})
    for (const auto& [name, g] : groups)
      if (name.rfind(prefix, 0) == 0) s.groups.push_back(g);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

json::Value to_json(const BlackBoxSummary& s) {
  json::Array rows;
  for (const auto& g : s.groups) {
    json::Value r;
    r.set("group", g.name);
    r.set("inputs", static_cast<long long>(g.inputs));
    r.set("not_measured", static_cast<long long>(g.not_measured));
    r.set("spread_inputs", static_cast<long long>(g.spread_inputs));
    r.set("rounding_sensitive_inputs", static_cast<long long>(g.sensitive_inputs));
    r.set("max_spread_ulps", g.max_spread_ulps);
    r.set("oracle_findings", static_cast<long long>(g.oracle_findings));
    r.set("oracle_findings_sensitive", static_cast<long long>(g.sensitive_findings));
    r.set("outputs", static_cast<long long>(g.outputs));
    r.set("agree_within_1", pct(g.agree, g.outputs) / 100);
    r.set("overclaim", pct(g.overclaim, g.outputs) / 100);
    r.set("lossy_outputs", static_cast<long long>(g.lossy));
    r.set("lossy_agree_within_1", pct(g.lossy_agree, g.lossy) / 100);
    r.set("lossy_overclaim", pct(g.lossy_overclaim, g.lossy) / 100);
    rows.push_back(std::move(r));
  }
  json::Value out;
  out.set("groups", std::move(rows));
  out.set("seconds", s.seconds);
  return out;
}

std::string markdown_table(const BlackBoxSummary& s, const std::string& prefix) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1)
     << "| group | inputs | spread | sensitive | oracle findings (sensitive) | outputs | agree "
        "±1 | overclaim | lossy outputs | lossy agree ±1 | lossy overclaim |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& g : s.groups) {
    const bool detail = g.name.rfind("family ", 0) == 0 || g.name.rfind("impl ", 0) == 0 ||
                        g.name.rfind("lib-impl ", 0) == 0;
    if (prefix.empty() ? detail : g.name.rfind(prefix, 0) != 0) continue;
    os << "| " << g.name << " | " << g.inputs << " | " << pct(g.spread_inputs, g.inputs) << " % | "
       << pct(g.sensitive_inputs, g.inputs) << " % | " << g.oracle_findings << " ("
       << g.sensitive_findings << ") | " << g.outputs << " | " << pct(g.agree, g.outputs) << " % | "
       << pct(g.overclaim, g.outputs) << " % | " << g.lossy << " | " << pct(g.lossy_agree, g.lossy)
       << " % | " << pct(g.lossy_overclaim, g.lossy) << " % |\n";
  }
  return os.str();
}

}  // namespace stabfuzz::calibrate
