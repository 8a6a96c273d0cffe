// Flag parsing with Boost.Program_options, generated from the one flag table.
#include "harness/cli/options.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "harness/core/duration.h"
#include "stabfuzz/errors.h"

namespace po = boost::program_options;

namespace stabfuzz::cli {
namespace {

po::options_description describe(Options* o) {
  po::options_description desc("Options", 100, 50);
  auto add = desc.add_options();
#define STABFUZZ_FLAG(member, type, name, def, value_label, help)                              \
  if (o)                                                                                       \
    add(name, po::value<type>(&o->member)->default_value(def)->value_name(value_label), help); \
  else                                                                                         \
    add(name, po::value<type>()->default_value(def)->value_name(value_label), help);
#define STABFUZZ_SWITCH(member, name, help) \
  add(name, po::bool_switch(o ? &o->member : nullptr), help);
#define STABFUZZ_OPTIONAL(member, type, name, def, implicit, value_label, help) \
  add(name,                                                                     \
      po::value<type>(o ? &o->member : nullptr)                                 \
          ->default_value(def)                                                  \
          ->implicit_value(implicit)                                            \
          ->value_name(value_label),                                            \
      help);
#define STABFUZZ_LIST(member, name, value_label, help)              \
  add(name,                                                         \
      po::value<std::vector<std::string>>(o ? &o->member : nullptr) \
          ->composing()                                             \
          ->value_name(value_label),                                \
      help);
#include "harness/cli/flags.inc"
#undef STABFUZZ_FLAG
#undef STABFUZZ_SWITCH
#undef STABFUZZ_OPTIONAL
#undef STABFUZZ_LIST
  return desc;
}

}  // namespace

Options parse(int argc, const char* const* argv) {
  Options o;
  po::options_description desc = describe(&o);
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::vector<std::string>>(&o.command));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("command", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  o.time_s = parse_duration(o.time, "--time");
  o.runs_given = vm.count("runs") && !vm["runs"].defaulted();
  o.seed_given = vm.count("seed") && !vm["seed"].defaulted();
  o.model_given = vm.count("model") && !vm["model"].defaulted();
  o.data_given = vm.count("data") && !vm["data"].defaulted();
  o.precision_given = vm.count("precision") && !vm["precision"].defaulted();
  return o;
}

std::string help_text() {
  std::ostringstream os;
  os << "stabfuzz: finds numerical instability in operator libraries\n\n"
        "Usage:\n"
        "  stabfuzz --target FAMILY [--impl ID] [--dtype f32|f64] [--runs N | --budget-s S]\n"
        "           [--seed S] [--out DIR]\n"
        "  stabfuzz --list\n"
        "  stabfuzz inject [--family F|all] --budget-s S [--seed S] [--generator regimes|uniform]\n"
        "           [--json PATH] [--save-corpus DIR]\n"
        "  stabfuzz replay PATH... [--junit FILE]   (corpus files or directories; exit 1 if one "
        "fails)\n"
        "  stabfuzz fuzz --target FAMILY [--impl ID] [--dtype D] [--time DURATION] [--runs N] "
        "[--seed S]\n"
        "           [--corpus DIR] [--feedback error|coverage] [--keep-going] [--out DIR] [-- "
        "LIBFUZZER_FLAGS]\n"
        "  stabfuzz fuzz-compare [MUTANT...] [--runs N] [--time S] [--seed S] [--out DIR] [--json "
        "PATH]\n"
        "  stabfuzz monitor train [--model mlp|cnn] [--data digits|fashion-mnist] [--lr X] "
        "[--steps N]\n"
        "           [--loss ce|mse|ce-naive] [--batch B] [--seed S] [--out DIR]\n"
        "  stabfuzz monitor sweep [--lr-grid A,B,..] [--k-list 1,3,5,7] [--init-seeds N] ...\n"
        "  stabfuzz campaign [--targets all|LIST] [--time DURATION] [--jobs N] [--out DIR] "
        "[--resume]\n"
        "           [--baseline DIR] [--shard I/N] [--runs N]   (nightly: every target, "
        "checkpointed)\n"
        "  stabfuzz merge DIR... --out OUT [--baseline DIR]   (join campaign shards)\n"
        "  stabfuzz --plugin LIB.so --target FAMILY ...   (your targets, README \"Plugins\")\n\n"
        "Each implementation runs on generated inputs from the family's value regimes, natively "
        "and\n"
        "under CESTAC stochastic arithmetic, and is judged against an MPFR oracle: a finding means "
        "it\n"
        "lost more accuracy than the problem's condition number explains.\n\n"
     << describe(nullptr)
     << "\nExit status: 0 no finding in a reference or library implementation (injected ones are\n"
        "expected to have some), 1 at least one, 2 usage or input error.\n";
  return os.str();
}

std::string command_line(const std::vector<std::pair<std::string, std::string>>& flags) {
  std::string out = "stabfuzz";
  auto emit = [&](const char* name) {
    for (const auto& [k, v] : flags)
      if (k == name) out += std::string(" --") + name + " " + v;
  };
#define STABFUZZ_FLAG(member, type, name, def, value_label, help) emit(name);
#define STABFUZZ_SWITCH(member, name, help) emit(name);
#define STABFUZZ_OPTIONAL(member, type, name, def, implicit, value_label, help) emit(name);
#define STABFUZZ_LIST(member, name, value_label, help) emit(name);
#include "harness/cli/flags.inc"
#undef STABFUZZ_FLAG
#undef STABFUZZ_SWITCH
#undef STABFUZZ_OPTIONAL
#undef STABFUZZ_LIST
  return out;
}

}  // namespace stabfuzz::cli
