// Run loop: inputs per implementation x dtype, verdicts, shrinking, findings and the summary.
#include "harness/campaign/runner.h"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>

#include "harness/campaign/isolate.h"
#include "harness/gen/input_gen.h"
#include "injectors/fault_plan.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

uint64_t hash_str(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

namespace {

using Clock = std::chrono::steady_clock;

uint64_t case_seed(const Family& f, DType d, uint64_t seed, int64_t index) {
  return cestac::mix64(cestac::mix64(seed ^ hash_str(f.name)) +
                       static_cast<uint64_t>(d) * 0x51ed27 +
                       static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL);
}

const Regime& case_regime(const Family& f, int64_t index) {
  return f.regimes[static_cast<size_t>(index) % f.regimes.size()];
}

rc::Shrinkable<Input> case_shrinkable(const Family& f, DType d, uint64_t seed, int64_t index) {
  const rc::Random random(case_seed(f, d, seed, index));
  return gen::regime_gen(f, case_regime(f, index), d)(random, rc::kNominalSize);
}

CestacRequest cestac_request(const Target& t, DType d, uint64_t seed, int64_t index,
                             const cestac::Config& config) {
  CestacRequest r;
  r.config = config;
  r.seed = seed;
  r.stream = hash_str(t.id) ^ (static_cast<uint64_t>(d) << 56) ^ static_cast<uint64_t>(index);
  return r;
}

json::Value hex_values(const std::vector<double>& v) {
  json::Array a;
  a.reserve(v.size());
  for (double x : v) a.emplace_back(reports::hex_float(x));
  return a;
}

// The exact input of a finding: tensors as shapes and hex floats, and its scalar parameters (eps,
// target, ...), which replaying it needs.
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

}  // namespace

json::Value finding_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Verdict& v,
                         size_t original_n, int64_t shrink_steps, const std::string& engine,
                         const std::string& replay) {
  json::Value j;
  j.set("target", f.name);
  j.set("impl", t.id);
  j.set("kind", target_kind_name(t.kind));
  j.set("dtype", dtype_name(key.dtype));
  j.set("seed", static_cast<unsigned long long>(key.seed));
  j.set("case", static_cast<long long>(key.index));
  j.set("engine", engine);
  j.set("regime", regime);
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

namespace {
// A crash, timeout or exception: no verdict, the exact input and the replay line (not shrunk:
// each shrink step could cost a timeout).
json::Value failure_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Outcome& o,
                         const RunOptions& opts) {
  json::Value j;
  j.set("target", f.name);
  j.set("impl", t.id);
  j.set("kind", target_kind_name(t.kind));
  j.set("dtype", dtype_name(key.dtype));
  j.set("seed", static_cast<unsigned long long>(key.seed));
  j.set("case", static_cast<long long>(key.index));
  j.set("engine", "property");
  j.set("regime", regime);
  j.set("detectors", failure_name(o.failure));
  j.set("severity", severity_name(Severity::critical));
  j.set("failure", failure_name(o.failure));
  j.set("failure_detail", o.detail);
  j.set("n", static_cast<unsigned long>(in.total_size()));
  j.set("original_n", static_cast<unsigned long>(in.total_size()));
  j.set("shrink_steps", 0LL);
  set_input_json(j, in);
  j.set("replay", opts.replay_command ? opts.replay_command(key) : "");
  return j;
}

// Greedy shrink: take the first simpler input that is still a finding, until none is or the
// evaluation budget is spent.
std::pair<rc::Shrinkable<Input>, int64_t> shrink(const std::function<bool(const Input&)>& fails,
                                                 rc::Shrinkable<Input> cur, int64_t budget,
                                                 double max_seconds = 0) {
  int64_t steps = 0, evals = 0;
  bool progress = true;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(max_seconds > 0 ? max_seconds : 0));
  auto out_of_time = [&] { return max_seconds > 0 && Clock::now() >= deadline; };
  while (progress && evals < budget && !out_of_time()) {
    progress = false;
    auto seq = cur.shrinks();
    while (auto child = seq.next()) {
      if (++evals > budget || out_of_time()) break;
      const Input cand = child->value();
      if (fails(cand)) {
        cur = std::move(*child);
        ++steps;
        progress = true;
        break;
      }
    }
  }
  return {std::move(cur), steps};
}

void make_dirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
        throw InputError("cannot create directory " + cur);
    }
    if (i < path.size()) cur += path[i];
  }
}

// Progress of a long run: on a terminal one status line rewritten in place a few times a second,
// otherwise a plain line every 10 s (logs and CI). Either shows inputs, findings and time left.
class Progress {
 public:
  Progress(const RunOptions& opts, size_t pairs, std::ostream& os)
      : opts_(opts),
        pairs_(pairs),
        os_(os),
        start_(Clock::now()),
        next_(start_ +
              (opts.progress_tty ? std::chrono::milliseconds(250) : std::chrono::seconds(10))) {}

  void tick(Clock::time_point now, const std::string& impl, DType d, size_t pair,
            const ImplResult& r) {
    if (now < next_ || opts_.only_case >= 0) return;
    next_ = now + (opts_.progress_tty ? std::chrono::milliseconds(250) : std::chrono::seconds(10));
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const int64_t done = done_inputs_ + r.inputs;
    std::string left = "?";
    if (opts_.budget_s > 0) {
      left = std::to_string(static_cast<int>(std::max(0.0, opts_.budget_s - elapsed))) + " s";
    } else if (opts_.runs > 0 && done > 0) {
      const double total = double(opts_.runs) * double(pairs_);
      left = "~" +
             std::to_string(static_cast<int>(elapsed / double(done) * (total - double(done)))) +
             " s";
    }
    std::ostringstream line;
    line << "pair " << pair + 1 << "/" << pairs_ << " " << impl << " " << dtype_name(d) << ": "
         << done << " inputs";
    if (opts_.runs > 0) line << " of " << opts_.runs * static_cast<int64_t>(pairs_);
    line << ", " << findings_ + r.findings << " findings, " << static_cast<int>(elapsed)
         << " s elapsed, " << left << " left";
    if (opts_.progress_tty) {
      os_ << "\r\033[K" << line.str() << std::flush;  // rewrite the line in place
      dirty_ = true;
    } else {
      os_ << "  " << line.str() << std::endl;
    }
  }

  // Clears the status line before the pair's summary line is printed.
  void finish_pair(const ImplResult& r) {
    done_inputs_ += r.inputs;
    findings_ += r.findings;
    if (dirty_) os_ << "\r\033[K" << std::flush;
    dirty_ = false;
  }

 private:
  const RunOptions& opts_;
  size_t pairs_;
  std::ostream& os_;
  Clock::time_point start_, next_;
  int64_t done_inputs_ = 0, findings_ = 0;
  bool dirty_ = false;
};

}  // namespace

Verdict evaluate(const Family& family, const Target& target, const Input& in,
                 const CestacRequest& req) {
  const std::vector<double> out = target.native(in);
  const OracleResult oracle = family.oracle(in);
  if (target.cestac) {
    const CestacOutput c = target.cestac(in, req);
    return judge(family, in, out, oracle, &c);
  }
  return judge(family, in, out, oracle, nullptr);
}

std::pair<Input, int64_t> shrink_failing(const Family& family, const Target& target,
                                         const Input& in, const CestacRequest& req, int64_t budget,
                                         double max_seconds) {
  const Family* fam = &family;
  auto sh =
      rc::shrinkable::shrinkRecur(in, [fam](const Input& x) { return gen::shrink_input(*fam, x); });
  auto fails = [&](const Input& x) { return evaluate(family, target, x, req).finding(); };
  auto [small, steps] = shrink(fails, std::move(sh), budget, max_seconds);
  return {small.value(), steps};
}

Input make_case(const Family& family, DType d, uint64_t seed, int64_t index) {
  return case_shrinkable(family, d, seed, index).value();
}

json::Value impl_result_json(const ImplResult& r) {
  json::Value j;
  j.set("family", r.family);
  j.set("impl", r.impl);
  j.set("kind", target_kind_name(r.kind));
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
  return j;
}

RunResult run_family(const Registry& registry, const RunOptions& opts, std::ostream& progress) {
  std::vector<const Family*> families;
  if (opts.family == "all") {
    for (const auto& f : registry.families()) families.push_back(&f);
  } else if (const Family* f = registry.find_family(opts.family)) {
    families.push_back(f);
  } else {
    throw InputError("unknown target '" + opts.family + "' (stabfuzz --list shows the families)");
  }
  struct Work {
    const Family* family;
    const Target* target;
    DType dtype;
  };
  std::vector<Work> work;
  bool impl_found = opts.impl.empty();
  for (const Family* fam : families) {
    for (const auto& t : fam->targets) {
      if (!opts.impl.empty() && t.id != opts.impl) continue;
      impl_found = true;
      for (DType d : t.dtypes)
        if (opts.dtypes.empty() ||
            std::find(opts.dtypes.begin(), opts.dtypes.end(), d) != opts.dtypes.end())
          work.push_back({fam, &t, d});
    }
  }
  // A target this build knows but cannot run here (no GPU, library missing): say why.
  for (const auto& u : registry.unavailable())
    if (!impl_found && u.id == opts.impl)
      throw InputError("implementation '" + opts.impl + "' is unavailable here: " + u.reason);
  if (!impl_found)
    throw InputError("unknown implementation '" + opts.impl + "' of " + opts.family +
                     " (stabfuzz --list shows them)");
  if (work.empty())
    throw InputError("no implementation of " + opts.family + " supports the requested dtype");
  if (opts.runs <= 0 && opts.budget_s <= 0) throw InputError("give --runs N or --budget-s S");

  progress << "stabfuzz " << opts.family << ": seed " << opts.seed;
  if (opts.only_case >= 0)
    progress << ", case " << opts.only_case;
  else if (opts.runs > 0)
    progress << ", " << opts.runs << " inputs per implementation and dtype";
  if (opts.budget_s > 0) progress << ", budget " << opts.budget_s << " s";
  progress << ", " << work.size() << " implementation x dtype pairs" << std::endl;

  make_dirs(opts.out_dir);
  RunResult res;
  if (opts.move_previous) res.previous_run = reports::move_previous_run(opts.out_dir);
  if (!res.previous_run.empty())  // on stderr even with --quiet: files moved are worth a line
    std::cerr << "stabfuzz: " << opts.out_dir << " held an earlier run; moved its files to "
              << res.previous_run << std::endl;
  res.findings_path = opts.out_dir + "/findings.jsonl";
  res.summary_path = opts.out_dir + "/summary.json";
  reports::FindingsWriter writer(res.findings_path);

  for (const auto& w : work)  // library modules load before the clock starts
    if (w.target->prepare) w.target->prepare();
  const auto start = Clock::now();
  Progress status(opts, work.size(), progress);
  for (size_t w = 0; w < work.size(); ++w) {
    const Family* fam = work[w].family;
    const Target& t = *work[w].target;
    const DType d = work[w].dtype;
    ImplResult r;
    r.family = fam->name;
    r.impl = t.id;
    r.kind = t.kind;
    r.dtype = d;
    r.has_cestac = static_cast<bool>(t.cestac);
    r.min_digits = dtype_max_digits(d);
    const auto t0 = Clock::now();
    // Each implementation x dtype gets an equal share of what is left of the budget.
    const double share = opts.budget_s > 0
                             ? (opts.budget_s - std::chrono::duration<double>(t0 - start).count()) /
                                   double(work.size() - w)
                             : 0;
    // Isolated targets run in a fork server of their own for this pair.
    std::optional<Isolator> iso;
    if (t.isolated) iso.emplace(t, opts.timeout_ms);
    const int64_t first = opts.only_case >= 0 ? opts.only_case : 0;
    const int64_t last =
        opts.only_case >= 0 ? opts.only_case + 1 : (opts.runs > 0 ? opts.runs : INT64_MAX);
    for (int64_t k = first; k < last; ++k) {
      const auto now = Clock::now();
      const double elapsed = std::chrono::duration<double>(now - t0).count();
      // Every pair runs at least one input, even when an earlier pair overran its share.
      if (opts.budget_s > 0 && opts.only_case < 0 && k > first && elapsed >= share) break;
      status.tick(now, t.id, d, w, r);
      auto sh = case_shrinkable(*fam, d, opts.seed, k);
      const Input in = sh.value();
      if (auto bad = fam->validate(in))  // a regime that breaks its own contract is a harness bug
        throw std::logic_error("regime '" + case_regime(*fam, k).name + "' of " + fam->name +
                               " generated an invalid " + std::string(dtype_name(d)) +
                               " input: " + *bad);
      const CestacRequest req = cestac_request(t, d, opts.seed, k, opts.cestac);
      const Outcome o = evaluate_outcome(*fam, t, in, req, iso ? &*iso : nullptr);
      const Verdict& v = o.verdict;
      ++r.inputs;
      ++r.regime_inputs[case_regime(*fam, k).name];
      if (o.failure != Failure::none) {  // nothing to judge: the input itself is the finding
        ++r.failing_inputs;
        ++(o.failure == Failure::crash     ? r.crashes
           : o.failure == Failure::timeout ? r.timeouts
                                           : r.exceptions);
        if (r.findings >= opts.max_findings) continue;
        const CaseKey key{fam->name, t.id, d, opts.seed, k};
        writer.append(failure_json(*fam, t, key, case_regime(*fam, k).name, in, o, opts));
        ++r.findings;
        continue;
      }
      if (v.undecidable) ++r.undecidable;
      r.max_ulp = std::max(r.max_ulp, v.max_ulp);
      r.max_ratio = std::max(r.max_ratio, v.max_ratio);
      if (v.has_cestac) r.min_digits = std::min(r.min_digits, v.min_digits);
      if (!v.finding()) continue;
      ++r.failing_inputs;
      r.oracle_detections += v.oracle_fired;
      r.cestac_detections += v.cestac_fired;
      if (r.findings >= opts.max_findings) continue;
      // A candidate that crashes or hangs while shrinking is not the numerical failure shrunk.
      auto fails = [&](const Input& x) {
        const Outcome c = evaluate_outcome(*fam, t, x, req, iso ? &*iso : nullptr);
        return c.failure == Failure::none && c.verdict.finding();
      };
      // With a time budget, one finding's shrinking may take the pair's share (at least 0.5 s).
      auto [small, steps] =
          shrink(fails, sh, opts.shrink_evals, opts.budget_s > 0 ? std::max(0.5, share) : 0);
      const Input sin = small.value();
      const Outcome so = evaluate_outcome(*fam, t, sin, req, iso ? &*iso : nullptr);
      const Verdict sv = so.failure == Failure::none ? so.verdict : v;
      const CaseKey key{fam->name, t.id, d, opts.seed, k};
      writer.append(finding_json(*fam, t, key, case_regime(*fam, k).name, sin, sv, in.total_size(),
                                 steps, "property",
                                 opts.replay_command ? opts.replay_command(key) : ""));
      ++r.findings;
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    status.finish_pair(r);
    progress << "  " << t.id << " " << dtype_name(d) << ": " << r.inputs << " inputs, "
             << r.failing_inputs << " failing, " << r.findings << " findings recorded ("
             << static_cast<int>(r.seconds * 10) / 10.0 << " s)";
    if (r.crashes + r.timeouts + r.exceptions > 0)
      progress << "; " << r.crashes << " crashed, " << r.timeouts << " timed out, " << r.exceptions
               << " threw";
    progress << std::endl;
    if (r.findings > 0 && t.kind != TargetKind::injected) res.exit_code = 1;
    res.results.push_back(r);
  }

  json::Value summary;
  summary.set("target", opts.family);
  summary.set("seed", static_cast<unsigned long long>(opts.seed));
  if (opts.only_case >= 0) summary.set("case", static_cast<long long>(opts.only_case));
  summary.set("seconds", std::chrono::duration<double>(Clock::now() - start).count());
  json::Array results;
  for (const auto& r : res.results) results.push_back(impl_result_json(r));
  summary.set("results", std::move(results));
  summary.set("exit_code", res.exit_code);
  reports::write_json_atomically(res.summary_path, summary);
  if (opts.write_reports) res.report_paths = reports::write_reports(opts.out_dir, progress);
  return res;
}

}  // namespace stabfuzz::campaign
