// `stabfuzz fuzz`: checks the flags, fills FuzzOptions and hands over to libFuzzer.
#include "harness/fuzz/fuzz_cli.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "harness/core/duration.h"
#include "harness/fuzz/compare.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::fuzz {
namespace {

constexpr const char* kEnv = "STABFUZZ_FUZZ_ARGS";  // the parent's stabfuzz flags, '\n'-joined

FuzzOptions options_of(const cli::Options& o) {
  FuzzOptions f;
  if (o.target.empty())
    throw InputError("fuzz needs --target FAMILY (stabfuzz --list shows the families)");
  f.family = o.target;
  f.impl = o.impl;
  if (o.dtype != "all") {
    auto d = parse_dtype(o.dtype);
    if (!d) throw InputError("unknown --dtype '" + o.dtype + "' (f64, f32, f16, bf16 or all)");
    f.dtypes = {*d};
  }
  if (o.time_s < 0) throw InputError("--time must not be negative");
  f.time_s = o.time_s;
  if (o.runs_given && o.runs <= 0) throw InputError("--runs must be positive");
  f.runs = o.runs_given ? o.runs : 0;
  f.seed = o.seed_given && o.seed != 0
               ? o.seed
               : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() %
                                       1000000007ULL) +
                     1;
  f.corpus_dir = o.corpus;
  if (o.feedback == "error")
    f.feedback = Feedback::error;
  else if (o.feedback == "coverage")
    f.feedback = Feedback::coverage;
  else
    throw InputError("unknown --feedback '" + o.feedback + "' (error or coverage)");
  if (o.generator == "uniform")
    f.base = Base::uniform;
  else if (o.generator != "regimes")
    throw InputError("unknown --generator '" + o.generator + "' (regimes or uniform)");
  f.keep_going = o.keep_going;
  if (o.max_findings < 0) throw InputError("--max-findings must not be negative");
  f.max_findings = o.max_findings;
  f.shrink_evals = o.shrink_evals;
  if (o.cancel_digits < 1 || o.cancel_digits > 15)
    throw InputError("--cancel-digits must be in 1..15");
  f.cestac.cancel_digits = o.cancel_digits;
  f.quiet = o.quiet;
  f.write_reports = !o.no_reports;
  f.progress_tty = !o.quiet && ::isatty(STDERR_FILENO);
  if (o.out.empty()) {
    f.out_dir = "runs/fuzz-" + f.family + "-" + local_timestamp() + "-s" + std::to_string(f.seed) +
                "-p" + std::to_string(::getpid());
  } else {
    f.out_dir = o.out;
  }
  return f;
}

}  // namespace

int command(const cli::Options& o, int argc, char** argv, TablePrinter table) {
  int dash = argc;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  std::vector<std::string> lf(argv + std::min(dash + 1, argc), argv + argc);
  // Positional words other than `fuzz` must be the ones after `--`.
  if (o.command.size() - 1 != lf.size())
    throw InputError("fuzz takes no arguments besides flags; libFuzzer flags go after `--`");
  FuzzOptions f = options_of(o);
  f.libfuzzer_args = lf;
  if (f.time_s <= 0 && f.runs <= 0 && !passive_mode(lf)) {
    bool limit = false;
    for (const auto& a : lf)  // libFuzzer's limits, or files to run once each (reproducing a crash)
      limit |= a.rfind("-runs=", 0) == 0 || a.rfind("-max_total_time=", 0) == 0 ||
               std::filesystem::is_regular_file(a);
    if (!limit)
      throw InputError("give --time S or --runs N (or libFuzzer's -runs/-max_total_time after --)");
  }
  std::string env;
  for (int i = 1; i < dash; ++i) env += std::string(argv[i]) + "\n";
  if (!o.seed_given) env += "--seed\n" + std::to_string(f.seed) + "\n";
  ::setenv(kEnv, env.c_str(), 1);
  run(default_registry(), f, table);
}

int compare_command(const cli::Options& o) {
  CompareOptions c;
  c.mutants.assign(o.command.begin() + 1, o.command.end());
  if (o.runs_given && o.runs <= 0) throw InputError("--runs must be positive");
  if (o.runs_given) c.budget_inputs = o.runs;
  if (o.time_s < 0) throw InputError("--time must not be negative");
  if (o.time_s > 0) c.time_cap_s = o.time_s;
  c.seed = o.seed_given && o.seed != 0 ? o.seed : 1;
  std::error_code ec;
  c.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw InputError("cannot find the stabfuzz binary (/proc/self/exe)");
  const std::string out = o.out.empty() ? "runs/fuzz-compare-s" + std::to_string(c.seed) : o.out;
  c.work_dir = out + "/runs";
  std::filesystem::create_directories(c.work_dir, ec);
  if (ec) throw InputError("cannot create directory " + c.work_dir + ": " + ec.message());
  std::cerr << "stabfuzz fuzz-compare: " << c.seeds << " seeds from " << c.seed << ", budget "
            << c.budget_inputs << " inputs or " << c.time_cap_s << " s per engine, mutant and seed"
            << std::endl;
  const auto rows = run_compare(default_registry(), c, std::cerr);
  const std::string md = compare_markdown(rows, c);
  std::cout << md;
  std::ofstream(out + "/compare.md") << md;
  const json::Value j = compare_json(rows, c);
  reports::write_json_atomically(out + "/compare.json", j);
  std::cout << "json: " << out << "/compare.json\n";
  if (!o.json.empty()) {
    if (o.json == "-")
      std::cout << json::dump(j, 2) << "\n";
    else
      reports::write_json_atomically(o.json, j);
  }
  return 0;
}

std::optional<int> libfuzzer_child(int argc, char** argv, TablePrinter table) {
  const char* env = std::getenv(kEnv);
  if (!env || argc < 2 || argv[1][0] != '-' || std::strcmp(argv[1], "--") == 0 ||
      (argv[1][1] == '-'))  // our own flags start with --, libFuzzer's with one dash
    return std::nullopt;
  std::vector<std::string> words{"stabfuzz"};
  std::string cur;
  for (const char* p = env; *p; ++p) {
    if (*p == '\n') {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  std::vector<const char*> pv;
  for (const auto& w : words) pv.push_back(w.c_str());
  const cli::Options o = cli::parse(static_cast<int>(pv.size()), pv.data());
  FuzzOptions f = options_of(o);
  f.child = true;
  f.libfuzzer_args.assign(argv + 1, argv + argc);
  run(default_registry(), f, table);
}

}  // namespace stabfuzz::fuzz
