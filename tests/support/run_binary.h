// Runs the stabfuzz binary in a shell and captures its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace stabfuzz::testing {

struct Output {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// `args` is appended to the binary path as shell words.
inline Output run_stabfuzz(const std::string& args, const std::string& cwd = "") {
  const std::string base = "/tmp/stabfuzz_test_" + std::to_string(::getpid());
  const std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") +
                          std::string(STABFUZZ_BINARY) + " " + args + " > " + base + ".out 2> " +
                          base + ".err";
  const int status = std::system(cmd.c_str());
  Output o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(base + ".out");
  o.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return o;
}

inline int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline std::string temp_dir(const std::string& tag) {
  char tmpl[] = "/tmp/stabfuzz_XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  return std::string(d ? d : "/tmp") + (tag.empty() ? "" : "/" + tag);
}

}  // namespace stabfuzz::testing
