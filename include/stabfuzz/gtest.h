// stabfuzz in a library's own GoogleTest suite: one assertion runs the installed stabfuzz binary
// on an implementation of the user's plugin (stabfuzz/plugin.h) -- the family's generators, native
// and CESTAC runs, the MPFR oracle -- for a number of inputs and a seed, and fails with each
// finding's kind, input, digits, exact vs computed value, ULP error and replay command.
//
//   #include "stabfuzz/gtest.h"
//   TEST(MySoftmax, IsStable) {
//     stabfuzz::testing::Options o;
//     o.plugin = MYLIB_PLUGIN;             // the plugin .so holding the implementation
//     o.impl = "softmax/mylib/fast";       // FAMILY/VARIANT, as `stabfuzz --plugin ... --list`
//     o.runs = 50;                         // inputs per dtype
//     o.seed = 1;
//     STABFUZZ_EXPECT_STABLE(o);           // or EXPECT_TRUE(stabfuzz::testing::Stable(o))
//   }
//
// CMake: find_package(stabfuzz REQUIRED COMPONENTS gtest) and link stabfuzz::gtest (it links
// GTest::gtest and bakes in the installed binary's path); docs/plugins.md. The binary is, in
// order: Options::executable, the environment variable STABFUZZ_EXECUTABLE, the compile
// definition STABFUZZ_GTEST_EXECUTABLE, `stabfuzz` on PATH. POSIX only (posix_spawn), C++17.
//
// The verdict is stabfuzz's exit status: 0 passes; 1 (a finding of a failing kind, `--fail-on`)
// fails with the findings; anything else -- the binary missing, a usage or input error (exit 2,
// e.g. a plugin that does not load), an internal error, a signal, or a run that tested no input
// -- fails with the tool's error line. Never a silent pass.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifndef STABFUZZ_GTEST_EXECUTABLE
#define STABFUZZ_GTEST_EXECUTABLE "stabfuzz"
#endif

extern "C" char** environ;

namespace stabfuzz::testing {

// One check: `stabfuzz --plugin PLUGIN --target FAMILY --impl IMPL --dtype DTYPE --runs RUNS
// --seed SEED --max-findings MAX_FINDINGS --quiet --out DIR EXTRA_ARGS...`.
struct Options {
  std::string plugin;                   // the plugin .so (empty: a built-in implementation)
  std::string impl;                     // FAMILY/VARIANT, e.g. "softmax/mylib/fast"
  int runs = 100;                       // inputs per dtype
  unsigned long long seed = 1;          // every input and rounding replays from it
  std::string dtype = "all";            // f64, f32, f16, bf16 or all
  int max_findings = 3;                 // findings recorded (shrunk) per dtype
  std::vector<std::string> extra_args;  // e.g. {"--fail-on", "all"}, {"--timeout-ms", "500"}
  std::string executable;               // the stabfuzz binary (default: see the top of the file)
  int max_shown = 3;                    // findings spelled out in a failure message
  bool keep_dir = false;  // keep the run directory (kept anyway when there are findings)
};

// One finding of findings.jsonl, as text (numbers as stabfuzz wrote them).
struct Finding {
  std::string impl, dtype, kind, kind_detail, severity, detectors, regime, case_index;
  std::string max_ulp, error_over_tolerance, cond, digits, expected_digits;
  std::string worst_index, exact, computed, exact_dec, computed_dec;
  std::string input;   // the shrunk input, each tensor's shape and first values (hex floats)
  std::string sites;   // CESTAC instability sites: kind xcount at file:line
  std::string replay;  // the command line that reproduces this finding, runnable as printed
};

struct Result {
  std::string command;   // the command that ran, one line
  std::string dir;       // its --out directory (findings.jsonl, summary.json, report.md)
  int exit_code = -1;    // -1: it did not run or did not exit normally
  std::string error;     // why it did not run, or its last stderr line when it failed
  std::string failing;   // per failing dtype: inputs, failing inputs by kind (summary.json)
  long long inputs = 0;  // inputs tested, all dtypes together (summary.json)
  std::vector<Finding> findings;
};

namespace detail {

// A JSON value, just enough for findings.jsonl and summary.json. Scalars keep their text (a
// number's token, a string's decoded characters).
struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  std::string text;
  std::vector<std::string> keys;  // object: keys[i] names items[i]
  std::vector<Json> items;        // array elements or object values

  const Json* get(std::string_view key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
  std::string str(std::string_view key) const {
    const Json* v = get(key);
    return v && v->type != Type::array && v->type != Type::object ? v->text : std::string();
  }
  double number(std::string_view key) const {
    const Json* v = get(key);
    return v && v->type == Type::number ? std::strtod(v->text.c_str(), nullptr) : 0;
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}
  // false (and `error`) on malformed text.
  bool parse(Json& out, std::string& error) {
    if (!value(out, 0)) {
      error = error_ + " at offset " + std::to_string(i_);
      return false;
    }
    space();
    if (i_ != s_.size()) {
      error = "trailing characters at offset " + std::to_string(i_);
      return false;
    }
    return true;
  }

 private:
  bool fail(const char* what) {
    if (error_.empty()) error_ = what;
    return false;
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool value(Json& v, int depth) {
    if (depth > 64) return fail("nested too deeply");
    space();
    if (i_ >= s_.size()) return fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.type = Json::Type::string;
      return string(v.text);
    }
    if (word("null")) return true;
    for (const char* b : {"true", "false"})
      if (word(b)) {
        v.type = Json::Type::boolean;
        v.text = b;
        return true;
      }
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '\0' && std::strchr("+-0123456789.eE", s_[i_]) != nullptr)
      ++i_;
    if (i_ == start) return fail("unexpected character");
    v.type = Json::Type::number;
    v.text = std::string(s_.substr(start, i_ - start));
    return true;
  }
  // Consumes c when it is the next character.
  bool take(char c) {
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  // The items of an object or array after its opening bracket, up to `close`: item() parses one.
  template <class Item>
  bool items(char close, Item&& item) {
    ++i_;
    space();
    if (take(close)) return true;
    for (;;) {
      if (!item()) return false;
      space();
      if (take(',')) continue;
      if (take(close)) return true;
      return fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  bool object(Json& v, int depth) {
    v.type = Json::Type::object;
    return items('}', [&] {
      space();
      std::string key;
      if (i_ >= s_.size() || s_[i_] != '"' || !string(key)) return fail("expected a key");
      space();
      if (!take(':')) return fail("expected ':'");
      v.keys.push_back(std::move(key));
      v.items.emplace_back();
      return value(v.items.back(), depth + 1);
    });
  }
  bool array(Json& v, int depth) {
    v.type = Json::Type::array;
    return items(']', [&] {
      v.items.emplace_back();
      return value(v.items.back(), depth + 1);
    });
  }
  // A string at s_[i_] == '"'; \u escapes of the BMP become UTF-8.
  bool string(std::string& out) {
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (i_ + 4 > s_.size()) return fail("short \\u escape");
          const unsigned long u = std::strtoul(std::string(s_.substr(i_, 4)).c_str(), nullptr, 16);
          i_ += 4;
          if (u < 0x80) {
            out += static_cast<char>(u);
          } else if (u < 0x800) {
            out += static_cast<char>(0xC0 | (u >> 6));
            out += static_cast<char>(0x80 | (u & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (u >> 12));
            out += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (u & 0x3F));
          }
          break;
        }
        default:
          out += e;  // \" \\ \/
      }
    }
    return fail("unterminated string");
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

inline bool parse_json(std::string_view text, Json& out, std::string& error) {
  return JsonParser(text).parse(out, error);
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n \t");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

inline std::string join(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

inline std::string executable(const Options& o) {
  if (!o.executable.empty()) return o.executable;
  if (const char* env = std::getenv("STABFUZZ_EXECUTABLE"); env && *env) return env;
  return STABFUZZ_GTEST_EXECUTABLE;
}

// The shrunk input: each tensor's shape and up to 8 values (hex floats, as written).
inline std::string format_input(const Json& f) {
  const Json* in = f.get("input");
  if (!in || in->type != Json::Type::array) return "(none recorded)";
  std::string s;
  for (size_t k = 0; k < in->items.size(); ++k) {
    const Json& t = in->items[k];
    if (k) s += "; ";
    s += "x" + std::to_string(k) + "[";
    if (const Json* shape = t.get("shape"))
      for (size_t d = 0; d < shape->items.size(); ++d) s += (d ? "x" : "") + shape->items[d].text;
    s += "] = {";
    const Json* values = t.get("values");
    const size_t n = values ? values->items.size() : 0;
    for (size_t i = 0; i < n && i < 8; ++i) s += (i ? ", " : "") + values->items[i].text;
    if (n > 8) s += ", ... (" + std::to_string(n - 8) + " more)";
    s += "}";
  }
  if (const Json* params = f.get("params"))
    for (size_t i = 0; i < params->keys.size(); ++i)
      s += "; " + params->keys[i] + " = " + params->items[i].text;
  const std::string n = f.str("n"), original = f.str("original_n");
  if (!original.empty() && original != n) s += " (shrunk from " + original + " values)";
  return s;
}

inline std::string format_sites(const Json& f) {
  const Json* inst = f.get("instabilities");
  if (!inst) return "";
  std::string s;
  for (const Json& i : inst->items) {
    if (!s.empty()) s += ", ";
    s += i.str("kind") + " x" + i.str("count") + " at " + i.str("site");
  }
  return s;
}

inline Finding make_finding(const Json& f, const std::string& exe) {
  Finding r;
  r.impl = f.str("impl");
  r.dtype = f.str("dtype");
  r.kind = f.str("kind");
  r.kind_detail = f.str("kind_detail");
  r.severity = f.str("severity");
  r.detectors = f.str("detectors");
  r.regime = f.str("regime");
  r.case_index = f.str("case");
  r.max_ulp = f.str("max_ulp");
  r.error_over_tolerance = f.str("error_over_tolerance");
  r.cond = f.str("cond");
  r.digits = f.str("digits");
  r.expected_digits = f.str("expected_digits");
  r.worst_index = f.str("worst_index");
  r.exact = f.str("exact");
  r.computed = f.str("computed");
  r.exact_dec = f.str("exact_dec");
  r.computed_dec = f.str("computed_dec");
  r.input = format_input(f);
  r.sites = format_sites(f);
  r.replay = f.str("replay");
  // stabfuzz names itself `stabfuzz`: the binary that ran makes the line runnable as printed.
  if (r.replay.rfind("stabfuzz ", 0) == 0) r.replay = join({exe}) + r.replay.substr(8);
  return r;
}

// Runs argv with stdout and stderr into files; the exit status, or -1 and `error`.
inline int spawn(const std::vector<std::string>& argv, const std::string& out_file,
                 const std::string& err_file, std::string& error) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = "cannot run " + argv[0] + ": " + std::strerror(rc) +
            " (set STABFUZZ_EXECUTABLE to the stabfuzz binary)";
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
  if (WIFSIGNALED(status)) {
    error = argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Reads summary.json: the inputs tested and a line per failing dtype.
inline void read_summary(Result& r) {
  Json s;
  std::string error;
  if (!parse_json(slurp(r.dir + "/summary.json"), s, error)) return;
  const Json* results = s.get("results");
  if (!results) return;
  for (const Json& row : results->items) {
    r.inputs += static_cast<long long>(row.number("inputs"));
    if (row.str("failed") != "true") continue;
    r.failing += "  " + row.str("impl") + " " + row.str("dtype") + ": " +
                 row.str("failing_inputs") + " of " + row.str("inputs") + " inputs fail (";
    if (const Json* kinds = row.get("failing_by_kind"))
      for (size_t i = 0; i < kinds->keys.size(); ++i)
        r.failing += (i ? ", " : "") + kinds->keys[i] + " " + kinds->items[i].text;
    r.failing += "), worst " + row.str("max_ulp") + " ULP, min digits " +
                 (row.str("min_digits").empty() ? "-" : row.str("min_digits")) + "\n";
  }
}

inline std::string make_run_dir() {
  std::string base = ::testing::TempDir();
  if (base.empty()) base = "/tmp/";
  if (base.back() != '/') base += '/';
  std::string tmpl = base + "stabfuzz-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return "";
  return buf.data();
}

}  // namespace detail

// Runs stabfuzz as Options says and reads what it found. Never throws for a failed run: see
// Result::exit_code and Result::error.
inline Result Run(const Options& o) {
  Result r;
  const std::string exe = detail::executable(o);
  const std::string family = o.impl.substr(0, o.impl.find('/'));
  const std::string tmp = detail::make_run_dir();
  if (tmp.empty()) {
    r.error = std::string("cannot create a run directory under ") + ::testing::TempDir() + ": " +
              std::strerror(errno);
    return r;
  }
  r.dir = tmp + "/run";
  std::vector<std::string> argv{exe};
  if (!o.plugin.empty()) argv.insert(argv.end(), {"--plugin", o.plugin});
  argv.insert(argv.end(),
              {"--target", family, "--impl", o.impl, "--dtype", o.dtype, "--runs",
               std::to_string(o.runs), "--seed", std::to_string(o.seed), "--max-findings",
               std::to_string(o.max_findings), "--quiet", "--out", r.dir});
  argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
  r.command = detail::join(argv);
  if (exe.find('/') != std::string::npos && access(exe.c_str(), X_OK) != 0) {
    r.error = "cannot run " + exe + ": " + std::strerror(errno) +
              " (set STABFUZZ_EXECUTABLE to the stabfuzz binary)";
    return r;
  }
  const std::string out = tmp + "/stdout.txt", err = tmp + "/stderr.txt";
  r.exit_code = detail::spawn(argv, out, err, r.error);
  if (r.exit_code < 0) return r;
  if (r.exit_code != 0) r.error = detail::last_line(detail::slurp(err));
  detail::read_summary(r);
  std::istringstream lines(detail::slurp(r.dir + "/findings.jsonl"));
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    detail::Json f;
    std::string error;
    if (detail::parse_json(line, f, error))
      r.findings.push_back(detail::make_finding(f, exe));
    else
      r.error += (r.error.empty() ? "" : "; ") + r.dir +
                 "/findings.jsonl:" + std::to_string(number) + ": " + error;
  }
  return r;
}

namespace detail {

// A number as stabfuzz wrote it, printed with `precision` significant digits (`fixed`: digits
// after the point); "inf", "nan" and other text unchanged.
inline std::string number(const std::string& text, int precision, bool fixed = false) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return text;
  char buf[64];
  std::snprintf(buf, sizeof buf, fixed ? "%.*f" : "%.*g", precision, v);
  return buf;
}

}  // namespace detail

// One finding as the lines of a failure message.
inline std::string Describe(const Finding& f) {
  using detail::number;
  std::string s = f.kind + (f.kind_detail.empty() ? "" : " (" + f.kind_detail + ")") + " in " +
                  f.impl + " " + f.dtype + ", case " + f.case_index + ", regime " + f.regime +
                  ", severity " + f.severity + ", detected by " + f.detectors + "\n";
  s += "  input:    " + f.input + "\n";
  s += "  output[" + f.worst_index + "]: exact " + f.exact_dec + " (" + f.exact + "), computed " +
       f.computed_dec + " (" + f.computed + ")\n";
  s += "  error:    " + number(f.max_ulp, 7) + " ULP, " + number(f.error_over_tolerance, 3) +
       " x the tolerance at condition number " + number(f.cond, 3) + "\n";
  if (!f.digits.empty())
    s += "  digits:   " + number(f.digits, 1, true) + " significant digits (CESTAC), " +
         number(f.expected_digits, 1, true) + " expected from the conditioning\n";
  if (!f.sites.empty()) s += "  sites:    " + f.sites + "\n";
  s += "  replay:   " + f.replay + "\n";
  return s;
}

// Success when stabfuzz exits 0 after testing at least one input; otherwise a failure that names
// the findings (kind, input, digits, exact vs computed, ULP error, replay command) or the error.
inline ::testing::AssertionResult Stable(const Options& o) {
  const Result r = Run(o);
  // The run directory stays when it has findings to read (or keep_dir says so).
  if (!o.keep_dir && !r.dir.empty() && r.exit_code != 1) {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(r.dir).parent_path(), ec);
  }
  if (r.exit_code == 0 && r.inputs > 0) {
    return ::testing::AssertionSuccess()
           << "stabfuzz: " << o.impl << " stable on " << r.inputs << " inputs";
  }
  ::testing::AssertionResult fail = ::testing::AssertionFailure();
  if (r.exit_code == 1) {
    fail << "stabfuzz: " << o.impl << " is numerically unstable (seed " << o.seed << ", " << o.runs
         << " inputs per dtype):\n"
         << r.failing;
    for (size_t i = 0; i < r.findings.size() && i < static_cast<size_t>(o.max_shown); ++i)
      fail << "finding " << i + 1 << " of " << r.findings.size() << ": " << Describe(r.findings[i]);
    if (r.findings.empty()) fail << "(no finding recorded: " << r.error << ")\n";
    if (r.findings.size() > static_cast<size_t>(o.max_shown))
      fail << "... and " << r.findings.size() - static_cast<size_t>(o.max_shown)
           << " more findings\n";
    fail << "run directory: " << r.dir << " (findings.jsonl, report.md)";
  } else if (r.exit_code == 0) {
    fail << "stabfuzz tested no input of " << o.impl << " (dtype " << o.dtype
         << "; does the implementation run in it?)\n  command: " << r.command;
  } else {
    fail << "stabfuzz did not run: "
         << (r.exit_code > 0 ? "exit status " + std::to_string(r.exit_code) + ": " : "")
         << (r.error.empty() ? "no error message" : r.error) << "\n  command: " << r.command;
  }
  return fail;
}

}  // namespace stabfuzz::testing

// Non-fatal and fatal assertions over stabfuzz::testing::Stable(options): the failure message is
// Stable's, and more may be streamed in (STABFUZZ_EXPECT_STABLE(o) << "context").
#define STABFUZZ_STABLE_(options, fail)                                                           \
  switch (0)                                                                                      \
  case 0:                                                                                         \
  default:                                                                                        \
    if (const ::testing::AssertionResult stabfuzz_stable_ = ::stabfuzz::testing::Stable(options)) \
      ;                                                                                           \
    else                                                                                          \
      fail << stabfuzz_stable_.message()
#define STABFUZZ_EXPECT_STABLE(options) STABFUZZ_STABLE_(options, ADD_FAILURE())
#define STABFUZZ_ASSERT_STABLE(options) STABFUZZ_STABLE_(options, FAIL())
