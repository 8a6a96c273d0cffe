// `stabfuzz fuzz`: hands a configuration over to libFuzzer; `stabfuzz fuzz-compare`.
#include "harness/fuzz/fuzz_cli.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::fuzz {
namespace {

constexpr const char* kEnv = "STABFUZZ_FUZZ_ARGS";  // the parent's stabfuzz flags, '\n'-joined

}  // namespace

int command(const FuzzOptions& f, const std::vector<std::string>& stabfuzz_words, bool seed_given,
            TablePrinter table) {
  const auto& lf = f.libfuzzer_args;
  if (f.time_s <= 0 && f.runs <= 0 && !passive_mode(lf)) {
    bool limit = false;
    for (const auto& a : lf)  // libFuzzer's limits, or files to run once each (reproducing a crash)
      limit |= a.rfind("-runs=", 0) == 0 || a.rfind("-max_total_time=", 0) == 0 ||
               std::filesystem::is_regular_file(a);
    if (!limit)
      throw InputError("give --time S or --runs N (or libFuzzer's -runs/-max_total_time after --)");
  }
  std::string env;
  for (const auto& w : stabfuzz_words) env += w + "\n";
  if (!seed_given) env += "--seed\n" + std::to_string(f.seed) + "\n";
  ::setenv(kEnv, env.c_str(), 1);
  return run(default_registry(), f, table);
}

std::optional<std::vector<std::string>> libfuzzer_child_words(int argc, char** argv) {
  const char* env = std::getenv(kEnv);
  if (!env || argc < 2 || argv[1][0] != '-' || std::strcmp(argv[1], "--") == 0 ||
      (argv[1][1] == '-'))  // our own flags start with --, libFuzzer's with one dash
    return std::nullopt;
  std::vector<std::string> words;
  std::string cur;
  for (const char* p = env; *p; ++p) {
    if (*p == '\n') {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += *p;
    }
  }
  return words;
}

int run_child(FuzzOptions f, int argc, char** argv, TablePrinter table) {
  f.child = true;
  f.libfuzzer_args.assign(argv + 1, argv + argc);
  return run(default_registry(), f, table);
}

int compare_command(CompareOptions c, const std::string& out, const std::string& json) {
  std::error_code ec;
  c.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) throw InputError("cannot find the stabfuzz binary (/proc/self/exe)");
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
  if (!json.empty()) {
    if (json == "-")
      std::cout << json::dump(j, 2) << "\n";
    else
      reports::write_json_atomically(json, j);
  }
  return 0;
}

}  // namespace stabfuzz::fuzz
