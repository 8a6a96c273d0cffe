// The verdict rule (docs/verdict.md), applied output by output.
#include "harness/pipeline/verdict.h"

#include <algorithm>
#include <cmath>

#include "stabfuzz/errors.h"

namespace stabfuzz {

Severity Verdict::severity() const {
  if (!finding()) return Severity::none;
  if (nonfinite || max_ratio > 1e3 || (has_cestac && digits_deficit > 6)) return Severity::critical;
  if (max_ratio > 10 || (has_cestac && digits_deficit > 2)) return Severity::major;
  return Severity::minor;
}

std::string Verdict::detectors() const {
  if (oracle_fired && cestac_fired) return "oracle+cestac";
  if (oracle_fired) return "oracle";
  if (cestac_fired) return "cestac";
  if (nondeterministic) return "blackbox";
  return "";
}

namespace {

// What the failing outputs of an oracle verdict are, kind by kind.
struct FailingOutputs {
  bool nan = false, overflow = false, accuracy = false, flushed = false, subnormal_lost = false;

  void add(DType d, double computed, double exact) {
    const double tiny = dtype_min_normal(d);
    if (std::isnan(computed) && !std::isnan(exact)) {
      nan = true;
    } else if (std::isinf(computed) && std::isfinite(exact)) {
      overflow = true;
    } else if (std::fabs(exact) < tiny && std::fabs(computed) < tiny) {
      // An exact result below the normal range returned below it: flushed or lost there. An
      // exact 0 computed as -1.4e-6 is not this: the computed value is normal.
      (computed == 0 ? flushed : subnormal_lost) = true;
    } else {
      accuracy = true;
    }
  }

  void set_kind(Verdict& v) const {
    if (nan) {
      v.kind = FindingKind::nan;
    } else if (overflow) {
      v.kind = FindingKind::overflow;
    } else if (accuracy) {
      v.kind = FindingKind::accuracy;
    } else {
      v.kind = FindingKind::underflow;
      v.kind_detail = flushed && subnormal_lost ? "outputs below the normal range flushed or lost"
                      : flushed                 ? "outputs below the normal range flushed to zero"
                                                : "outputs in the subnormal range lost";
    }
  }
};

// Oracle detector: each output's ULP error against the tolerance scaled by its conditioning; the
// worst output's values; the kind of the failing outputs.
void judge_oracle(Verdict& v, DType d, const std::vector<double>& computed,
                  const OracleResult& oracle) {
  const size_t m = computed.size();
  FailingOutputs failing;
  for (size_t i = 0; i < m && i < oracle.exact.size(); ++i) {
    const double ex = oracle.exact[i], c = oracle.cond[i];
    v.max_cond = std::max(v.max_cond, c);
    double ratio;
    const double ulps = ulp_error(d, computed[i], ex);
    // A non-finite output of a finite exact result, unless it is inf at the overflow threshold
    // (ulp_error measures inf as the step after the largest finite value).
    if (std::isfinite(ex) && !std::isfinite(computed[i]) && std::isinf(ulps)) {
      v.nonfinite = true;
      ratio = INFINITY;
      v.max_ulp = INFINITY;
    } else {
      v.max_ulp = std::max(v.max_ulp, ulps);
      ratio = ulps / (v.tolerance_ulps * std::max(1.0, c));
    }
    if (!(ratio <= 1.0)) failing.add(d, computed[i], ex);
    if (i == 0 || ratio > v.max_ratio) {
      v.max_ratio = ratio;
      v.worst = i;
      v.computed = computed[i];
      v.exact = ex;
      v.cond = c;
    }
  }
  v.oracle_fired = v.nonfinite || v.max_ratio > 1.0;
  if (v.oracle_fired) failing.set_kind(v);
}

// The kind of a CESTAC finding that the oracle does not explain: a non-finite output where the
// family's outputs are finite is nan or overflow, any other loss of digits is accuracy.
FindingKind cestac_kind(const Family& family, const CestacOutput& cestac) {
  if (family.finite_outputs)
    for (double m : cestac.mean)
      if (!std::isfinite(m)) return std::isnan(m) ? FindingKind::nan : FindingKind::overflow;
  return FindingKind::accuracy;
}

// CESTAC detector, digits: each judged output's digits against what its format, the tolerance
// and its conditioning leave it; the run's minimum digits and the largest deficit.
void judge_digits(Verdict& v, const Family& family, DType d, const OracleResult& oracle,
                  const CestacOutput& cestac) {
  const double full = dtype_max_digits(d);
  v.min_digits = full;
  double worst_deficit = -INFINITY;
  for (size_t i = 0; i < cestac.digits.size(); ++i) {
    const double mean = cestac.mean[i];
    double dig = cestac.digits[i];
    if (!std::isfinite(mean)) dig = family.finite_outputs ? 0.0 : dig;
    // Without a decided oracle the magnitude is the samples' mean (the digits are not judged
    // then, see below, but the minimum reported still uses them).
    const bool have_exact = !v.undecidable && i < oracle.exact.size();
    const double mag = have_exact ? oracle.exact[i] : mean;
    const double c = have_exact ? std::max(1.0, oracle.cond[i]) : 1.0;
    const double available = available_digits(d, mag);
    // What the format can carry at this magnitude, less what the tolerance and the
    // conditioning allow to be lost (subnormal outputs get the same allowance).
    const double expected = std::min(available, full) - std::log10(v.tolerance_ulps * c);
    // Outputs that are exactly zero carry no digits; they do not set the run's minimum.
    if (available > 0 || !std::isfinite(mean)) v.min_digits = std::min(v.min_digits, dig);
    // Samples that agree exactly carry no rounding noise; a finite value is then fully judged
    // by the oracle. A non-finite value where outputs are always finite is wrong either way.
    // An output whose exact value overflows the format (a dot product past 65504 in f16) is
    // right to be infinite: the oracle has judged it, CESTAC's zero digits say nothing.
    if (!std::isfinite(mean) && have_exact && std::isinf(oracle.exact[i]) &&
        mean == oracle.exact[i])
      continue;
    // An undecidable oracle (mpfr_can_round failing up to the precision cap) almost always
    // means an exact value of 0 or within a hair of a rounding boundary: its conditioning is
    // unbounded, so no loss of digits is more than it explains (attention rows whose weighted
    // values cancel exactly came out at 10.6 of 13.9 digits in a campaign). Only non-finite
    // values, self-validation and divergences are judged then.
    const bool judged =
        (cestac.noisy[i] && !v.undecidable) || (!std::isfinite(mean) && family.finite_outputs);
    if (!judged) continue;
    const double deficit = expected - family.cestac_margin_digits - dig;
    if (deficit > worst_deficit) {
      worst_deficit = deficit;
      v.cestac_worst = i;
      v.cestac_digits = dig;
      v.expected_digits = expected;
    }
  }
  v.digits_deficit = std::isfinite(worst_deficit) ? worst_deficit : 0.0;
}

// CESTAC detector, validity: whether the samples disagreed on NaN/Inf in a way the exact outputs
// do not explain. Samples that disagree on overflow where the exact output overflows (a prefix
// sum whose exact value lies within an ULP of the threshold: rounded down it is the largest finite
// value, up it is inf) show the exact value's rounding, not an instability: the oracle has judged
// those outputs. Every output with a non-finite sample must then have an infinite exact value; a
// divergence that no output shows (a discarded intermediate) still counts.
bool unexplained_divergence(const Verdict& v, const OracleResult& oracle,
                            const CestacOutput& cestac) {
  bool overflow_explained = !v.undecidable;
  bool any_nonfinite = false;
  for (size_t i = 0; i < cestac.mean.size() && overflow_explained; ++i) {
    if (std::isfinite(cestac.mean[i])) continue;
    any_nonfinite = true;
    overflow_explained =
        i < oracle.exact.size() && std::isinf(oracle.exact[i]) && cestac.mean[i] == oracle.exact[i];
  }
  return cestac.log.counts[static_cast<int>(cestac::Kind::nonfinite_divergence)] > 0 &&
         !(any_nonfinite && overflow_explained);
}

}  // namespace

Verdict judge(const Family& family, const Input& in, const std::vector<double>& computed,
              const OracleResult& oracle, const CestacOutput* cestac) {
  Verdict v;
  const DType d = in.dtype;
  v.n = in.total_size();
  v.tolerance_ulps = family.tolerance_ulps(d, std::max<size_t>(v.n, 1));
  v.undecidable = !oracle.decidable;
  if (!v.undecidable) judge_oracle(v, d, computed, oracle);
  if (cestac) {
    v.has_cestac = true;
    v.log = cestac->log;
    v.self_validation_failed = cestac->log.self_validation_failed();
    judge_digits(v, family, d, oracle, *cestac);
    const bool divergence = unexplained_divergence(v, oracle, *cestac);
    const bool invalid = v.self_validation_failed || divergence;
    v.cestac_fired = v.digits_deficit > 0 || invalid;
    // Digits lost in a source-level operator are an accuracy finding even where the oracle saw
    // only outputs below the normal range.
    if (v.cestac_fired && (!v.oracle_fired || v.kind == FindingKind::underflow)) {
      v.kind = cestac_kind(family, *cestac);
      v.kind_detail.clear();
    }
  }
  return v;
}

namespace {

bool is_subnormal(DType d, double x) { return x != 0 && std::fabs(x) < dtype_min_normal(d); }

// The input with every subnormal value replaced: by 0 (to_zero) or by the smallest normal of its
// sign.
Input read_subnormals(const Input& in, bool to_zero) {
  Input out = in;
  const double tiny = dtype_min_normal(in.dtype);
  for (auto& a : out.args)
    for (double& x : a.values)
      if (is_subnormal(in.dtype, x)) x = to_zero ? std::copysign(0.0, x) : std::copysign(tiny, x);
  return out;
}

}  // namespace

void classify_subnormal_inputs(Verdict& v, const Family& family, const Input& in,
                               const std::vector<double>& computed) {
  if (!v.oracle_fired || v.cestac_fired || v.kind == FindingKind::underflow) return;
  bool any = false;
  for (const auto& a : in.args)
    for (double x : a.values) any |= is_subnormal(in.dtype, x);
  if (!any) return;
  for (const bool to_zero : {true, false}) {
    const Input read = read_subnormals(in, to_zero);
    const OracleResult oracle = family.oracle(read);
    if (!oracle.decidable) continue;
    Verdict w;
    w.tolerance_ulps = v.tolerance_ulps;
    judge_oracle(w, in.dtype, computed, oracle);
    if (w.oracle_fired && w.kind != FindingKind::underflow) continue;
    v.kind = FindingKind::underflow;
    v.kind_detail =
        to_zero ? "subnormal inputs read as zero" : "subnormal inputs read as the smallest normal";
    return;
  }
}

}  // namespace stabfuzz
