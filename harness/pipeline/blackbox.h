// Digits of a black box: significant digits of a target stabfuzz cannot recompile (a library),
// estimated without instrumentation from the spread of its results under the four IEEE rounding
// modes, and a check for nondeterminism (repeated calls, thread counts). docs/blackbox.md.
//
// Per output, with r_n the result to nearest and r_k those rounded upward, downward and toward
// zero (the mode set on the calling thread for the whole call):
//  - the four results equal bit for bit: the full digits of the format (dtype_max_digits), also
//    for 0, inf and NaN (the rounding mode does not move them; whether they are right is the
//    oracle's question);
//  - they differ and all four lie below the smallest normal value (underflow, 0 included), or are
//    all inf or the largest finite value of one sign (overflow: to nearest inf, downward the
//    largest finite): NaN, not judged (relative digits mean nothing at the format's edges; the
//    oracle judges them), left out of the minimum;
//  - they differ and one of them is inf or NaN: 0 digits, spread +inf;
//  - they differ and r_n is 0: 0 digits (a computational zero, as CESTAC counts it);
//  - else -log10(max_k |r_k - r_n| / |r_n|), clamped to [0, dtype_max_digits].
// The input is rounding-sensitive when the spread of some output, max_k |r_k - r_n| in ULPs of r_n
// (ulp_error; the smallest subnormal for 0), exceeds Options::sensitive_ulps; an overflow left
// unjudged does not count.
#pragma once

#include <cfenv>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "reports/json.h"
#include "stabfuzz/family.h"

namespace stabfuzz::pipeline::blackbox {

using Native = std::function<std::vector<double>(const Input&)>;

// Sets the calling thread's rounding mode (fesetround: x87 and MXCSR with glibc on x86-64) and
// restores the previous one when it ends, also when the scope is left by an exception.
class RoundingScope {
 public:
  explicit RoundingScope(int mode);
  ~RoundingScope();
  RoundingScope(const RoundingScope&) = delete;
  RoundingScope& operator=(const RoundingScope&) = delete;

 private:
  int saved_;
};

// Calls f(in) with the thread in `mode` (FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO).
// Not inlined, so that no arithmetic of the caller moves into or out of the mode.
std::vector<double> call_in_mode(const Native& f, const Input& in, int mode);

// Which nondeterminism the calls showed.
enum class Nondeterminism : uint8_t { none = 0, repeat = 1, threads = 2, both = 3 };
std::string_view nondeterminism_name(
    Nondeterminism n);  // "", "repeat", "threads", "repeat+threads"

struct Options {
  // An output whose spread over the four modes exceeds this many ULPs of r_n is rounding-sensitive.
  // The run uses 2 tol(n) (docs/blackbox.md): a directed rounding's error per operation is up to
  // one ULP where rounding to nearest's is half, so the family's error bound at condition 1
  // doubles.
  double sensitive_ulps = 4;
  bool repeat = true;   // call twice more to nearest and compare the bits
  bool threads = true;  // call with 1 thread and with all, when a thread count can be set
};

struct Result {
  bool measured = false;
  std::string note;             // why not measured (the call threw in a mode, sizes differed)
  std::vector<double> nearest;  // the outputs rounding to nearest
  std::vector<double> digits;   // per output (NaN: not judged, see above)
  double min_digits = 0;        // over judged outputs (the format's digits when none is)
  size_t worst = 0;             // output of min_digits
  double max_spread_ulps = 0;   // over outputs, in ULPs of r_n (+inf: see above)
  bool sensitive = false;
  Nondeterminism nondeterminism = Nondeterminism::none;
  // How the thread count was set ("omp_set_num_threads 1 vs 2"), or why it was not.
  std::string threads;
  bool threads_compared = false;
  double seconds = 0;  // spent on the extra calls
};

// A result that says why there was no measurement.
Result not_measured(std::string why);

// Digits of one output from its result to nearest and the three directed ones (rule above).
double output_digits(DType d, double nearest, const double directed[3]);

// The calls above on `in`: four rounding modes, two repeats, 1 thread and all threads.
Result measure(const Native& f, const Input& in, const Options& o);

// What a library target's run adds up to over its inputs (summary.json "blackbox").
struct Totals {
  int64_t measured_inputs = 0;
  int64_t not_measured_inputs = 0;
  std::string not_measured;  // why ("isolated", the last note)
  double min_digits = 0;     // over measured inputs; set by the first
  int64_t sensitive_inputs = 0;
  int64_t nondeterministic_inputs = 0;
  int64_t nondeterministic_repeat = 0;
  int64_t nondeterministic_threads = 0;
  std::string threads;  // the thread-count note of the last measured input
  double seconds = 0;
  void add(const Result& r);
  void skip(const std::string& why);
};

// A finding's "blackbox"; `oracle_worst`: the output the oracle found worst.
json::Value result_json(const Result& r, size_t oracle_worst);
json::Value totals_json(const Totals& t);  // a summary row's "blackbox"
// Two summary rows' "blackbox" joined (campaign units of one pair): counts and seconds added, the
// lower min_digits, the later notes. `a` may be null (the first unit had none).
json::Value merge_totals_json(const json::Value* a, const json::Value& b);
// One line for the console: digits, sensitive and nondeterministic inputs, threads, cost.
std::string totals_line(const Totals& t);

}  // namespace stabfuzz::pipeline::blackbox
