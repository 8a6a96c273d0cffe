// The inject loop: mutants until their first detection, reference targets for the whole budget.
#include "harness/campaign/inject.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "harness/corpus/replay.h"
#include "harness/pipeline/case.h"
#include "harness/pipeline/evaluate.h"
#include "injectors/fault_mutants.h"
#include "injectors/fault_plan.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

using pipeline::evaluate;
using pipeline::shrink_failing;
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

const std::string& regime_name(const Family& f, int64_t index) {
  return pipeline::case_regime(f, index).name;
}

// A target's inputs for inject: its dtypes in turn, the generator's inputs in the runner's
// order, the CESTAC stream replay uses (a saved regression input replays bit for bit).
CasePlan plan(const Target& t, const InjectOptions& o) {
  CasePlan p;
  p.dtypes = t.dtypes;
  p.generator = o.generator;
  p.seed = o.seed;
  p.budget_s = o.budget_s;
  p.cestac = o.cestac;
  return p;
}

std::string origin_of(const Target& t) {
  return t.id.find("/fault/") != std::string::npos ? "fault" : "formulation";
}

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

json::Value input_json(const Input& in) {
  json::Array args;
  for (const auto& a : in.args) {
    json::Value arg;
    json::Array shape, values;
    for (auto s : a.shape) shape.emplace_back(static_cast<long long>(s));
    for (double v : a.values) values.emplace_back(reports::hex_float(v));
    arg.set("shape", std::move(shape));
    arg.set("values", std::move(values));
    args.push_back(std::move(arg));
  }
  return args;
}

// Saves an entry when replay confirms its expectation; returns the path or "".
std::string save(const Registry& reg, const std::string& dir, const corpus::Entry& e) {
  const std::string path = corpus::regression_path(dir, e);
  if (!corpus::check(reg, e, path).ok) return "";
  corpus::write_file(path, e);
  return path;
}

std::string why_undetected(const MutantResult& r, bool has_reference) {
  std::ostringstream os;
  if (has_reference && r.changed_inputs == 0) {
    os << "no effect: the outputs equal the reference target's on all " << r.inputs << " inputs";
    return os.str();
  }
  if (has_reference)
    os << "changed the outputs of " << r.changed_inputs << " of " << r.inputs << " inputs, ";
  os << "worst error " << fmt(r.max_ratio, 3) << " x the tolerance (within it)";
  if (r.has_cestac) os << ", CESTAC silent";
  return os.str();
}

MutantResult run_mutant(const Registry& reg, const Family& f, const Target& t,
                        const Target* reference, const InjectOptions& o) {
  MutantResult r;
  r.id = t.id;
  r.family = f.name;
  r.origin = origin_of(t);
  r.expected_detection = t.injection ? t.injection->expected_detection : "";
  r.has_cestac = static_cast<bool>(t.cestac);
  const auto t0 = Clock::now();
  auto observe = [&](const CaseRun& c) {
    const Input& in = c.input;
    const CestacRequest& req = c.request;
    const Verdict& v = c.verdict;
    ++r.inputs;
    if (std::isfinite(v.max_ratio)) r.max_ratio = std::max(r.max_ratio, v.max_ratio);
    if (reference && !r.detected) {
      bool changed = true;  // a call that throws counts as a change
      try {
        changed = !pipeline::same_outputs(t.native(in), reference->native(in));
      } catch (const std::exception&) {
      }
      r.changed_inputs += changed;
    }
    if (v.oracle_fired && r.oracle_inputs < 0) r.oracle_inputs = r.inputs;
    if (v.cestac_fired && r.cestac_inputs < 0) r.cestac_inputs = r.inputs;
    if (!v.finding() || r.detected) return;
    r.detected = true;
    r.detector = v.oracle_fired && v.cestac_fired ? "both" : (v.oracle_fired ? "oracle" : "cestac");
    r.inputs_to_detect = r.inputs;
    r.seconds_to_detect = since(t0);
    r.dtype = c.dtype;
    // Uniform inputs keep only the regime's shapes and parameters: say so.
    r.regime =
        (o.generator == Generator::uniform ? "uniform, shape of " : "") + regime_name(f, c.index);
    r.case_index = c.index;
    r.original_n = in.total_size();
    // seconds_to_detect is taken before the shrink: shrinking is not part of the detection.
    auto [small, steps] = shrink_failing(f, t, in, req, o.shrink_evals, 0, reference);
    r.shrunk = small;
    r.shrink_steps = steps;
    const Verdict sv = evaluate(f, t, small, req);  // leaves the fault report of the shrunk input
    if (const fault::Report* fr = fault::last_report(t.id)) r.fault_site = fault::describe(*fr);
    if (!o.save_corpus.empty()) {
      corpus::Entry e{f.name,
                      t.id,
                      small,
                      corpus::Expect::detected,
                      o.seed,
                      "shrunk from case " + std::to_string(c.index) + " (" +
                          std::string(dtype_name(c.dtype)) + ", regime " + r.regime + ", " +
                          std::to_string(in.total_size()) + " values) of stabfuzz inject --seed " +
                          std::to_string(o.seed) + "; " + r.detector,
                      sv.kind};
      r.corpus_file = save(reg, o.save_corpus, e);
    }
  };
  run_cases(f, t, plan(t, o), [&](const CaseRun& c) {
    observe(c);
    // After the first detection, run on only until every detector this target has has fired.
    return !(r.detected && r.oracle_inputs >= 0 && (r.cestac_inputs >= 0 || !r.has_cestac));
  });
  r.seconds = since(t0);
  const std::string& e = r.expected_detection;
  r.expected_missed = r.has_cestac && (e == "cestac" || e == "both") && r.cestac_inputs < 0;
  if (!r.detected) r.why_undetected = why_undetected(r, reference != nullptr);
  return r;
}

StableResult run_stable(const Registry& reg, const Family& f, const Target& t,
                        const InjectOptions& o) {
  StableResult r;
  r.id = t.id;
  r.family = f.name;
  std::optional<Input> hardest;  // the small passing input closest to the tolerance
  double hardest_ratio = -1;
  const auto t0 = Clock::now();
  run_cases(f, t, plan(t, o), [&](const CaseRun& c) {
    const Input& in = c.input;
    const Verdict& v = c.verdict;
    ++r.inputs;
    if (std::isfinite(v.max_ratio)) r.max_ratio = std::max(r.max_ratio, v.max_ratio);
    if (v.finding()) {
      if (r.failing_inputs++ == 0)
        r.first_failure = std::string(dtype_name(c.dtype)) + " regime " + regime_name(f, c.index) +
                          " case " + std::to_string(c.index) + ": " + v.detectors();
    } else if (!v.undecidable && in.total_size() <= 64 && v.max_ratio > hardest_ratio) {
      hardest = in;
      hardest_ratio = v.max_ratio;
    }
    return true;
  });
  r.seconds = since(t0);
  if (!o.save_corpus.empty() && r.failing_inputs == 0 && hardest)
    r.corpus_file =
        save(reg, o.save_corpus,
             {f.name, t.id, *hardest, corpus::Expect::stable, o.seed,
              "the passing input closest to the tolerance (" + fmt(hardest_ratio, 3) +
                  " x) among small inputs of stabfuzz inject --seed " + std::to_string(o.seed),
              std::nullopt});
  return r;
}

// The targets an inject run covers: the mutants (or the fault matrix) and the reference targets.
struct InjectTargets {
  struct Planted {
    const Family* family;
    const Target* target;
    const Target* reference;  // the family's first reference target, or nullptr
  };
  std::vector<Planted> mutants;
  std::vector<std::pair<const Family*, const Target*>> stable;
  std::deque<Target> matrix;  // the fault matrix's targets (stable addresses)
};

void select_targets(const Registry& registry, const InjectOptions& o, InjectTargets& sel) {
  std::vector<const Family*> families;
  if (o.family == "all") {
    for (const auto& f : registry.families()) families.push_back(&f);
  } else if (const Family* f = registry.find_family(o.family)) {
    families.push_back(f);
  } else {
    throw InputError("unknown family '" + o.family + "' (stabfuzz --list shows the families)");
  }
  for (const Family* f : families) {
    const Target* ref = pipeline::reference_target(*f);
    for (const auto& t : f->targets) {
      const bool fault = t.id.find("/fault/") != std::string::npos;
      if (t.kind == TargetKind::injected && !(o.fault_matrix && fault))
        sel.mutants.push_back({f, &t, ref});
      if (t.kind == TargetKind::reference && o.references) sel.stable.emplace_back(f, &t);
    }
    if (o.fault_matrix)
      for (auto& t : injectors::fault_matrix(*f)) {
        sel.matrix.push_back(std::move(t));
        sel.mutants.push_back({f, &sel.matrix.back(), ref});
      }
  }
  if (sel.mutants.empty() && sel.stable.empty())
    throw InputError("no targets to run in " + o.family);
}

void print_mutant(std::ostream& progress, size_t i, size_t n, const MutantResult& m) {
  progress << "  [" << i + 1 << "/" << n << "] " << m.id << ": ";
  if (m.detected) {
    progress << "detected by " << m.detector << " at input " << m.inputs_to_detect << " ("
             << fmt(m.seconds_to_detect, 2) << " s, " << dtype_name(m.dtype) << ", " << m.regime
             << "), shrunk " << m.original_n << " -> " << m.shrunk->total_size() << " values";
    if (!m.fault_site.empty()) progress << "; fault at " << m.fault_site;
  } else {
    progress << "NOT detected in " << m.inputs << " inputs (" << fmt(m.seconds, 1)
             << " s): " << m.why_undetected;
  }
  progress << std::endl;
}

}  // namespace

InjectResult run_inject(const Registry& registry, const InjectOptions& o, std::ostream& progress) {
  InjectTargets sel;
  select_targets(registry, o, sel);
  if (!(o.budget_s > 0)) throw InputError("inject needs --budget-s S > 0 (seconds per target)");
  const auto& mutants = sel.mutants;
  const auto& stable = sel.stable;

  InjectResult res;
  res.generator = o.generator;
  res.seed = o.seed;
  res.budget_s = o.budget_s;
  progress << "stabfuzz inject " << o.family << ": seed " << o.seed << ", generator "
           << generator_name(o.generator) << ", budget " << o.budget_s << " s per target, "
           << mutants.size() << " mutants, " << stable.size() << " reference targets" << std::endl;
  int64_t detected = 0, by_cestac = 0, by_oracle = 0;
  for (size_t i = 0; i < mutants.size(); ++i) {
    MutantResult m =
        run_mutant(registry, *mutants[i].family, *mutants[i].target, mutants[i].reference, o);
    if (m.origin == "fault") m.registered = injectors::registered_fault_mutant(m.id);
    print_mutant(progress, i, mutants.size(), m);
    detected += m.detected;
    by_cestac += m.cestac_inputs >= 0;
    by_oracle += m.oracle_inputs >= 0;
    res.cestac_applicable += m.has_cestac;
    res.mutants.push_back(std::move(m));
  }
  for (size_t i = 0; i < stable.size(); ++i) {
    StableResult s = run_stable(registry, *stable[i].first, *stable[i].second, o);
    progress << "  [reference " << i + 1 << "/" << stable.size() << "] " << s.id << ": " << s.inputs
             << " inputs, " << s.failing_inputs << " failing";
    if (s.failing_inputs) progress << " (first: " << s.first_failure << ")";
    progress << std::endl;
    res.false_positive_targets += s.failing_inputs > 0;
    res.stable.push_back(std::move(s));
  }
  const double n = static_cast<double>(res.mutants.size());
  if (n > 0) {
    res.recall = detected / n;
    res.recall_cestac = by_cestac / n;
    res.recall_oracle = by_oracle / n;
  }
  return res;
}

namespace {

json::Value mutant_json(const MutantResult& m) {
  json::Value x;
  x.set("id", m.id);
  x.set("family", m.family);
  x.set("origin", m.origin);
  x.set("expected_detection", m.expected_detection);
  x.set("has_cestac", m.has_cestac);
  x.set("detected", m.detected);
  x.set("detector", m.detected ? json::Value(m.detector) : json::Value());
  x.set("inputs_to_detect",
        m.detected ? json::Value(static_cast<long long>(m.inputs_to_detect)) : json::Value());
  x.set("seconds_to_detect", m.detected ? json::Value(m.seconds_to_detect) : json::Value());
  x.set("inputs_to_detect_oracle", m.oracle_inputs >= 0
                                       ? json::Value(static_cast<long long>(m.oracle_inputs))
                                       : json::Value());
  x.set("inputs_to_detect_cestac", m.cestac_inputs >= 0
                                       ? json::Value(static_cast<long long>(m.cestac_inputs))
                                       : json::Value());
  x.set("inputs", static_cast<long long>(m.inputs));
  x.set("seconds", m.seconds);
  x.set("registered", m.registered);
  x.set("changed_inputs", static_cast<long long>(m.changed_inputs));
  x.set("max_error_over_tolerance",
        std::isfinite(m.max_ratio) ? json::Value(m.max_ratio) : json::Value());
  x.set("expected_detector_missed", m.expected_missed);
  if (!m.detected) x.set("why_undetected", m.why_undetected);
  if (m.detected) {
    x.set("dtype", dtype_name(m.dtype));
    x.set("regime", m.regime);
    x.set("case", static_cast<long long>(m.case_index));
    x.set("original_n", static_cast<unsigned long>(m.original_n));
    x.set("shrink_steps", static_cast<long long>(m.shrink_steps));
    x.set("shrunk_input", input_json(*m.shrunk));
    if (!m.fault_site.empty()) x.set("fault_site", m.fault_site);
    if (!m.corpus_file.empty()) x.set("corpus_file", m.corpus_file);
  }
  return x;
}

json::Value stable_json(const StableResult& s) {
  json::Value x;
  x.set("id", s.id);
  x.set("family", s.family);
  x.set("inputs", static_cast<long long>(s.inputs));
  x.set("failing_inputs", static_cast<long long>(s.failing_inputs));
  x.set("max_error_over_tolerance", s.max_ratio);
  x.set("seconds", s.seconds);
  if (s.failing_inputs) x.set("first_failure", s.first_failure);
  if (!s.corpus_file.empty()) x.set("corpus_file", s.corpus_file);
  return x;
}

// Formulation mutants vs arithmetic faults: recall of each.
json::Value by_origin_json(const std::vector<MutantResult>& mutants) {
  json::Value by_origin;
  for (const char* origin : {"formulation", "fault"}) {
    long long n = 0, hit = 0;
    for (const auto& m : mutants)
      if (m.origin == origin) ++n, hit += m.detected;
    json::Value o;
    o.set("mutants", n);
    o.set("detected", hit);
    o.set("recall",
          n ? json::Value(static_cast<double>(hit) / static_cast<double>(n)) : json::Value());
    by_origin.set(origin, std::move(o));
  }
  return by_origin;
}

}  // namespace

json::Value inject_json(const InjectResult& r) {
  json::Value j;
  j.set("generator", generator_name(r.generator));
  j.set("seed", static_cast<unsigned long long>(r.seed));
  j.set("budget_s", r.budget_s);
  json::Array ms;
  for (const auto& m : r.mutants) ms.push_back(mutant_json(m));
  j.set("mutants", std::move(ms));
  j.set("mutant_count", static_cast<long long>(r.mutants.size()));
  j.set("recall", r.recall);
  j.set("recall_cestac", r.recall_cestac);
  j.set("recall_oracle", r.recall_oracle);
  j.set("cestac_applicable", static_cast<long long>(r.cestac_applicable));
  j.set("by_origin", by_origin_json(r.mutants));
  json::Array st, fp;
  for (const auto& s : r.stable) {
    st.push_back(stable_json(s));
    if (s.failing_inputs) fp.emplace_back(s.id);
  }
  j.set("reference_targets", std::move(st));
  j.set("false_positive_targets", static_cast<long long>(r.false_positive_targets));
  j.set("false_positive_ids", std::move(fp));
  return j;
}

void print_inject_table(const InjectResult& r, std::ostream& os) {
  os << "generator: " << generator_name(r.generator) << ", seed " << r.seed << ", budget "
     << r.budget_s << " s per target\n";
  os << std::left << std::setw(44) << "mutant" << std::setw(12) << "origin" << std::setw(10)
     << "detected" << std::setw(8) << "by" << std::right << std::setw(8) << "inputs" << std::setw(9)
     << "seconds" << std::setw(8) << "oracle" << std::setw(8) << "cestac"
     << "  dtype regime\n";
  auto opt = [](int64_t v) { return v >= 0 ? std::to_string(v) : std::string("-"); };
  for (const auto& m : r.mutants) {
    os << std::left << std::setw(44) << m.id << std::setw(12) << m.origin << std::setw(10)
       << (m.detected ? "yes" : "NO") << std::setw(8) << (m.detected ? m.detector : "-")
       << std::right << std::setw(8)
       << (m.detected ? std::to_string(m.inputs_to_detect) : std::to_string(m.inputs))
       << std::setw(9) << fmt(m.detected ? m.seconds_to_detect : m.seconds, 2) << std::setw(8)
       << opt(m.oracle_inputs) << std::setw(8) << (m.has_cestac ? opt(m.cestac_inputs) : "n/a");
    if (m.detected) os << "  " << dtype_name(m.dtype) << " " << m.regime;
    if (!m.detected) os << "  " << m.why_undetected;
    os << "\n";
  }
  int64_t detected = 0;
  for (const auto& m : r.mutants) detected += m.detected;
  os << "recall: " << fmt(r.recall, 3) << " (" << detected << "/" << r.mutants.size()
     << "), oracle " << fmt(r.recall_oracle, 3) << ", cestac " << fmt(r.recall_cestac, 3) << " ("
     << r.cestac_applicable << " mutants have a CESTAC entry)\n";
  for (const char* origin : {"formulation", "fault"}) {
    int64_t n = 0, hit = 0;
    for (const auto& m : r.mutants)
      if (m.origin == origin) ++n, hit += m.detected;
    if (n) os << "  " << origin << " mutants: " << hit << "/" << n << " detected\n";
  }
  int64_t reg = 0, reg_hit = 0;
  for (const auto& m : r.mutants)
    if (!m.registered) ++reg, reg_hit += m.detected;
  if (reg)
    os << "  fault matrix pairs outside the registry: " << reg_hit << "/" << reg << " detected\n";
  for (const auto& m : r.mutants)
    if (m.expected_missed)
      os << "  expected CESTAC (" << m.expected_detection << ") never fired: " << m.id << "\n";
  os << "reference targets: " << r.stable.size()
     << ", false positives: " << r.false_positive_targets;
  for (const auto& s : r.stable)
    if (s.failing_inputs)
      os << "\n  " << s.id << ": " << s.failing_inputs << "/" << s.inputs << " failing, first "
         << s.first_failure;
  os << "\n";
}

}  // namespace stabfuzz::campaign
