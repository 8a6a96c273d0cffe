// `stabfuzz calibrate --suite broad`: CESTAC's digit estimate judged on kernels nobody tuned it on
// (cestac_suite_kernels.h), against the exact answers of MPFR (cestac_suite_exact.cc).
//
// For every case: the kernel runs on the stochastic type inside a CESTAC run of its own
// (seed, stream); the claim is digits() of the result, the truth the digits of its sample mean
// (mean()) against the exact answer:
//   true digits = clamp(-log10 |mean - exact| / |exact|, 0, full), full when mean == exact,
// full the format's digits (-log10 of its unit roundoff: 15.95 f64, 7.22 f32, 3.31 f16, 2.41 bf16);
// a non-finite mean has 0 true digits. An exact answer of 0 has no significant digit to get
// right: its true digits are 0 whatever the mean, so that a claim of at most 1 digit agrees
// (CESTAC reports 0 digits for an exact zero result and for a computational zero) and more is an
// overclaim. A case agrees when |claim - truth| <= 1, overclaims when claim > truth + 1 (the
// dangerous direction), underclaims when claim < truth - 1.
//
// Seeds: the tuning seeds (kTuneSeeds) are the ones anyone adjusting the engine's constants may
// look at; the evaluation seeds (kEvalSeeds), with other inputs and other rounding streams, are
// the ones the table in docs/results reports.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/bench/cestac_suite_cases.h"
#include "reports/json.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/op.h"

namespace stabfuzz::calibrate::suite {

inline const std::vector<uint64_t> kTuneSeeds{1, 2, 3};
inline const std::vector<uint64_t> kEvalSeeds{101, 102, 103};
inline constexpr int kDefaultCases = 200;  // per kind, dtype and seed

// What a stochastic type reports of one case's result.
struct Claim {
  double mean = 0;    // the sample mean the engine reports
  double digits = 0;  // its exact significant digits, as the engine estimates them
  bool zero = false;  // a computational zero
};

// A stochastic arithmetic under judgement (a Stoch type, a rounding mode): one case's claim.
struct Variant {
  std::string name;    // --variant NAME
  std::string scalar;  // how the docs name it: "Stoch<T, 3>"
  std::function<Claim(const Case&, uint64_t stream)> claim;
};

// The claim of S<T> (T the case's scalar type) on a case: inputs converted outside the run (they
// are exact in T), the kernel inside a run keyed by (case seed, stream), the statistics after it.
template <template <class> class S>
Claim claim_of(const Case& c, uint64_t stream, const cestac::Config& config) {
  return with_scalar(c.dtype, [&]<class T>() {
    using V = S<T>;
    const Args<V> args = args_of<V>(c.problem);
    V y;
    {
      cestac::Run run(c.seed, stream, config);
      y = evaluate_kernel<V>(c.kind, args);
    }
    return Claim{y.mean(), y.digits(), y.computational_zero()};
  });
}

template <template <class> class S>
Variant make_variant(std::string name, std::string scalar, cestac::Config config = {}) {
  return {std::move(name), std::move(scalar),
          [config](const Case& c, uint64_t stream) { return claim_of<S>(c, stream, config); }};
}

// The variants `--variant` chooses from, the default first (cestac_suite.cc: one line each).
const std::vector<Variant>& variants();
const Variant* find_variant(const std::string& name);

// -log10 |mean - exact| / |exact| clamped to [0, full] as the header says (0 for an exact zero).
double true_digits(double mean, const Exact& exact, double full);

struct Verdict {
  KernelKind kind;
  DType dtype;
  uint64_t seed = 0;
  int index = 0;
  double exact = 0;  // rounded to double
  bool exact_zero = false;
  Claim claim;
  double truth = 0;
};

struct Row {
  std::string kind;  // a kernel kind, or "all" for a dtype's overall row
  DType dtype = DType::f64;
  int cases = 0, agree = 0, over = 0, under = 0;
  int zeros = 0, zeros_flagged = 0;  // exact answers of 0; of them, computational zeros
  double worst_over = 0;             // largest claim - truth (0 if never above)
  double truth_min = 0, truth_median = 0, truth_max = 0;
};

struct Options {
  std::vector<uint64_t> seeds = kEvalSeeds;
  int cases = kDefaultCases;  // per kind, dtype and seed
  std::string kind;           // only this kind (empty: all)
  std::vector<DType> dtypes{DType::f64, DType::f32, DType::f16, DType::bf16};
};

struct Result {
  std::string variant, scalar;
  Options options;
  std::vector<Verdict> verdicts;
  std::vector<Row> rows;     // per kind and dtype, in the order of kinds()
  std::vector<Row> overall;  // per dtype
  double seconds = 0;
};

// The verdict on one case (also how a test replays case k of a kind at a seed).
Verdict judge(const Variant& v, const Case& c);
Result run(const Variant& v, const Options& o, std::ostream& progress);

// The per-kind table as Markdown (kinds with a row per dtype, then the overall rows).
std::string markdown_table(const Result& r);
// docs/results/cestac-calibration.md: the table, the command that produced it, what it counts.
// `others`: the same cases through the other variants, compared side by side after the table.
std::string markdown_doc(const Result& r, const std::vector<Result>& others,
                         const std::string& command);
json::Value to_json(const Result& r);

}  // namespace stabfuzz::calibrate::suite
