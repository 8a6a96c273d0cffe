// The evaluation loop every in-process run shares (`stabfuzz --target`, `inject`, `fuzz-compare`):
// the inputs of one target in a fixed order, each evaluated (native, CESTAC, oracle, verdict; in
// the target's fork server when it is isolated) and handed to the caller, who counts, shrinks and
// records. The generators' inputs are reproducible from (seed, dtype, index) alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/campaign/isolate.h"
#include "stabfuzz/family.h"

namespace stabfuzz::campaign {

// regimes: the family's value regimes (pipeline::make_case). uniform: the same shapes and
// parameters, every tensor's values drawn uniformly from [-1, 1], or from [0, 1] when the family
// rejects negatives, or kept from the regime when it rejects both (class labels, probabilities).
enum class Generator { regimes, uniform };
std::optional<Generator> parse_generator(std::string_view s);
std::string_view generator_name(Generator g);

// The input a generator gives to case `index` of a family in dtype d. A regime input that breaks
// its family's contract is a harness bug: std::logic_error, never an input to judge.
Input generate_case(const Family& family, Generator g, DType d, uint64_t seed, int64_t index);

// Which cases a loop runs and how each is evaluated.
struct CasePlan {
  // Case k has dtype dtypes[k % n] and is the generator's case k / n of that dtype (n =
  // dtypes.size()): one dtype gives the runner's order, a target's dtypes inject's.
  std::vector<DType> dtypes;
  Generator generator = Generator::regimes;
  uint64_t seed = 0;
  int64_t first = 0;                                   // the first case k
  int64_t last = std::numeric_limits<int64_t>::max();  // one past the last
  // Cases stop once budget_s seconds have passed since `start` (checked before each case; the
  // first case always runs).
  double budget_s = std::numeric_limits<double>::infinity();
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  cestac::Config cestac;
  // The CESTAC stream: one per target and dtype (what `stabfuzz replay` uses, so a saved input
  // replays bit for bit), or one per case (the runner: pipeline::cestac_request).
  bool stream_per_case = false;
  Isolator* isolator = nullptr;  // the target's fork server, or nullptr: in this process
};

// One case of a loop and its outcome.
struct CaseRun {
  int64_t k;      // the loop's case number
  DType dtype;    // plan.dtypes[k % n]
  int64_t index;  // the generator's case k / n of that dtype
  const Input& input;
  const CestacRequest& request;
  const Outcome& outcome;
  const Verdict& verdict;  // outcome.verdict
};

// The CESTAC request of one target and dtype that replay uses for every input.
CestacRequest target_request(const Target& t, DType d, uint64_t seed, const cestac::Config& config);

// The evaluation loop: cases plan.first, plan.first + 1, ... of target t until plan.last or the
// budget; `visit` sees each and returns false to stop.
void run_cases(const Family& f, const Target& t, const CasePlan& plan,
               const std::function<bool(const CaseRun&)>& visit);

}  // namespace stabfuzz::campaign
