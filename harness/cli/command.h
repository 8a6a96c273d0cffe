// The commands of stabfuzz. Each owns its flags: a Boost.Program_options description whose default
// values are the only defaults (help prints them), bound to the command's own fields, which it
// converts to its engine's configuration. Engines never see the command line.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stabfuzz::campaign {
struct CampaignOptions;
}

namespace stabfuzz::cli {

namespace po = boost::program_options;

// One parsed command line of a command.
struct Invocation {
  std::vector<std::string> words;  // the command line after the binary's name, command first
  std::vector<std::string> args;   // positional words after the command's name (and after `--`)
  po::variables_map vm;
  // Given on the command line (not its default).
  bool given(const char* flag) const { return vm.count(flag) && !vm[flag].defaulted(); }
};

class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;     // "campaign", "monitor train"; "run": the default
  virtual const char* summary() const = 0;  // one line, for `stabfuzz help`
  virtual const char* usage() const = 0;    // synopsis lines, each "stabfuzz ..."
  // The flags, bound to this object's fields (their defaults are set here, nowhere else).
  virtual po::options_description options() = 0;
  virtual int run(const Invocation& inv) = 0;
};

// Every command, in the order help lists them; the default run ("run") first.
std::vector<std::unique_ptr<Command>> all_commands();
// The command of that name ("monitor train"), or nullptr.
std::unique_ptr<Command> make_command(const std::string& name);

// Parses `words` (the command's `name_words` name words first) into the command's fields. Throws
// InputError with one line on a bad flag: "campaign: unknown option --keep-going ...".
Invocation parse(Command& c, const std::vector<std::string>& words, size_t name_words);

// Help: one command's flags with their defaults; `stabfuzz help`'s list of commands; `stabfuzz
// --help` (usage, the default run's flags, the commands); docs/cli.md.
std::string command_help(Command& c);
std::string command_list();
std::string general_help();
std::string markdown();

// The whole command line: picks the command, parses its flags, runs it. Returns the exit code;
// throws InputError on a usage error.
int dispatch(const std::vector<std::string>& words);

// libFuzzer's merge and fork children re-run the binary with libFuzzer's flags only: runs such a
// child with its parent's options (it does not return); nullopt when this process is not one.
std::optional<int> libfuzzer_child(int argc, char** argv);

// A replay line: `stabfuzz` and exactly the given flags (cli name, value), in the order of the
// default run's flags.
std::string command_line(const std::vector<std::pair<std::string, std::string>>& flags);

// The campaign's configuration from a command line after `campaign` (what `stabfuzz campaign`
// would run; for tests).
campaign::CampaignOptions campaign_config(const std::vector<std::string>& words);

// The commands, each defined in its own file.
std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_help_command();
std::unique_ptr<Command> make_report_command();
std::unique_ptr<Command> make_inject_command();
std::unique_ptr<Command> make_replay_command();
std::unique_ptr<Command> make_fuzz_command();
std::unique_ptr<Command> make_fuzz_compare_command();
std::unique_ptr<Command> make_campaign_command();
std::unique_ptr<Command> make_merge_command();
std::unique_ptr<Command> make_monitor_train_command();
std::unique_ptr<Command> make_monitor_sweep_command();
std::unique_ptr<Command> make_monitor_infer_command();
std::unique_ptr<Command> make_monitor_onnx_tests_command();
std::unique_ptr<Command> make_monitor_export_command();
std::unique_ptr<Command> make_bench_command();
std::unique_ptr<Command> make_calibrate_command();
std::unique_ptr<Command> make_triage_command();

}  // namespace stabfuzz::cli
