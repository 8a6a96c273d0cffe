// Isolation: a target that may crash or hang (a plugin, a library opting in with Target::isolated)
// runs in a forked child, so that a signal or an endless loop costs the child, not the campaign.
//
// One fork server per target x dtype: the child is forked once, serves one call at a time over a
// socket pair (the input in, the outputs and the CESTAC log out), and is forked again after it
// died or was killed on a timeout. The child is a fork of stabfuzz itself, so a plugin is mapped
// at the same addresses in both processes and the CESTAC sites it records symbolize in the parent.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/pipeline/verdict.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

// How a call ended when it produced no result.
// stdout_write: the call answered but wrote on stdout, which belongs to stabfuzz's report.
enum class Failure { none, crash, timeout, exception, stdout_write };
std::string_view failure_name(Failure f);  // "crash", "timeout", "exception", "stdout"

struct Attempt {
  Failure failure = Failure::none;
  std::string detail;  // "signal SIGSEGV (Segmentation fault)", "no result within 200 ms", ...
  std::vector<double> native;
  bool has_cestac = false;
  CestacOutput cestac;
};

class Isolator {
 public:
  // timeout_ms <= 0: wait for every call as long as it takes.
  Isolator(const Target& target, int64_t timeout_ms);
  ~Isolator();
  Isolator(const Isolator&) = delete;
  Isolator& operator=(const Isolator&) = delete;

  // Runs the native entry point and, when `req` is given and the target has one, the CESTAC one.
  Attempt run(const Input& in, const CestacRequest* req);
  int64_t restarts() const { return restarts_; }  // children forked after the first

 private:
  void start();
  // Ends the child (SIGKILL when `kill`), reaps it and describes how it ended.
  std::string stop(bool kill);

  const Target& target_;
  int64_t timeout_ms_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int64_t forks_ = 0, restarts_ = 0;
};

// One input judged: a verdict, or the failure that left nothing to judge.
struct Outcome {
  Verdict verdict;
  Failure failure = Failure::none;
  std::string detail;
  bool finding() const { return failure != Failure::none || verdict.finding(); }
  // crash for a crash, an exception or output on stdout, hang for a timeout, else the verdict's
  // kind.
  FindingKind kind() const;
};

// evaluate() through `iso` when it is given (the target's isolated runs), else in this process.
Outcome evaluate_outcome(const Family& family, const Target& target, const Input& in,
                         const CestacRequest& req, Isolator* iso);

}  // namespace stabfuzz::campaign
