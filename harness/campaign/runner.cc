// Run loop: inputs per implementation x dtype, verdicts, shrinking, findings and the summary.
#include "harness/campaign/runner.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>

#include "harness/campaign/cases.h"
#include "harness/campaign/isolate.h"
#include "harness/campaign/status_line.h"
#include "harness/core/console.h"
#include "harness/core/select.h"
#include "harness/pipeline/evaluate.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

using pipeline::case_regime;
using pipeline::case_shrinkable;
using pipeline::evaluate;
using pipeline::finding_json;
using pipeline::impl_result_json;
using pipeline::set_input_json;
using pipeline::shrink;
namespace blackbox = pipeline::blackbox;

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

namespace {
// A crash, timeout or exception: no verdict, the exact input and the replay line (not shrunk:
// each shrink step could cost a timeout).
json::Value failure_json(const Family& f, const Target& t, const CaseKey& key,
                         const std::string& regime, const Input& in, const Outcome& o,
                         const RunOptions& opts) {
  json::Value j = pipeline::case_json(f, t, key, "property", regime);
  j.set("kind", finding_kind_name(o.kind()));
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

void make_dirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
        throw InputError("cannot create directory " + cur + ": " + std::strerror(errno));
    }
    if (i < path.size()) cur += path[i];
  }
}

// Progress of a long run: on a terminal one status line rewritten in place a few times a second,
// otherwise a plain line every 10 s (logs and CI). Either shows inputs, findings and time left,
// in at most 100 columns (a compact form where the terminal is narrower or the line longer).
class Progress {
 public:
  Progress(const RunOptions& opts, size_t pairs, std::ostream& os)
      : opts_(opts),
        pairs_(pairs),
        line_(os, opts.progress_tty),
        start_(Clock::now()),
        next_(start_ + period()) {}

  void tick(Clock::time_point now, const std::string& impl, DType d, size_t pair,
            const ImplResult& r) {
    if (now < next_ || opts_.only_case >= 0) return;
    next_ = now + period();
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
    const std::string indent = opts_.progress_tty ? "" : "  ";
    const std::string head =
        indent + "pair " + std::to_string(pair + 1) + "/" + std::to_string(pairs_) + " ";
    const std::string findings = std::to_string(findings_ + r.findings) + " findings, ";
    std::ostringstream full;
    full << head << impl << " " << dtype_name(d) << ": " << done << " inputs";
    if (opts_.runs > 0) full << " of " << opts_.runs * static_cast<int64_t>(pairs_);
    full << ", " << findings << static_cast<int>(elapsed) << " s elapsed, " << left << " left";
    line_.show(full.str(), head + std::string(dtype_name(d)) + ": " + std::to_string(done) +
                               " inputs, " + findings + left + " left");
  }

  // Clears the status line before the pair's summary line is printed.
  void finish_pair(const ImplResult& r) {
    done_inputs_ += r.inputs;
    findings_ += r.findings;
    line_.clear();
  }

 private:
  Clock::duration period() const {
    return opts_.progress_tty ? Clock::duration(std::chrono::milliseconds(250))
                              : Clock::duration(std::chrono::seconds(10));
  }

  const RunOptions& opts_;
  size_t pairs_;
  StatusLine line_;
  Clock::time_point start_, next_;
  int64_t done_inputs_ = 0, findings_ = 0;
};

// One implementation x dtype pair of a run.
struct Work {
  const Family* family;
  const Target* target;
  DType dtype;
};

// The pairs a run covers, in registry order; a usage error for an unknown selector or
// implementation, or one that is unavailable here.
std::vector<Work> select_work(const Registry& registry, const RunOptions& opts) {
  const select::Selection sel = select::select(registry, opts.family, "--target");
  std::vector<Work> work;
  bool impl_found = opts.impl.empty();
  for (const auto& [fam, t] : sel.targets) {
    if (!opts.impl.empty() && t->id != opts.impl) continue;
    impl_found = true;
    for (DType d : t->dtypes)
      if (opts.dtypes.empty() ||
          std::find(opts.dtypes.begin(), opts.dtypes.end(), d) != opts.dtypes.end())
        work.push_back({fam, t, d});
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
  return work;
}

// The inputs of one pair: generate, evaluate (isolated when the target asks for it), count, and
// shrink and record up to max_findings findings. `share` > 0 is the pair's time budget.
class PairRun {
 public:
  PairRun(const Work& w, const RunOptions& opts, pipeline::Recorder& rec)
      : fam_(*w.family), t_(*w.target), d_(w.dtype), opts_(opts), rec_(rec) {
    r_.family = fam_.name;
    r_.impl = t_.id;
    r_.kind = t_.kind;
    r_.dtype = d_;
    r_.has_cestac = static_cast<bool>(t_.cestac);
    r_.min_digits = dtype_max_digits(d_);
    if (t_.isolated) iso_.emplace(t_, opts.timeout_ms);  // a fork server of its own
    if (t_.kind == TargetKind::library && opts.blackbox) r_.blackbox.emplace();
  }

  // t0: when the pair started (before its fork server, if any, was started).
  ImplResult run(Clock::time_point t0, double share, Progress& status, size_t pair) {
    CasePlan plan;
    plan.dtypes = {d_};
    plan.seed = opts_.seed;
    plan.cestac = opts_.cestac;
    plan.stream_per_case = true;
    plan.isolator = iso_ ? &*iso_ : nullptr;
    plan.start = t0;
    if (opts_.only_case >= 0) {
      plan.first = opts_.only_case;
      plan.last = opts_.only_case + 1;
    } else {
      if (opts_.runs > 0) plan.last = opts_.runs;
      // Every pair runs at least one input, even when an earlier pair overran its share.
      if (opts_.budget_s > 0) plan.budget_s = share;
    }
    run_cases(fam_, t_, plan, [&](const CaseRun& c) {
      one_case(c, share);
      status.tick(Clock::now(), t_.id, d_, pair, r_);
      return true;
    });
    r_.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r_;
  }

 private:
  Outcome outcome(const Input& in, const CestacRequest& req) {
    return evaluate_outcome(fam_, t_, in, req, iso_ ? &*iso_ : nullptr);
  }

  // A library target's digits from the four rounding modes and its nondeterminism (blackbox.h);
  // an isolated one is not measured: its calls run in the fork server's child.
  std::optional<blackbox::Result> black_box(const Input& x) const {
    if (!r_.blackbox) return std::nullopt;
    if (t_.isolated) return blackbox::not_measured("not measured (isolated)");
    blackbox::Options o;
    o.sensitive_ulps = 2 * fam_.tolerance_ulps(d_, x.total_size());
    return blackbox::measure(t_.native, x, o);
  }

  void one_case(const CaseRun& c, double share) {
    const int64_t k = c.index;
    const Input& in = c.input;
    const std::string& regime = case_regime(fam_, k).name;
    const CestacRequest& req = c.request;
    Outcome o = c.outcome;
    // A library target's extra calls (rounding modes, repeats, thread counts); results that
    // differ between calls are a finding of their own when nothing else fired.
    const std::optional<blackbox::Result> bb =
        o.failure == Failure::none ? black_box(in) : std::nullopt;
    if (bb && bb->nondeterminism != blackbox::Nondeterminism::none && !o.verdict.finding()) {
      o.verdict.nondeterministic = true;
      o.verdict.kind = FindingKind::nondeterminism;
      o.verdict.kind_detail = "results differ between calls: " +
                              std::string(blackbox::nondeterminism_name(bb->nondeterminism));
    }
    const Verdict& v = o.verdict;
    ++r_.inputs;
    ++r_.regime_inputs[regime];
    const CaseKey key{fam_.name, t_.id, d_, opts_.seed, k};
    if (o.finding()) ++r_.failing_by_kind[static_cast<size_t>(o.kind())];
    if (o.failure != Failure::none) {  // nothing to judge: the input itself is the finding
      ++r_.failing_inputs;
      ++(o.failure == Failure::timeout     ? r_.timeouts
         : o.failure == Failure::exception ? r_.exceptions
                                           : r_.crashes);  // a signal, an exit, output on stdout
      if (r_.findings >= opts_.max_findings) return;
      rec_.finding(failure_json(fam_, t_, key, regime, in, o, opts_));
      ++r_.findings;
      return;
    }
    if (bb) r_.blackbox->add(*bb);
    if (v.undecidable) ++r_.undecidable;
    r_.max_ulp = std::max(r_.max_ulp, v.max_ulp);
    r_.max_ratio = std::max(r_.max_ratio, v.max_ratio);
    if (v.has_cestac) r_.min_digits = std::min(r_.min_digits, v.min_digits);
    if (!v.finding()) return;
    ++r_.failing_inputs;
    r_.oracle_detections += v.oracle_fired;
    r_.cestac_detections += v.cestac_fired;
    if (r_.findings >= opts_.max_findings) return;
    // A candidate that crashes or hangs while shrinking is not the numerical failure shrunk, nor
    // is one whose failure is of another kind (an accuracy finding shrunk into an underflow).
    auto fails = [&](const Input& x) {
      const Outcome c = outcome(x, req);
      return c.failure == Failure::none && c.verdict.finding() && c.verdict.kind == v.kind;
    };
    // With a time budget, one finding's shrinking may take the pair's share (at least 0.5 s).
    // Nondeterminism is seen by the extra calls only: such an input is recorded as it is.
    const auto sh = case_shrinkable(fam_, d_, opts_.seed, k);
    auto [small, steps] =
        v.nondeterministic
            ? std::pair{sh, int64_t{0}}
            : shrink(fails, sh, opts_.shrink_evals, opts_.budget_s > 0 ? std::max(0.5, share) : 0);
    const Input sin = small.value();
    const Outcome so = outcome(sin, req);
    const Verdict sv = so.failure == Failure::none && steps > 0 ? so.verdict : v;
    json::Value fj =
        finding_json(fam_, t_, key, regime, sin, sv, in.total_size(), steps, "property",
                     opts_.replay_command ? opts_.replay_command(key) : "");
    if (auto sbb = steps == 0 ? bb : black_box(sin))
      fj.set("blackbox", blackbox::result_json(*sbb, sv.worst));
    rec_.finding(fj);
    ++r_.findings;
  }

  const Family& fam_;
  const Target& t_;
  const DType d_;
  const RunOptions& opts_;
  pipeline::Recorder& rec_;
  std::optional<Isolator> iso_;
  ImplResult r_;
};

// The pair's line (and its black-box line), wrapped at 100 columns.
void print_pair(std::ostream& progress, const ImplResult& r) {
  std::ostringstream line;
  line << r.impl << " " << dtype_name(r.dtype) << ": " << r.inputs << " inputs, "
       << r.failing_inputs << " failing, " << r.findings << " findings recorded ("
       << static_cast<int>(r.seconds * 10) / 10.0 << " s)";
  if (r.crashes + r.timeouts + r.exceptions > 0)
    line << "; " << r.crashes << " crashed, " << r.timeouts << " timed out, " << r.exceptions
         << " threw";
  wrap(progress, "  ", line.str(), 4);
  if (r.blackbox) wrap(progress, "    black box: ", blackbox::totals_line(*r.blackbox), 6);
  progress << std::flush;
}

void write_summary(const RunOptions& opts, const RunResult& res, double seconds,
                   pipeline::Recorder& rec) {
  json::Value summary;
  summary.set("target", opts.family);
  summary.set("seed", static_cast<unsigned long long>(opts.seed));
  if (opts.only_case >= 0) summary.set("case", static_cast<long long>(opts.only_case));
  summary.set("seconds", seconds);
  json::Array results;
  for (const auto& r : res.results) results.push_back(impl_result_json(r, opts.fail_on));
  summary.set("results", std::move(results));
  summary.set("fail_on", opts.fail_on.str());
  summary.set("exit_code", res.exit_code);
  rec.summary(summary);
}

}  // namespace

RunResult run_family(const Registry& registry, const RunOptions& opts, std::ostream& progress) {
  const std::vector<Work> work = select_work(registry, opts);
  make_dirs(opts.out_dir);  // before the banner: an output directory it cannot make is one line
  std::ostringstream banner;
  banner << "seed " << opts.seed;
  if (opts.only_case >= 0)
    banner << ", case " << opts.only_case;
  else if (opts.runs > 0)
    banner << ", " << opts.runs << " inputs per implementation and dtype";
  if (opts.budget_s > 0) banner << ", budget " << opts.budget_s << " s";
  banner << ", " << work.size() << " implementation x dtype pairs";
  wrap(progress, "stabfuzz " + opts.family + ": ", banner.str(), 2);
  progress << std::flush;

  RunResult res;
  res.fail_on = opts.fail_on;
  if (opts.move_previous) res.previous_run = reports::move_previous_run(opts.out_dir);
  if (!res.previous_run.empty())  // on stderr even with --quiet: files moved are worth a line
    std::cerr << "stabfuzz: " << opts.out_dir << " held an earlier run; moved its files to "
              << res.previous_run << std::endl;
  pipeline::Recorder rec(opts.out_dir);
  res.findings_path = rec.findings_path();
  res.summary_path = rec.summary_path();

  for (const auto& w : work)  // library modules load before the clock starts
    if (w.target->prepare) w.target->prepare();
  const auto start = Clock::now();
  Progress status(opts, work.size(), progress);
  for (size_t w = 0; w < work.size(); ++w) {
    // Each implementation x dtype gets an equal share of what is left of the budget.
    const auto t0 = Clock::now();
    const double share = opts.budget_s > 0
                             ? (opts.budget_s - std::chrono::duration<double>(t0 - start).count()) /
                                   double(work.size() - w)
                             : 0;
    const ImplResult r = PairRun(work[w], opts, rec).run(t0, share, status, w);
    status.finish_pair(r);
    print_pair(progress, r);
    if (r.kind != TargetKind::injected && r.fails(opts.fail_on)) res.exit_code = 1;
    res.results.push_back(r);
  }
  write_summary(opts, res, std::chrono::duration<double>(Clock::now() - start).count(), rec);
  if (opts.write_reports) res.report_paths = reports::write_reports(rec.run(), opts.out_dir);
  return res;
}

}  // namespace stabfuzz::campaign
