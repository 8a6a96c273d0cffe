// stabfuzz triage: a library finding as a bug report with a standalone reproducer.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "harness/cli/command.h"
#include "harness/cli/common.h"
#include "harness/cli/flags.h"
#include "harness/triage/table.h"
#include "harness/triage/triage.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::cli {
namespace {

class TriageCommand final : public Command {
 public:
  const char* name() const override { return "triage"; }
  const char* summary() const override {
    return "a library finding as a bug report with a standalone C++ reproducer";
  }
  const char* usage() const override {
    return "stabfuzz triage CORPUS_FILE [--out DIR] [--run] [--library-prefix DIR]\n"
           "stabfuzz triage RUN_DIR --finding N [--out DIR] [--run]   (line N of findings.jsonl)\n"
           "stabfuzz triage --table RUN_DIR... [--verdicts FILE] [--out FILE.md]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::value<int64_t>(
        d, "finding", &finding_, 0, "N",
        "with a run directory (required there): the finding on line N (from 1) of its "
        "findings.jsonl");
    flag::out(d, &out_,
              "where report.md and repro.cc go (default: triage/<implementation>-<dtype>)");
    flag::toggle(d, "run", &run_,
                 "also compile the reproducer with c++ and run it; its output goes in the report");
    flag::value(d, "library-prefix", &prefix_, "DIR",
                "with --run: build the reproducer against the library installed under DIR "
                "(DIR/include, DIR/lib) instead of the system's, e.g. .deps/onednn3 "
                "(ci/bootstrap --with-onednn3) to ask whether a oneDNN 2 finding reproduces on "
                "oneDNN 3; the reproducer prints the version it ran");
    flag::toggle(d, "table", &table_,
                 "the library triage table of the run directories (or folders of them): every "
                 "failing library pair x kind, its smallest input and its verdict");
    flag::value(d, "verdicts", &verdicts_, "FILE",
                "with --table: tab-separated verdicts (impl, dtype, kind, verdict, evidence)");
    return d;
  }
  int run(const Invocation& inv) override {
    if (table_) return table(inv);
    if (inv.args.size() != 1)
      throw InputError("triage needs one corpus file or run directory (see stabfuzz help triage)");
    const corpus::Entry e = entry(inv.args[0], inv.given("finding"));
    triage::Options o;
    std::string id = e.impl + "-" + std::string(dtype_name(e.input.dtype));
    for (char& c : id)
      if (c == '/') c = '-';
    o.out_dir = out_.empty() ? "triage/" + id : out_;
    o.run = run_;
    o.library_prefix = prefix_;
    if (!prefix_.empty() && !run_) throw InputError("--library-prefix goes with --run");
    if (!prefix_.empty() && !std::filesystem::is_directory(prefix_ + "/include"))
      throw InputError("--library-prefix " + prefix_ + ": no include directory there");
    const triage::Result r = triage::triage(default_registry(), e, o);
    std::cout << r.title << "\nreport:     " << r.report_path << "\n";
    if (!r.source_path.empty()) std::cout << "reproducer: " << r.source_path << "\n";
    if (r.repro_exit >= 0)
      std::cout << "reproducer exit status " << r.repro_exit
                << (r.repro_exit == 1   ? " (reproduced)"
                    : r.repro_exit == 0 ? " (not reproduced)"
                                        : " (did not build or run)")
                << "\n";
    return 0;
  }

 private:
  int table(const Invocation& inv) const {
    if (inv.args.empty()) throw InputError("triage --table needs run directories");
    std::vector<std::string> dirs;
    for (const auto& a : inv.args) {
      std::error_code ec;  // errors (a name too long) read as "not there", never as a throw
      if (std::filesystem::exists(a + "/summary.json", ec)) {
        dirs.push_back(a);
        continue;
      }
      std::vector<std::string> sub;
      for (const auto& e : std::filesystem::directory_iterator(a, ec))
        if (std::filesystem::exists(e.path() / "summary.json", ec))
          sub.push_back(e.path().string());
      if (sub.empty()) throw InputError(a + ": no summary.json in it or in its folders");
      std::sort(sub.begin(), sub.end());
      dirs.insert(dirs.end(), sub.begin(), sub.end());
    }
    const auto verdicts =
        verdicts_.empty() ? std::vector<triage::VerdictRow>{} : triage::read_verdicts(verdicts_);
    std::string command = "stabfuzz triage --table";
    for (const auto& a : inv.args) command += " " + a;
    if (!verdicts_.empty()) command += " --verdicts " + verdicts_;
    const std::string md = triage::library_table(default_registry(), dirs, verdicts, command);
    if (out_.empty() || out_ == "-") {
      std::cout << md;
    } else {
      std::ofstream(out_) << md;
      std::cout << "table: " << out_ << " (" << dirs.size() << " runs)\n";
    }
    return 0;
  }

  corpus::Entry entry(const std::string& path, bool finding_given) const {
    if (finding_given && finding_ < 1)
      throw InputError("--finding must be at least 1 (a line of findings.jsonl)");
    if (!finding_given) {
      if (std::filesystem::is_directory(path))
        throw InputError(path +
                         " is a directory: give --finding N for line N of its findings.jsonl");
      return corpus::read_file(path);
    }
    const std::string file = path + "/findings.jsonl";
    const std::string text = reports::read_text(file);
    size_t start = 0;
    for (int64_t line = 1; start < text.size(); ++line) {
      const size_t end = std::min(text.find('\n', start), text.size());
      if (line == finding_) {
        try {
          return triage::entry_from_finding(json::parse(text.substr(start, end - start)));
        } catch (const json::ParseError& e) {
          throw InputError(file + ":" + std::to_string(line) + ": " + e.what());
        }
      }
      start = end + 1;
    }
    throw InputError(file + " has no line " + std::to_string(finding_));
  }

  int64_t finding_ = 0;
  std::string out_, verdicts_, prefix_;
  bool run_ = false, table_ = false;
};

}  // namespace

std::unique_ptr<Command> make_triage_command() { return std::make_unique<TriageCommand>(); }

}  // namespace stabfuzz::cli
