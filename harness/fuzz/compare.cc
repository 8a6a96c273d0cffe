// Engine comparison: property, fuzz (error-guided and coverage-only) and uniform, per mutant.
#include "harness/fuzz/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "harness/campaign/cases.h"
#include "harness/pipeline/case.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

// In process: the runner's inputs (regimes) or the uniform baseline, dtypes in turn as inject does,
// with the CESTAC stream inject and replay use.
Trial in_process(const Family& f, const Target& t, campaign::Generator g, uint64_t seed,
                 const CompareOptions& o) {
  Trial tr;
  if (o.budget_inputs <= 0) return tr;
  const auto t0 = Clock::now();
  campaign::CasePlan plan;
  plan.dtypes = t.dtypes;
  plan.generator = g;
  plan.seed = seed;
  plan.budget_s = o.time_cap_s;
  plan.last = o.budget_inputs;
  campaign::run_cases(f, t, plan, [&](const campaign::CaseRun& c) {
    tr.inputs = c.k + 1;
    tr.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    tr.detected = c.verdict.finding();
    return !tr.detected;
  });
  return tr;
}

// A `stabfuzz fuzz` child: its summary gives the first finding's execution and time.
Trial fuzz_child(const Family& f, const Target& t, const std::string& feedback,
                 const std::string& generator, uint64_t seed, const CompareOptions& o) {
  const std::string dir =
      o.work_dir + "/" + t.id + "/" + feedback + "-" + generator + "-s" + std::to_string(seed);
  std::filesystem::create_directories(dir);
  std::ostringstream cmd;
  cmd << "'" << o.binary << "' fuzz --target " << f.name << " --impl " << t.id << " --seed " << seed
      << " --feedback " << feedback << " --generator " << generator << " --runs " << o.budget_inputs
      << " --time " << o.time_cap_s << " --shrink-evals 0 --quiet --out '" << dir << "' > '" << dir
      << "/stdout.txt' 2> '" << dir << "/stderr.txt'";
  const int status = std::system(cmd.str().c_str());
  (void)status;
  Trial tr;
  const std::string text = reports::read_text(dir + "/summary.json");
  if (text.empty()) throw std::runtime_error("fuzz child wrote no summary: " + dir + "/stderr.txt");
  const json::Value s = json::parse(text);
  const auto first = json::integer<int64_t>(s.at("first_finding_execution"));
  tr.detected = first > 0;
  tr.inputs = tr.detected ? first : json::integer<int64_t>(s.at("executions"));
  tr.seconds =
      tr.detected ? s.at("first_finding_seconds").as_number() : s.at("seconds").as_number();
  return tr;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return INFINITY;
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string cell(const std::vector<Trial>& t) {
  int hits = 0;
  for (const auto& x : t) hits += x.detected;
  const double mi = median_inputs(t);
  std::ostringstream os;
  if (std::isinf(mi)) {
    os << "miss";
  } else {
    os << mi << " in / " << std::fixed << std::setprecision(2) << median_seconds(t) << " s";
  }
  os << " (" << hits << "/" << t.size() << ")";
  return os.str();
}

}  // namespace

std::vector<std::string> default_compare_mutants() {
  // Overflow and cancellation bugs: nine the uniform baseline misses (measured, seeds 1-5, 1000
  // inputs), three it finds (logsumexp, var, layer_norm).
  return {"softmax/injected/no_max_subtract",
          "log_softmax/injected/log_of_softmax",
          "softplus/injected/log_one_plus_exp",
          "sigmoid/injected/exp_over_one_plus_exp",
          "log_sigmoid/injected/neg_log_one_plus_exp",
          "cross_entropy/injected/neg_log_softmax",
          "logaddexp/injected/naive",
          "attention/injected/no_max_shift",
          "kl_div/injected/ratio_of_exp",
          "logsumexp/injected/no_max_shift",
          "var/injected/naive_one_pass",
          "layer_norm/injected/one_pass_variance"};
}

double median_inputs(const std::vector<Trial>& t) {
  std::vector<double> v;
  for (const auto& x : t) v.push_back(x.detected ? double(x.inputs) : INFINITY);
  return median(v);
}

double median_seconds(const std::vector<Trial>& t) {
  std::vector<double> v;
  for (const auto& x : t) v.push_back(x.detected ? x.seconds : INFINITY);
  return median(v);
}

std::vector<MutantRow> run_compare(const Registry& registry, const CompareOptions& o,
                                   std::ostream& progress) {
  std::vector<MutantRow> rows;
  const auto ids = o.mutants.empty() ? default_compare_mutants() : o.mutants;
  for (const auto& id : ids) {
    const auto [f, t] = registry.find_target(id);
    if (!t) throw InputError("unknown implementation '" + id + "' (stabfuzz --list shows them)");
    MutantRow row;
    row.id = id;
    for (const char* engine : kEngines) {
      std::vector<Trial> trials;
      for (int s = 0; s < o.seeds; ++s) {
        const uint64_t seed = o.seed + static_cast<uint64_t>(s);
        const std::string e = engine;
        if (e == "property")
          trials.push_back(in_process(*f, *t, campaign::Generator::regimes, seed, o));
        else if (e == "uniform")
          trials.push_back(in_process(*f, *t, campaign::Generator::uniform, seed, o));
        else
          trials.push_back(
              fuzz_child(*f, *t, e.find("error") != std::string::npos ? "error" : "coverage",
                         e.find("uniform") != std::string::npos ? "uniform" : "regimes", seed, o));
      }
      progress << "  " << id << " " << engine << ": " << cell(trials) << std::endl;
      row.trials.push_back(std::move(trials));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string compare_markdown(const std::vector<MutantRow>& rows, const CompareOptions& o) {
  std::ostringstream os;
  os << "Inputs / seconds to first detection, median over " << o.seeds << " seeds (" << o.seed
     << ".." << o.seed + static_cast<uint64_t>(o.seeds) - 1 << "), budget " << o.budget_inputs
     << " inputs or " << o.time_cap_s << " s per run; (k/n) = seeds that detected.\n\n";
  os << "| mutant | hard | property | fuzz error-guided | fuzz coverage-only | uniform "
        "| fuzz error-guided, uniform values | fuzz coverage-only, uniform values |\n";
  os << "|---|---|---|---|---|---|---|---|\n";
  int hard = 0, error_wins = 0, error_wins_u = 0;
  for (const auto& r : rows) {
    const bool is_hard = std::isinf(median_inputs(r.trials[3]));
    hard += is_hard;
    const double e = median_inputs(r.trials[1]), c = median_inputs(r.trials[2]);
    if (is_hard && e < c) ++error_wins;
    const double eu = median_inputs(r.trials[4]), cu = median_inputs(r.trials[5]);
    if (is_hard && eu < cu) ++error_wins_u;
    os << "| " << r.id << " | " << (is_hard ? "yes" : "no");
    for (const auto& t : r.trials) os << " | " << cell(t);
    os << " |\n";
  }
  os << "\nHard mutants (uniform misses, median): " << hard
     << "; of those, error-guided fuzzing needed fewer inputs (median) than coverage-only on "
     << error_wins << " from the regimes, on " << error_wins_u << " from uniform values.\n";
  return os.str();
}

json::Value compare_json(const std::vector<MutantRow>& rows, const CompareOptions& o) {
  json::Value j;
  j.set("seed", static_cast<unsigned long long>(o.seed));
  j.set("seeds", o.seeds);
  j.set("budget_inputs", static_cast<long long>(o.budget_inputs));
  j.set("time_cap_s", o.time_cap_s);
  json::Array ms;
  for (const auto& r : rows) {
    json::Value m;
    m.set("mutant", r.id);
    m.set("hard", std::isinf(median_inputs(r.trials[3])));
    json::Value engines;
    for (size_t e = 0; e < r.trials.size(); ++e) {
      json::Value je;
      const double mi = median_inputs(r.trials[e]), ms_ = median_seconds(r.trials[e]);
      je.set("median_inputs", std::isinf(mi) ? json::Value() : json::Value(mi));
      je.set("median_seconds", std::isinf(ms_) ? json::Value() : json::Value(ms_));
      json::Array trials;
      for (const auto& t : r.trials[e]) {
        json::Value jt;
        jt.set("detected", t.detected);
        jt.set("inputs", static_cast<long long>(t.inputs));
        jt.set("seconds", t.seconds);
        trials.push_back(std::move(jt));
      }
      je.set("trials", std::move(trials));
      engines.set(kEngines[e], std::move(je));
    }
    m.set("engines", std::move(engines));
    ms.push_back(std::move(m));
  }
  j.set("mutants", std::move(ms));
  return j;
}

}  // namespace stabfuzz::fuzz
