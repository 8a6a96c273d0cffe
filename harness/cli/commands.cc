// The small commands: help, report, inject, replay, bench, calibrate.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "harness/bench/bench.h"
#include "harness/bench/blackbox_calibrate.h"
#include "harness/bench/calibrate.h"
#include "harness/bench/cestac_suite.h"
#include "harness/bench/user_suite.h"
#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/cost.h"
#endif
#include "harness/campaign/inject.h"
#include "harness/cli/command.h"
#include "harness/cli/common.h"
#include "harness/cli/flags.h"
#include "harness/corpus/replay.h"
#include "harness/monitor/sweep.h"
#include "harness/plugin/loader.h"
#include "reports/diff.h"
#include "reports/findings.h"
#include "reports/report.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

namespace stabfuzz::cli {
namespace {

void load_plugins(const std::vector<std::string>& plugins) {
  for (const auto& p : plugins) plugin::load(mutable_default_registry(), p);
}

class HelpCommand final : public Command {
 public:
  const char* name() const override { return "help"; }
  const char* summary() const override {
    return "the commands, or one command's flags and defaults";
  }
  const char* usage() const override {
    return "stabfuzz help [COMMAND]\nstabfuzz help --markdown   (docs/cli.md)";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::toggle(d, "markdown", &markdown_,
                 "every command's flags as Markdown tables (docs/cli.md is this output)");
    return d;
  }
  int run(const Invocation& inv) override {
    if (markdown_) {
      std::cout << markdown();
      return 0;
    }
    if (inv.args.empty()) {
      std::cout << command_list();
      return 0;
    }
    std::string name = inv.args[0];
    for (size_t i = 1; i < inv.args.size(); ++i) name += " " + inv.args[i];
    if (name == "monitor") {
      for (const char* sub :
           {"monitor train", "monitor sweep", "monitor infer", "monitor onnx-tests"})
        std::cout << command_help(*make_command(sub)) << "\n";
      return 0;
    }
    auto c = make_command(name);
    if (!c) throw InputError("help: unknown command '" + name + "' (stabfuzz help lists them)");
    std::cout << command_help(*c);
    return 0;
  }

 private:
  bool markdown_ = false;
};

// `report DIR` re-renders a run; `report --diff OLD NEW` compares two (exit 1: regression).
class ReportCommand final : public Command {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override {
    return "re-render a run's reports, or compare two runs (--diff)";
  }
  const char* usage() const override {
    return "stabfuzz report DIR\nstabfuzz report --diff OLD NEW [--json PATH]   (exit 1 on a new "
           "or worse finding)";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::toggle(d, "diff", &diff_,
                 "compare two runs (report --diff OLD NEW); exit 1 on a new or worse finding");
    flag::json(d, &json_);
    return d;
  }
  int run(const Invocation& inv) override {
    if (diff_) {
      if (inv.args.size() != 2)
        throw InputError("report --diff takes two run directories: OLD NEW");
      const reports::RunData before = reports::load_run(inv.args[0]);
      const reports::RunData after = reports::load_run(inv.args[1]);
      const reports::RunDiff d = reports::diff_runs(before, after);
      std::cout << reports::render_diff(d, before, after);
      if (!json_.empty()) emit_json(json_, reports::diff_json(d, before, after));
      return d.exit_code();
    }
    if (inv.args.size() != 1)
      throw InputError("report takes one run directory (or --diff OLD NEW)");
    for (const auto& p : reports::write_reports(inv.args[0], std::cerr)) std::cout << p << "\n";
    return 0;
  }

 private:
  bool diff_ = false;
  std::string json_;
};

// stabfuzz inject: recall of the detectors over the planted bugs, false positives of the
// reference targets; a table on stdout, JSON to <out>/inject.json and --json.
class InjectCommand final : public Command {
 public:
  const char* name() const override { return "inject"; }
  const char* summary() const override {
    return "the detectors' recall over the planted bugs, false positives";
  }
  const char* usage() const override {
    return "stabfuzz inject [--family F|all] --budget-s S [--seed S | --seeds S1,S2,...]"
           "\n               [--generator regimes|uniform] [--faults registry|all] [--json PATH]"
           "\n               [--markdown PATH] [--save-corpus DIR]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::plugin(d, &plugins_);
    flag::value(d, "family", &family_, "all", "FAMILY|all",
                "the family whose mutants and reference targets run");
    flag::value(d, "budget-s", &budget_s_, "S", "seconds per target (required, > 0)");
    flag::seed(d, &seed_);
    flag::value(d, "seeds", &seeds_, "S1,S2,...",
                "run each of these seeds in turn (one inject.json per seed); seed 1 is the "
                "tuning seed the registry's fault mutants and expected detectors were chosen on");
    flag::value(d, "faults", &faults_, "registry", "registry|all",
                "the registry's fault mutants, or every fault planted in every family's reference "
                "target (the unscreened fault matrix; undetected pairs there do not fail the run)");
    flag::value(d, "markdown", &markdown_, "PATH",
                "also write the recall per seed, the fault matrix and why each missed pair was "
                "missed as Markdown (docs/results/detection.md)");
    flag::generator(d, &generator_,
                    "inputs from the families' value regimes, or the naive uniform baseline "
                    "(values uniform in [-1, 1], shapes and parameters of the regimes)");
    flag::cancel_digits(d, &cancel_digits_);
    flag::shrink_evals(d, &shrink_evals_);
    flag::value(d, "save-corpus", &save_corpus_, "DIR",
                "write each detected mutant's shrunk input (expect: detected) and each reference "
                "target's hardest small passing input (expect: stable) under "
                "DIR/<family>/regression/");
    flag::out(d, &out_,
              "output directory for inject.json (default: "
              "runs/inject-<family>-<generator>-<date>-s<seed>-p<pid>)");
    flag::json(d, &json_);
    flag::quiet(d, &quiet_);
    return d;
  }
  int run(const Invocation& inv) override;

 private:
  std::vector<std::string> plugins_;
  std::string family_, generator_, save_corpus_, out_, json_, seeds_, faults_, markdown_;
  double budget_s_ = 0;
  uint64_t seed_ = 0;
  int cancel_digits_ = 0;
  int64_t shrink_evals_ = 0;
  bool quiet_ = false;
};

// "1,2,3": the seeds, whole numbers > 0.
std::vector<uint64_t> parse_seed_list(const std::string& text) {
  std::vector<uint64_t> out;
  for (double v : monitor::parse_number_list(text, "seeds")) {
    if (v != std::floor(v) || v > 0x1p53)
      throw InputError("--seeds: expected whole numbers > 0 separated by commas, got '" + text +
                       "'");
    out.push_back(static_cast<uint64_t>(v));
  }
  return out;
}

int InjectCommand::run(const Invocation& inv) {
  load_plugins(plugins_);
  no_arguments("inject", inv.args.size());
  if (inv.given("seed") && inv.given("seeds")) throw InputError("give --seed or --seeds, not both");
  if (faults_ != "registry" && faults_ != "all")
    throw InputError("--faults: registry or all, not '" + faults_ + "'");
  campaign::InjectOptions io;
  io.family = family_;
  io.budget_s = budget_s_;
  const auto g = campaign::parse_generator(generator_);
  if (!g) throw InputError("unknown --generator '" + generator_ + "' (regimes or uniform)");
  io.generator = *g;
  io.shrink_evals = shrink_evals_;
  flag::check_cancel_digits(cancel_digits_);
  io.cestac.cancel_digits = cancel_digits_;
  io.save_corpus = save_corpus_;
  io.fault_matrix = faults_ == "all";
  const std::vector<uint64_t> seeds =
      inv.given("seeds") ? parse_seed_list(seeds_) : std::vector<uint64_t>{flag::pick_seed(seed_)};
  std::ostream& table = json_ == "-" ? std::cerr : std::cout;  // keep stdout pure JSON
  const std::string out =
      out_.empty() ? default_out_dir("inject-" + family_ + "-" + generator_, seeds.front()) : out_;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("cannot create directory " + out + ": " + ec.message());
  std::vector<campaign::InjectResult> runs;
  json::Array all;
  for (uint64_t seed : seeds) {
    io.seed = seed;
    campaign::InjectResult r =
        campaign::run_inject(default_registry(), io, progress_stream(quiet_));
    campaign::print_inject_table(r, table);
    json::Value j = campaign::inject_json(r);
    const std::string file =
        out +
        (seeds.size() == 1 ? "/inject.json" : "/inject-seed-" + std::to_string(seed) + ".json");
    reports::write_json_atomically(file, j);
    table << "json: " << file << "\n";
    all.push_back(std::move(j));
    runs.push_back(std::move(r));
  }
  if (!json_.empty()) emit_json(json_, seeds.size() == 1 ? all[0] : json::Value(std::move(all)));
  if (!markdown_.empty()) {
    std::ostringstream budget;
    budget << budget_s_;
    std::string command = "stabfuzz inject --budget-s " + budget.str() + " --seeds " +
                          (inv.given("seeds") ? seeds_ : std::to_string(seeds.front())) +
                          " --faults " + faults_;
    if (family_ != "all") command += " --family " + family_;
    if (generator_ != "regimes") command += " --generator " + generator_;
    reports::write_text_atomically(markdown_, campaign::inject_markdown(runs, command, {1}));
    table << "markdown: " << markdown_ << "\n";
  }
  int failing = 0;
  for (const auto& r : runs) {
    for (const auto& m : r.mutants) failing += !m.detected && m.registered;
    failing += r.false_positive_targets > 0;
  }
  return failing > 0 ? 1 : 0;
}

// stabfuzz replay PATH...: the regression suite over corpus files.
class ReplayCommand final : public Command {
 public:
  const char* name() const override { return "replay"; }
  const char* summary() const override {
    return "re-run corpus files and check their expectations";
  }
  const char* usage() const override {
    return "stabfuzz replay PATH... [--junit FILE]   (corpus files or directories)";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::plugin(d, &plugins_);
    flag::timeout_ms(d, &timeout_ms_);
    flag::value(d, "junit", &junit_, "FILE", "also write the results as JUnit XML to FILE");
    return d;
  }
  int run(const Invocation& inv) override {
    load_plugins(plugins_);
    if (inv.args.empty()) throw InputError("replay needs at least one file or directory");
    return corpus::replay(default_registry(), inv.args, std::cout, junit_, timeout_ms_);
  }

 private:
  std::vector<std::string> plugins_;
  std::string junit_;
  int64_t timeout_ms_ = 0;
};

// stabfuzz bench: CESTAC's cost against native code, the oracle's, a fuzz execution's.
class BenchCommand final : public Command {
 public:
  const char* name() const override { return "bench"; }
  const char* summary() const override {
    return "the cost of CESTAC, of the oracle, of one fuzz execution";
  }
  const char* usage() const override {
    return "stabfuzz bench [--budget-s S] [--json PATH]\n"
           "stabfuzz bench --suite user [--dtype D] [--budget-s S] [--json PATH]\n"
           "stabfuzz bench --suite monitor [--json PATH]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::value(d, "suite", &suite_, "engine", "NAME",
                "engine: the project's kernels, the oracle's cost, fuzz throughput; user: plain "
                "user-written kernels (softmax ... MLP step) in f64, f32, f16, bf16, native vs "
                "CESTAC, min and median over repeats; monitor: the ONNX example models' inference "
                "and training step monitored vs native");
    flag::value<double>(d, "budget-s", &budget_s_, 0.0, "S",
                        "about the seconds the whole bench takes (0: 0.2 s per timing, about a "
                        "minute; under 5: fewer oracle inputs and fuzz seconds; --suite user: "
                        "0 means 60)");
    flag::value(d, "dtype", &dtype_, "all", "f64|f32|f16|bf16|all",
                "--suite user: only this dtype's rows (the engine suite runs f64 and f32)");
    flag::json(d, &json_);
    flag::quiet(d, &quiet_);
    return d;
  }
  int run(const Invocation& inv) override;

 private:
  int run_user_suite() const;
  int run_monitor_suite() const;
  std::string suite_ = "engine";
  std::string dtype_ = "all";
  double budget_s_ = 0;
  std::string json_;
  bool quiet_ = false;
};

// --suite user: what CESTAC costs on code written with no thought for it (user_kernels.h).
int BenchCommand::run_user_suite() const {
  bench::UserOptions uo;
  if (budget_s_ > 0) uo.budget_s = budget_s_;
  if (auto d = flag::dtype_of(dtype_)) uo.dtypes = {*d};
  std::ostream& progress = progress_stream(quiet_);
  progress << "stabfuzz bench --suite user: us per call, native vs Stoch<T,3> (detection on) of "
              "the same user template, "
           << uo.repeats << " alternating repeats" << std::endl;
  const auto rows = bench::run_user_suite(uo, progress);
  bench::print_user_table(rows, std::cout);
  if (!json_.empty()) emit_json(json_, bench::user_to_json(rows));
  return 0;
}

// --suite monitor: the ONNX monitor's inference and training step against the native interpreter.
int BenchCommand::run_monitor_suite() const {
#ifdef STABFUZZ_HAVE_ONNX
  std::ostream& progress = progress_stream(quiet_);
  progress << "stabfuzz bench --suite monitor: ms per inference and per training step, native vs "
              "monitored (Stoch<float, 3>, every node traced), min over 5 repeats"
           << std::endl;
  const auto rows = onnx::monitor_costs("", 5, progress);
  onnx::print_monitor_costs(rows, std::cout);
  if (!json_.empty()) emit_json(json_, onnx::monitor_costs_json(rows));
  return 0;
#else
  throw InputError("bench --suite monitor: built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
}

int BenchCommand::run(const Invocation& inv) {
  no_arguments("bench", inv.args.size());
  if (budget_s_ < 0) throw InputError("--budget-s must not be negative");
  if (suite_ == "user") return run_user_suite();
  if (suite_ == "monitor") {
    for (const char* f : {"budget-s", "dtype"})
      if (inv.given(f))
        throw InputError(std::string("--") + f + " does not apply to --suite monitor");
    return run_monitor_suite();
  }
  if (suite_ != "engine")
    throw InputError("--suite: engine, user or monitor, not '" + suite_ + "'");
  if (dtype_ != "all") throw InputError("--dtype needs --suite user");
  bench::Options bo;
  if (budget_s_ > 0) bo.seconds_per_measurement = budget_s_ / 24;  // 12 kernels x native, cestac
  std::ostream& progress = progress_stream(quiet_);
  progress << "stabfuzz bench: ns per element, native vs Stoch<T,3> (detection on), same template"
           << std::endl;
  const auto ms = bench::run(bo, progress);
  std::cout << std::left << std::setw(20) << "op" << std::setw(6) << "dtype" << std::right
            << std::setw(12) << "native_ns" << std::setw(12) << "cestac_ns" << std::setw(9)
            << "ratio"
            << "\n";
  for (const auto& m : ms)
    std::cout << std::left << std::setw(20) << m.op << std::setw(6) << m.dtype << std::right
              << std::setw(12) << fmt(m.native_ns, 3) << std::setw(12) << fmt(m.cestac_ns, 3)
              << std::setw(9) << fmt(m.ratio, 2) << "\n";
  std::cout << "geomean ratio: f64 " << fmt(bench::geomean_ratio(ms, "f64"), 2) << ", f32 "
            << fmt(bench::geomean_ratio(ms, "f32"), 2) << "\n";
  // The oracle next to the native stable target, per family (f64, regime inputs of <= 4096 values).
  const bool short_run = budget_s_ > 0 && budget_s_ < 5;
  const auto oc = bench::oracle_costs(short_run ? 2 : 12, 4096, progress);
  std::cout << "\n"
            << std::left << std::setw(20) << "oracle (f64)" << std::right << std::setw(12)
            << "native_ns" << std::setw(12) << "oracle_ns" << std::setw(9) << "ratio"
            << "\n";
  std::vector<double> ratios;
  for (const auto& c : oc) {
    std::cout << std::left << std::setw(20) << c.family << std::right << std::setw(12)
              << fmt(c.native_ns, 3) << std::setw(12) << fmt(c.oracle_ns, 1) << std::setw(9)
              << fmt(c.ratio, 0) << "\n";
    ratios.push_back(c.ratio);
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const size_t h = ratios.size() / 2;
    const double median = ratios.size() % 2 ? ratios[h] : (ratios[h - 1] + ratios[h]) / 2;
    std::cout << "median ratio over " << ratios.size() << " families: " << fmt(median, 1) << "\n";
  }
  // What one fuzz execution costs (CESTAC and oracle on), rows of at most 64 values.
  const auto ft = bench::fuzz_throughput(short_run ? 0.1 : 1.0, progress);
  std::cout << "\n"
            << std::left << std::setw(24) << "fuzz (rows <= 64)" << std::setw(6) << "dtype"
            << std::right << std::setw(12) << "exec/s" << std::setw(9) << "values"
            << "\n";
  for (const auto& f : ft)
    std::cout << std::left << std::setw(24) << f.impl << std::setw(6) << f.dtype << std::right
              << std::setw(12) << fmt(f.execs_per_s, 0) << std::setw(9) << fmt(f.mean_values, 1)
              << "\n";
  if (!json_.empty()) emit_json(json_, bench::to_json(ms, oc, ft));
  return 0;
}

// stabfuzz calibrate: CESTAC's digit count against the oracle's true digits.
class CalibrateCommand final : public Command {
 public:
  const char* name() const override { return "calibrate"; }
  const char* summary() const override {
    return "CESTAC's digit count against the oracle's true digits";
  }
  const char* usage() const override {
    return "stabfuzz calibrate [--runs N] [--seed S] [--json PATH]\n"
           "stabfuzz calibrate --suite broad [--seeds tune|eval] [--docs] [--target KIND] "
           "[--dtype D] [--runs N] [--seed S] [--json PATH]\n"
           "stabfuzz calibrate --blackbox [--target FAMILY] [--runs N] [--seed S] [--json PATH]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::runs(d, &runs_, 300,
               "cases per implementation and dtype (--blackbox: regime cases, and as many "
               "conditioned rows for sum, var and dot; 10 unless given; --suite broad: cases per "
               "kernel, dtype and seed, 200 unless given)");
    flag::seed(d, &seed_, 1,
               "seed of the cases (0: 1; --suite broad: this seed instead of --seeds)");
    flag::json(d, &json_);
    flag::quiet(d, &quiet_);
    flag::toggle(d, "blackbox", &blackbox_,
                 "calibrate the black-box digits (four rounding modes) of every reference, "
                 "injected and library target instead of CESTAC's (docs/blackbox.md)");
    flag::value(d, "suite", &suite_, "families", "NAME",
                "families: the project's sum, var and dot targets against the oracle; broad: 21 "
                "user-style kernels nobody tuned on (Horner near a root, offset sums, variances, "
                "the quadratic formula, recurrences, softmax ...) against MPFR, a table per "
                "kernel and dtype (docs/results/cestac-calibration.md)");
    flag::value(d, "seeds", &seeds_, "eval", "tune|eval",
                "--suite broad: the tuning seeds (1-3, for adjusting the engine's constants) or "
                "the evaluation seeds (101-103, what the docs report)");
    flag::value(d, "variant", &variant_, "stoch3", "NAME",
                "--suite broad: the stochastic type judged (stoch3: Stoch<T, 3>)");
    flag::dtype(d, &dtype_);
    flag::toggle(d, "docs", &docs_,
                 "--suite broad: also write the table to docs/results/cestac-calibration.md "
                 "(run from the repository root)");
    flag::target(d, &family_,
                 "--blackbox: only this family; --suite broad: only this kernel (default: all)");
    return d;
  }
  int run(const Invocation& inv) override {
    no_arguments("calibrate", inv.args.size());
    std::ostream& progress = progress_stream(quiet_);
    const uint64_t seed = seed_ != 0 ? seed_ : 1;
    // Cases per implementation and dtype (or kernel): zero would print rates of nothing.
    if (inv.given("runs") && (runs_ < 1 || runs_ > kMaxCalibrateRuns))
      throw InputError("--runs must be between 1 and " + std::to_string(kMaxCalibrateRuns));
    if (blackbox_) return run_blackbox(progress, seed, inv.given("runs") ? runs_ : 10);
    if (suite_ == "broad") return run_broad(inv, progress);
    if (suite_ != "families") throw InputError("--suite: families or broad, not '" + suite_ + "'");
    for (const char* f : {"seeds", "variant", "dtype", "docs"})
      if (inv.given(f)) throw InputError(std::string("--") + f + " needs --suite broad");
    progress << "stabfuzz calibrate: CESTAC digits vs the oracle's true digits, seed " << seed
             << std::endl;
    const auto s = calibrate::run(static_cast<int>(runs_), seed, progress);
    std::cout << "cases: " << s.cases.size()
              << "\nagree within 1 digit: " << fmt(100 * s.agree_within_1, 1)
              << " %\noverclaim by more than 1 digit: " << fmt(100 * s.overclaim, 1) << " %\n";
    if (!json_.empty()) emit_json(json_, calibrate::to_json(s));
    return 0;
  }

 private:
  int run_broad(const Invocation& inv, std::ostream& progress) const;
  int run_blackbox(std::ostream& progress, uint64_t seed, int64_t runs) {
    progress << "stabfuzz calibrate --blackbox: digits from four rounding modes vs the oracle's "
                "true digits, seed "
             << seed << std::endl;
    const auto s = calibrate::run_blackbox(static_cast<int>(runs), seed, family_, progress);
    std::cout << calibrate::markdown_table(s, "") << "\n"
              << calibrate::markdown_table(s, "family ") << "\n"
              << calibrate::markdown_table(s, "lib-impl ") << "\n"
              << (family_.empty() ? "" : calibrate::markdown_table(s, "impl ") + "\n")
              << fmt(s.seconds, 0) << " s\n";
    if (!json_.empty()) emit_json(json_, calibrate::to_json(s));
    return 0;
  }

  static constexpr int64_t kMaxCalibrateRuns = 1000000;
  int64_t runs_ = 0;
  uint64_t seed_ = 0;
  std::string json_;
  bool quiet_ = false;
  bool blackbox_ = false;
  std::string family_;
  std::string suite_ = "families";
  std::string seeds_ = "eval";
  std::string variant_ = "stoch3";
  std::string dtype_ = "all";
  bool docs_ = false;
};

// --suite broad: the per-kernel table of the broad suite (harness/bench/cestac_suite.h).
int CalibrateCommand::run_broad(const Invocation& inv, std::ostream& progress) const {
  namespace cs = calibrate::suite;
  const cs::Variant* variant = cs::find_variant(variant_);
  if (!variant) throw InputError("unknown --variant '" + variant_ + "'");
  if (seeds_ != "tune" && seeds_ != "eval")
    throw InputError("--seeds: tune or eval, not '" + seeds_ + "'");
  if (!family_.empty() && !cs::find_kind(family_))
    throw InputError("--target: no kernel '" + family_ + "' in the broad suite");
  cs::Options o;
  o.seeds = seeds_ == "tune" ? cs::kTuneSeeds : cs::kEvalSeeds;
  if (inv.given("seed")) o.seeds = {seed_};
  if (inv.given("runs")) o.cases = static_cast<int>(runs_);
  o.kind = family_;
  if (auto d = flag::dtype_of(dtype_)) o.dtypes = {*d};
  progress << "stabfuzz calibrate --suite broad: " << variant->scalar
           << " digits vs MPFR's exact answers, " << seeds_ << " seeds" << std::endl;
  const cs::Result r = cs::run(*variant, o, progress);
  (json_ == "-" ? std::cerr : std::cout) << cs::markdown_table(r);  // keep stdout pure JSON
  progress << fmt(r.seconds, 1) << " s" << std::endl;
  if (docs_) {
    const std::string path = "docs/results/cestac-calibration.md";
    std::error_code ec;
    if (!std::filesystem::is_directory("docs/results", ec))
      throw InputError("--docs: no docs/results here (run from the repository root)");
    // The command as it regenerates the file: output-only flags left out.
    std::string command = "stabfuzz";
    for (size_t i = 0; i < inv.words.size(); ++i) {
      const std::string& w = inv.words[i];
      if (w == "--quiet" || w.rfind("--json=", 0) == 0) continue;
      if (w == "--json") {
        i += i + 1 < inv.words.size() && inv.words[i + 1].rfind("--", 0) != 0;
        continue;
      }
      command += " " + w;
    }
    std::vector<cs::Result> others;  // the other roundings on the same cases, side by side
    for (const auto& v : cs::variants())
      if (v.name != variant->name) {
        progress << "  and " << v.scalar << " for the comparison" << std::endl;
        std::ostringstream quiet;
        others.push_back(cs::run(v, o, quiet));
      }
    reports::write_text_atomically(path, cs::markdown_doc(r, others, command));
    progress << "wrote " << path << std::endl;
  }
  if (!json_.empty()) emit_json(json_, cs::to_json(r));
  return 0;
}

}  // namespace

std::unique_ptr<Command> make_help_command() { return std::make_unique<HelpCommand>(); }
std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }
std::unique_ptr<Command> make_inject_command() { return std::make_unique<InjectCommand>(); }
std::unique_ptr<Command> make_replay_command() { return std::make_unique<ReplayCommand>(); }
std::unique_ptr<Command> make_bench_command() { return std::make_unique<BenchCommand>(); }
std::unique_ptr<Command> make_calibrate_command() { return std::make_unique<CalibrateCommand>(); }

}  // namespace stabfuzz::cli
