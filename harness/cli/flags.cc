// The shared flags (flags.h): names, values, meanings and the defaults they usually have.
#include "harness/cli/flags.h"

#include <chrono>
#include <cmath>
#include <string>

#include "harness/pipeline/finding_kind.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::cli::flag {

void toggle(Desc& d, const char* name, bool* v, const char* help) {
  d.add_options()(name, po::bool_switch(v), help);
}

void plugin(Desc& d, std::vector<std::string>* v, const char* help) {
  d.add_options()("plugin",
                  po::value<std::vector<std::string>>(v)->composing()->value_name("LIB.so"), help);
}

void timeout_ms(Desc& d, int64_t* v, const char* help) {
  value<int64_t>(d, "timeout-ms", v, 2000, "MS", help);
}

void target(Desc& d, std::string* v, const char* help, const char* value_name) {
  value(d, "target", v, value_name, help);
}

void impl(Desc& d, std::string* v) {
  value(d, "impl", v, "ID",
        "test only this implementation, e.g. softmax/cpu/stable (default: all selected)");
}

void dtype(Desc& d, std::string* v) {
  value(d, "dtype", v, "all", "f64|f32|f16|bf16|all", "dtypes to test");
}

void runs(Desc& d, int64_t* v, int64_t def, const char* help) {
  value<int64_t>(d, "runs", v, def, "N", help);
}
void runs(Desc& d, int64_t* v, const char* help) { value(d, "runs", v, "N", help); }

void seed(Desc& d, uint64_t* v, uint64_t def, const char* help) {
  // At most 2^53: summary.json and the checkpoints store seeds as JSON numbers (doubles), so a
  // larger one would come back as another seed. Also catches "-1", which the parser wraps to
  // 2^64-1.
  d.add_options()(
      "seed", po::value<uint64_t>(v)->default_value(def)->value_name("S")->notifier([](uint64_t s) {
        if (s > kMaxSeed)
          throw InputError("--seed " + std::to_string(s) +
                           " is out of range: a whole number from 0 to " +
                           std::to_string(kMaxSeed) + " (2^53; 0 picks one)");
      }),
      help);
}
void seed(Desc& d, uint64_t* v) {
  seed(d, v, 0, "seed of the run; every input and rounding replays from it (0: pick one, printed)");
}

void out(Desc& d, std::string* v, const char* help) { value(d, "out", v, "DIR", help); }

void time(Desc& d, std::string* v, const char* def, const char* help) {
  value(d, "time", v, def, "DURATION", help);
}

void generator(Desc& d, std::string* v, const char* help) {
  value(d, "generator", v, "regimes", "regimes|uniform", help);
}

void max_findings(Desc& d, int64_t* v) {
  value<int64_t>(d, "max-findings", v, 10, "N",
                 "findings recorded (shrunk and written) per implementation and dtype");
}

void cancel_digits(Desc& d, int* v) {
  value<int>(d, "cancel-digits", v, cestac::kDefaultCancelDigits, "K",
             "CESTAC reports a cancellation when one + or - loses at least K exact digits");
}

void check_finite(const char* name, double v) {
  if (!std::isfinite(v)) throw InputError(std::string("--") + name + " must be a finite number");
}

void shrink_evals(Desc& d, int64_t* v) {
  d.add_options()(
      "shrink-evals",
      po::value<int64_t>(v)->default_value(1000)->value_name("N")->notifier([](int64_t n) {
        if (n < 0) throw InputError("--shrink-evals must not be negative");
      }),
      "evaluations one finding's shrinking may spend (0: no shrinking)");
}

void json(Desc& d, std::string* v) {
  d.add_options()("json", po::value<std::string>(v)->implicit_value("-")->value_name("PATH"),
                  "also write the result as JSON to PATH (alone or '-': standard output)");
}

void quiet(Desc& d, bool* v) { toggle(d, "quiet", v, "print only the summary table"); }

void no_reports(Desc& d, bool* v) {
  toggle(d, "no-reports", v,
         "write only findings.jsonl and summary.json, no report.md/html or junit.xml (campaign "
         "units)");
}

void fail_on(Desc& d, std::string* v) {
  value<std::string>(
      d, "fail-on", v, KindSet::defaults().str(), "KINDS",
      "finding kinds that make the exit code 1: a comma-separated list of accuracy, overflow, "
      "nan, underflow, nondeterminism, crash, hang, or all or none (underflow, the FTZ/DAZ "
      "policy, is reported but does not fail by default)");
}

void check_cancel_digits(int v) {
  if (v < 1 || v > 15) throw InputError("--cancel-digits must be in 1..15");
}

void check_max_findings(int64_t v) {
  if (v < 0) throw InputError("--max-findings must not be negative");
}

std::optional<DType> dtype_of(const std::string& v) {
  if (v == "all") return std::nullopt;
  auto d = parse_dtype(v);
  if (!d) throw InputError("unknown --dtype '" + v + "' (f64, f32, f16, bf16 or all)");
  return d;
}

uint64_t pick_seed(uint64_t seed) {
  if (seed != 0) return seed;
  return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count() %
                               1000000007ULL) +
         1;
}

}  // namespace stabfuzz::cli::flag
