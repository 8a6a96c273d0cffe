// Picking the command, parsing its flags, and its help (harness/cli/command.h).
#include "harness/cli/command.h"

#include <algorithm>
#include <iostream>
#include <set>

#include "stabfuzz/errors.h"

namespace stabfuzz::cli {
namespace {

// The flags that take no value, over all commands (to find the command word after flags).
std::set<std::string> valueless_flags() {
  std::set<std::string> names{"help"};
  for (const auto& c : all_commands()) {
    const po::options_description d = c->options();
    for (const auto& o : d.options())
      if (o->semantic()->min_tokens() == 0) names.insert(o->long_name());
  }
  return names;
}

bool is_command_word(const std::string& w) {
  return w == "monitor" || (w != "run" && make_command(w) != nullptr);
}

// Old command lines may put flags before the command (`stabfuzz --quiet inject ...`): moves the
// command's name words (and monitor's subcommand) to the front.
std::vector<std::string> command_first(const std::vector<std::string>& words) {
  if (words.empty() || words[0].empty() || words[0][0] != '-') return words;
  const std::set<std::string> valueless = valueless_flags();
  std::vector<size_t> at;
  for (size_t i = 0; i < words.size() && words[i] != "--" && at.size() < 2; ++i) {
    const std::string& w = words[i];
    if (w.size() > 2 && w[0] == '-' && w[1] == '-') {
      if (w.find('=') == std::string::npos && !valueless.count(w.substr(2))) ++i;  // its value
    } else if (!w.empty() && w[0] != '-') {
      if (at.empty() && !is_command_word(w)) return words;  // the default run's error
      if (!at.empty() && words[at[0]] != "monitor") break;
      at.push_back(i);
    }
  }
  if (at.empty()) return words;
  std::vector<std::string> out;
  for (size_t i : at) out.push_back(words[i]);
  for (size_t i = 0; i < words.size(); ++i)
    if (std::find(at.begin(), at.end(), i) == at.end()) out.push_back(words[i]);
  return out;
}

int run_monitor(const std::vector<std::string>& words) {
  const std::string sub = words.size() > 1 ? words[1] : "";
  if (sub == "train" || sub == "sweep" || sub == "infer" || sub == "export" ||
      sub == "onnx-tests") {
    auto c = make_command("monitor " + sub);
    const Invocation inv = parse(*c, words, 2);
    if (inv.vm.count("help") && inv.vm["help"].as<bool>()) {
      std::cout << command_help(*c);
      return 0;
    }
    if (!inv.args.empty()) throw InputError("monitor: unexpected argument '" + inv.args[0] + "'");
    return c->run(inv);
  }
  if (sub == "--help") return dispatch({"help", "monitor"});
  throw InputError("monitor: expected 'train', 'sweep', 'infer', 'export' or 'onnx-tests'" +
                   (sub.empty() ? std::string() : ", got '" + sub + "'"));
}

}  // namespace

std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> v;
  for (auto make :
       {make_run_command, make_help_command, make_report_command, make_inject_command,
        make_replay_command, make_fuzz_command, make_fuzz_compare_command, make_campaign_command,
        make_merge_command, make_monitor_train_command, make_monitor_sweep_command,
        make_monitor_infer_command, make_monitor_export_command, make_monitor_onnx_tests_command,
        make_bench_command, make_calibrate_command, make_triage_command})
    v.push_back(make());
  return v;
}

std::unique_ptr<Command> make_command(const std::string& name) {
  for (auto& c : all_commands())
    if (name == c->name()) return std::move(c);
  return nullptr;
}

Invocation parse(Command& c, const std::vector<std::string>& words, size_t name_words) {
  Invocation inv;
  inv.words = words;
  po::options_description desc = c.options();
  desc.add_options()("help", po::bool_switch(), "show this help");
  po::options_description hidden;
  hidden.add_options()("args", po::value<std::vector<std::string>>(&inv.args));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  const std::vector<std::string> rest(words.begin() + std::min(name_words, words.size()),
                                      words.end());
  const std::string name = c.name();
  const std::string who = name == "run" ? "" : name + ": ";
  const std::string see = name == "run" ? "stabfuzz --help" : "stabfuzz help " + name;
  // Boost.Program_options fills its error messages by replacing %name% tokens with the words given,
  // in a loop that never ends when a word holds its own token (ci/selffuzz found `--time
  // %value%x` hanging): such a word is refused before Boost sees it.
  for (const auto& w : rest)
    for (size_t a = w.find('%'); a != std::string::npos; a = w.find('%', a + 1)) {
      const size_t b = w.find('%', a + 1);
      if (b != std::string::npos && b > a + 1 &&
          w.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", a + 1) == b)
        throw InputError(who + "'" + quoted_excerpt(w) +
                         "': a command-line word may not hold a %name% token");
    }
  try {
    po::store(po::command_line_parser(rest).options(all).positional(pos).run(), inv.vm);
    po::notify(inv.vm);
  } catch (const po::unknown_option& e) {
    throw InputError(who + "unknown option " + e.get_option_name() + " (see " + see + ")");
  } catch (const po::error& e) {
    throw InputError(who + e.what());
  }
  return inv;
}

int dispatch(const std::vector<std::string>& given) {
  const std::vector<std::string> words = command_first(given);
  if (!words.empty() && words[0] == "monitor") return run_monitor(words);
  std::unique_ptr<Command> c;
  size_t name_words = 1;
  if (words.empty() || words[0].empty() || words[0][0] == '-') {
    c = make_run_command();
    name_words = 0;
  } else if (!(c = make_command(words[0])) || words[0] == "run") {
    // "run" is the default run's name in help, not a command word.
    throw InputError("unknown command '" + words[0] + "' (stabfuzz help lists the commands)");
  }
  const Invocation inv = parse(*c, words, name_words);
  if (inv.vm["help"].as<bool>()) {
    std::cout << (name_words == 0 ? general_help() : command_help(*c));
    return 0;
  }
  return c->run(inv);
}

}  // namespace stabfuzz::cli
