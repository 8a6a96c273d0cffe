// libFuzzer targets for stabfuzz's own parsers (docs/robustness.md): each executable
// bin/selffuzz/<target>_selffuzz feeds arbitrary bytes to one reader a user's files or command
// line reach. Built with AddressSanitizer and UndefinedBehaviorSanitizer (cmake/selffuzz.cmake);
// the seed corpora are corpora/harness/<target>/, and `ci/selffuzz` runs them.
//
// The contract each target checks: a bad input ends in InputError, the one-line error stabfuzz
// prints with exit code 2 (json::ParseError for the JSON reader, whose callers add the file name).
// Any other exception, a crash, a sanitizer report, a hang or a text that does not read back the
// same after being written is a bug. Nothing here touches the file system.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/campaign.h"
#include "harness/campaign/campaign_state.h"
#include "harness/campaign/plan.h"
#include "harness/cli/command.h"
#include "harness/corpus/corpus.h"
#include "harness/fuzz/decoder.h"
#include "harness/monitor/weights.h"
#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/eval.h"
#include "harness/onnx/model.h"
#include "harness/onnx/npy.h"
#endif
#include "reports/json.h"
#include "reports/run_data.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/family.h"

#ifndef STABFUZZ_SELFFUZZ_TARGET
#error "STABFUZZ_SELFFUZZ_TARGET names the target (cmake/selffuzz.cmake)"
#endif

namespace {

using namespace stabfuzz;

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "selffuzz: %s\n", what.c_str());
  std::abort();
}

// corpus: a corpus file (corpora/README.md). What parses writes back to a text that parses to the
// same text.
void corpus_target(std::string_view text) {
  corpus::Entry e;
  try {
    e = corpus::parse(text, "input.txt");
  } catch (const InputError&) {
    return;
  }
  const std::string once = corpus::format(e);
  std::string twice;
  try {
    twice = corpus::format(corpus::parse(once, "formatted.txt"));
  } catch (const InputError& err) {
    bug(std::string("a parsed corpus entry, written, does not read: ") + err.what());
  }
  if (once != twice) bug("a corpus entry does not read back as written");
}

// findings: a run's findings.jsonl (bad lines are skipped and named) and, the same bytes, its
// summary.json.
void findings_target(const std::string& text) {
  reports::RunData run;
  reports::read_findings(text, "findings.jsonl", run);
  try {
    reports::read_summary(text, "summary.json", run);
  } catch (const InputError&) {
  }
}

// checkpoint: a campaign's campaign.json.
void checkpoint_target(const std::string& text) {
  try {
    campaign::parse_state(text, "campaign.json");
  } catch (const InputError&) {
  }
}

// model: a `stabfuzz monitor` model file; what parses writes back to the same text.
void model_target(const std::string& text) {
  monitor::ModelFile m;
  try {
    m = monitor::parse_model_file(text, "model.txt");
  } catch (const InputError&) {
    return;
  }
  const std::string once = monitor::model_file_text(m);
  try {
    if (monitor::model_file_text(monitor::parse_model_file(once, "written.txt")) != once)
      bug("a model file does not read back as written");
  } catch (const InputError& err) {
    bug(std::string("a parsed model, written, does not read: ") + err.what());
  }
}

// decoder: `stabfuzz fuzz`'s bytes-to-input decoder, on every family (the first byte picks it,
// the second the base). It takes any bytes: it may not throw, and its input is always valid.
void decoder_target(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const auto& families = default_registry().families();
  const Family& family = families[data[0] % families.size()];
  const auto base = data[1] & 1 ? fuzz::Base::uniform : fuzz::Base::regimes;
  const std::vector<DType> dtypes(std::begin(kAllDTypes), std::end(kAllDTypes));
  const fuzz::Decoded d = fuzz::decode(family, dtypes, data + 2, size - 2, base);
  if (!d.valid) bug(family.name + ": the decoded input is not valid: " + d.reject);
}

// cli: a command line, one word per line: every command's flags, the campaign's configuration
// and its target selectors. A word that could name a file outside the working directory (absolute,
// hidden, or with "..") skips the input: nothing here may read /dev/stdin or wander the disk.
void cli_target(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size() && words.size() < 24) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  for (const auto& w : words)
    if (w.starts_with('/') || w.starts_with('.') || w.find("..") != std::string::npos ||
        w.find("=/") != std::string::npos || w.find('\0') != std::string::npos)
      return;
  try {
    if (!words.empty() && words[0] == "campaign") {
      const auto c = cli::campaign_config({words.begin() + 1, words.end()});
      std::vector<std::string> unavailable;
      campaign::work_list(default_registry(), c.targets, &unavailable);
      return;
    }
    // As dispatch picks it: a two-word command ("monitor train"), a command, or the default run.
    size_t name_words = 2;
    std::unique_ptr<cli::Command> c;
    if (words.size() >= 2) c = cli::make_command(words[0] + " " + words[1]);
    if (!c && words[0] != "run") name_words = 1, c = cli::make_command(words[0]);
    if (!c) name_words = 0, c = cli::make_command("run");
    if (!c) bug("no run command");
    cli::parse(*c, words, name_words);
  } catch (const InputError&) {
  }
}

// json: the JSON reader under every file above; what reads writes back to the same text.
void json_target(std::string_view text) {
  json::Value v;
  try {
    v = json::parse(text);
  } catch (const json::ParseError&) {
    return;
  }
  const std::string once = json::dump(v);
  try {
    if (json::dump(json::parse(once)) != once) bug("a JSON value does not read back as written");
  } catch (const json::ParseError& err) {
    bug(std::string("a parsed JSON value, written, does not read: ") + err.what());
  }
}

}  // namespace

#ifdef STABFUZZ_HAVE_ONNX
// An ONNX model's bytes: read, then, when small (the windows of Conv and pooling bound no work,
// so those run only in the tests), interpreted on 3-element inputs.
void onnx_target(const std::string& bytes) {
  onnx::Model m;
  try {
    m = onnx::parse_model(bytes, "model.onnx");
  } catch (const InputError&) {
    return;
  }
  size_t weights = 0;
  for (const auto& [name, t] : m.initializers) weights += t.size();
  if (m.nodes.size() > 8 || weights > 64) return;
  for (const auto& n : m.nodes)
    if (n.op == "Conv" || n.op == "MaxPool" || n.op == "AveragePool") return;
  onnx::Interpreter<double>::Values v;
  try {
    for (const auto& [name, t] : m.initializers) v[name] = onnx::Interpreter<double>::convert(t);
    for (const auto& i : m.inputs)
      v[i] = onnx::Interpreter<double>::convert({onnx::Elem::float32, {3}, {0.5, -1, 2}});
    onnx::Interpreter<double>::run(m, v);
  } catch (const InputError&) {
  }
}

// A .npy file's bytes: read; what reads is written again and reads back the same.
void npy_target(const std::string& bytes) {
  onnx::HostTensor t;
  try {
    t = onnx::parse_npy(bytes, "x.npy");
  } catch (const InputError&) {
    return;
  }
  const onnx::HostTensor back = onnx::parse_npy(onnx::npy_bytes(t), "written.npy");
  if (back.elem != t.elem || back.shape != t.shape || back.values.size() != t.values.size())
    bug("a .npy file read, written and read again changed its type or shape");
  for (size_t i = 0; i < t.values.size(); ++i)
    if (!(back.values[i] == t.values[i]) &&
        !(std::isnan(back.values[i]) && std::isnan(t.values[i])))
      bug("a .npy file read, written and read again changed value " + std::to_string(i));
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string_view target = STABFUZZ_SELFFUZZ_TARGET;
  if (target == "corpus")
    corpus_target(text);
  else if (target == "findings")
    findings_target(text);
  else if (target == "checkpoint")
    checkpoint_target(text);
  else if (target == "model")
    model_target(text);
#ifdef STABFUZZ_HAVE_ONNX
  else if (target == "onnx")
    onnx_target(text);
  else if (target == "npy")
    npy_target(text);
#endif
  else if (target == "decoder")
    decoder_target(data, size);
  else if (target == "cli")
    cli_target(text);
  else if (target == "json")
    json_target(text);
  else
    bug("unknown target " + std::string(target));
  return 0;
}
