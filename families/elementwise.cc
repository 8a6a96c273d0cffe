// The elementwise families (exp, log, log1p, expm1, tanh, erf, sigmoid, log_sigmoid, softplus,
// silu, gelu, gelu_tanh): contracts, value regimes, tolerances and stable CPU targets.
//
// Each is y_i = f(x_i) over one row. The oracle (oracles/elementwise.cc) rounds f correctly and
// gives cond_i = |x f'(x) / f(x)|. Tolerances do not grow with n: each output is one evaluation.
#include "oracles/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "families/all_families.h"
#include "families/regimes.h"
#include "injectors/faultable.h"
#include "stabfuzz/op.h"
#include "targets/cpu/elementwise.h"

namespace stabfuzz::families {
namespace {

using namespace targets;  // NOLINT: the reference kernels this file registers

using oracle::Unary;
using regime::row_input;
using regime::row_length;

// ---- value regimes ------------------------------------------------------------------------------

using Draw = std::function<double(Entropy&, DType)>;

// A regime whose values are drawn independently, then rounded to the dtype; rows of up to max_n.
Regime values(std::string name, std::string description, Draw draw,
              size_t max_n = regime::kMaxRowLength) {
  return {std::move(name), std::move(description), [draw, max_n](Entropy& e, DType d) {
            std::vector<double> v(row_length(e, max_n));
            for (auto& x : v) x = draw(e, d);
            return row_input(d, std::move(v));
          }};
}

double max_finite(DType d) {
  const int p = dtype_precision(d);
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - p), 1 - std::ilogb(dtype_min_normal(d)));
}
double denorm_min(DType d) { return std::ldexp(dtype_min_normal(d), 1 - dtype_precision(d)); }
// x where e^x is the smallest subnormal (-103.3 f32, -744.4 f64).
double exp_subnormal_floor(DType d) { return std::log(denorm_min(d)); }

double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }
// Log-uniform in [lo, hi], hi capped at the largest finite value.
double magnitude(Entropy& e, DType d, double lo, double hi) {
  const double top = std::min(hi, max_finite(d));
  return std::min(e.log_uniform(lo, top), top);
}

// Below u, log1p(x) and expm1(x) round to x: the region where those forms matter. The range
// starts at the smallest subnormal where that is above 1e-30 (f16: 6e-8..4.9e-4, most of it
// subnormal) and reaches u where that is above 1e-5 (f16, bf16).
Regime tiny() {
  return values("tiny",
                "|x| log-uniform in [max(1e-30, smallest subnormal), max(1e-5, u)], random signs "
                "(where log1p/expm1 forms matter)",
                [](Entropy& e, DType d) {
                  const double lo = std::max(1e-30, denorm_min(d));
                  const double hi = std::max(1e-5, dtype_unit_roundoff(d));
                  return sign(e) * magnitude(e, d, lo, hi);
                });
}

// `exp_range`: f16's e^x overflows at 11.09, not 88.72, so s_hi shrinks by 11.09 / 88.72 there
// (else most of the regime would be inf and 0).
Regime moderate(double s_lo, double s_hi, bool exp_range = false) {
  char desc[128];
  std::snprintf(desc, sizeof desc, "x = s N(0, 1), s log-uniform in [%g, %g]%s", s_lo, s_hi,
                exp_range ? " (s_hi / 8 in f16)" : "");
  return values("moderate", desc, [s_lo, s_hi, exp_range](Entropy& e, DType d) {
    const double hi = exp_range && d == DType::f16 ? s_hi * regime::exp_overflow_threshold(d) /
                                                         regime::exp_overflow_threshold(DType::f32)
                                                   : s_hi;
    return e.log_uniform(s_lo, hi) * e.normal();
  });
}

// |x| log-uniform in [lo, hi] (hi capped at the largest finite value) with the given sign
// (0: random).
Regime magnitudes(std::string name, std::string description, double lo, double hi, int sgn) {
  return values(std::move(name), std::move(description), [lo, hi, sgn](Entropy& e, DType d) {
    return (sgn ? sgn : sign(e)) * magnitude(e, d, lo, hi);
  });
}

Regime subnormals() {
  return values("subnormal", "subnormal x of random sign (log-uniform magnitudes), some +-0",
                [](Entropy& e, DType d) {
                  if (e.chance(0.05)) return sign(e) * 0.0;
                  return sign(e) * e.log_uniform(denorm_min(d), dtype_min_normal(d));
                });
}

// The format's landmarks, reflected into [lo, inf] for functions with a domain.
Regime special(double lo = -INFINITY) {
  return values("special",
                "+-0, +-inf, +-1, +-max, +-min normal, +-smallest subnormal, random subnormals",
                [lo](Entropy& e, DType d) {
                  double x = 0;
                  switch (e.below(7)) {
                    case 0:
                      x = 0.0;
                      break;
                    case 1:
                      x = INFINITY;
                      break;
                    case 2:
                      x = 1.0;
                      break;
                    case 3:
                      x = max_finite(d);
                      break;
                    case 4:
                      x = dtype_min_normal(d);
                      break;
                    case 5:
                      x = denorm_min(d);
                      break;
                    default:
                      x = e.log_uniform(denorm_min(d), dtype_min_normal(d));
                      break;
                  }
                  x *= sign(e);
                  return x < lo ? 2 * lo - x : x;
                });
}

Regime near_exp_overflow(std::string name, std::string description) {
  return values(std::move(name), std::move(description), [](Entropy& e, DType d) {
    return regime::exp_overflow_threshold(d) + e.log_uniform(1e-3, 3) * e.normal();
  });
}

// x between log(smallest subnormal) - 3 and log(smallest normal) + 3, times `sgn`.
Regime exp_underflow_band(std::string name, std::string description, double sgn) {
  return values(std::move(name), std::move(description), [sgn](Entropy& e, DType d) {
    return sgn * e.uniform(exp_subnormal_floor(d) - 3, regime::exp_underflow_threshold(d) + 3);
  });
}

// ---- contract -----------------------------------------------------------------------------------

// One finite-or-infinite row, no NaN, no parameters, every value >= lo.
std::optional<std::string> validate_row(const Input& in, const std::string& name, double lo) {
  if (in.args.size() != 1) return name + " takes one row";
  const auto& t = in.args[0];
  if (t.shape.size() != 1 || t.values.size() != static_cast<size_t>(t.shape[0]))
    return name + " takes a 1-D row (shape [n])";
  if (t.values.empty()) return name + " of an empty row: no values to test";
  if (t.values.size() > (size_t{1} << 24)) return "row longer than 16777216 values";
  if (!in.params.empty()) return name + " takes no parameters (got '" + in.params[0].first + "')";
  for (double x : t.values) {
    if (std::isnan(x)) return name + " inputs must not be NaN";
    if (x < lo) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s needs x >= %g, got %a", name.c_str(), lo, x);
      return std::string(buf);
    }
    if (!representable(in.dtype, x)) return "a value is not representable in the dtype";
  }
  return std::nullopt;
}

struct Spec {
  Unary fn = Unary::exp;
  std::string summary;
  double lo = -INFINITY;       // smallest valid input
  bool finite_outputs = true;  // f maps [lo, +-inf] to finite values
  double tol_f64 = 0, tol_f32 = 0;
  std::vector<Regime> regimes;
  std::string stable_description;
  std::function<std::vector<double>(const Input&)> native;
  std::function<CestacOutput(const Input&, const CestacRequest&)> cestac;
  std::shared_ptr<const FaultableImpl> faultable;
};

Spec spec(Unary fn, std::string summary) {
  Spec s;
  s.fn = fn;
  s.summary = std::move(summary);
  return s;
}

template <class Fn>
void set_stable(Spec& s, std::string description) {
  s.stable_description = std::move(description);
  s.native = op_native<ElementwiseOp<Fn>>();
  s.cestac = op_cestac<ElementwiseOp<Fn>>();
  s.faultable = fault::faultable<ElementwiseOp<Fn>>();
}

// f16 and bf16 are storage formats with per-op rounding (stabfuzz/lowp.h); the oracle evaluates
// the definition with exact constants, which is what PyTorch's f32 opmath gives for f16/bf16 to
// within 2^-24; a constant rounded to the format is an error the tolerance carries.
constexpr const char* kLowpSemantics =
    "; f16/bf16: every operation computed in double and rounded to the format (per-op "
    "rounding), constants rounded to the format";

Family make_family(Spec s) {
  Family f;
  f.name = std::string(oracle::unary_name(s.fn));
  f.summary = std::move(s.summary);
  f.regimes = std::move(s.regimes);
  f.validate = [name = f.name, lo = s.lo](const Input& in) { return validate_row(in, name, lo); };
  f.oracle = [fn = s.fn](const Input& in) { return oracle::unary(fn, in); };
  f.tolerance_ulps = [t64 = s.tol_f64, t32 = s.tol_f32](DType d, size_t) {
    return d == DType::f64 ? t64 : t32;
  };
  f.cestac_margin_digits = 1.0;
  f.finite_outputs = s.finite_outputs;
  Target stable;
  stable.id = f.name + "/cpu/stable";
  stable.kind = TargetKind::reference;
  stable.description = std::move(s.stable_description) + kLowpSemantics;
  stable.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  stable.native = std::move(s.native);
  stable.cestac = std::move(s.cestac);
  stable.faultable = std::move(s.faultable);
  f.targets.push_back(std::move(stable));
  return f;
}

// ---- tolerances ---------------------------------------------------------------------------------
//
// ULPs at cond <= 1. libm's error per call, in ulps of its result: the maxima glibc documents
// (sysdeps/x86_64/fpu/libm-test-ulps: exp, log, log1p, expm1, erf 1; tanh 2; erfc 5 in double)
// and the maxima measured here (glibc 2.36, 2e6 inputs per function and format against MPFR:
// exp, log, log1p, expm1, erf 1; tanh 2; erfc 3, in double and float). A single call that errs
// by k ulps is at most k steps from the correctly rounded value; +1 for the step at a power of two.
// A composed formula is bounded in relative error E u (u = 2^-p): a k-ulp call counts 2k u, a
// correctly rounded +, x, / counts u; then the result is < E + 1/2 steps from the correctly
// rounded value, and tol = ceil(E + 1/2). Errors that a rounded argument sends through f are
// proportional to cond and carried by the verdict's max(1, cond); so is a subnormal intermediate
// (sigmoid, erfc below the normal range) that errs by a subnormal step and is then multiplied by
// x: |x| steps, and there |x| <= cond + 1 <= 2 max(1, cond) <= tol max(1, cond).
//
// f16 and bf16 (per-op rounding, stabfuzz/lowp.h) take f32's tolerances: an elementary function
// is libm's double result (within 1 ulp of double, 2^-42 ulps of the format) rounded once, so it
// errs by u (1 + 2^-41) relative against the 2u that f32's 1-ulp calls count, and +, x, / round
// correctly (u). The constants rounded to the format are off by less than in f32: 1/sqrt 2 by
// 0.22u (f16) / 0.03u (bf16) against 0.29u; gelu_tanh's 2 sqrt(2/pi) and 0.044715 by 0.09u + 0.31u
// (f16) / 0.32u + 0.21u (bf16) against 0.48u + 0.58u. Subnormal intermediates are far more common
// (e^x is subnormal in f16 below x = -9.7, erfc below x = -4.0 in gelu) and are carried by the
// |x| <= 2 max(1, cond) argument above.
//
// Measured worst error / tolerance, `stabfuzz --target F --seed S --runs 300` for S = 1, 2, 3
// (summary.json max_error_over_tolerance, the maximum over the seeds, f64 / f32 / f16 / bf16):
//   exp 0.50 / 0.50 / 0 / 0, log 0.48 / 0.50 / 0 / 0, log1p 0.50 / 0.50 / 0 / 0,
//   expm1 0.50 / 0.50 / 0 / 0, tanh 0.67 / 0.67 / 0 / 0, erf 0.50 / 0.50 / 0 / 0,
//   sigmoid 0.40 / 0.40 / 0.40 / 0.21, log_sigmoid 0.17 / 0.17 / 0.17 / 0.17,
//   softplus 0.17 / 0.17 / 0.17 / 0.17, silu 0.33 / 0.33 / 0.33 / 0.33,
//   gelu 0.19 / 0.22 / 0.18 / 0.16, gelu_tanh 0.26 / 0.22 / 0.22 / 0.22.
// (A single libm call rounded once to f16/bf16 is correctly rounded on every input drawn: 0.)
constexpr double kSingleCall1Ulp = 2;  // exp, log, log1p, expm1, erf: 1 ulp + 1
constexpr double kTanhTol = 3;         // tanh: 2 ulps + 1
// sigmoid: exp 2u (reaches the result damped by e/(1+e) <= 1), 1 + e: u, the division: u. E = 4.
constexpr double kSigmoidTol = 5;
// log_sigmoid, softplus: exp 2u damped by log1p (t / ((1+t) log1p t) <= 1), log1p 2u, the sum
// with min(x, 0) or max(x, 0) (terms of one sign): u. silu: sigmoid 4u and the product u. E = 5.
constexpr double kLogSigmoidTol = 6;
// gelu, x >= 0: x / sqrt 2 with the rounded constant (f64 0.62u, f32 0.29u off) and the product:
// B = 1.62u (f64) / 1.29u (f32); erf 2u, damped with B by erf/(1+erf) <= 1/2; 1 + erf: u; the
// product: u. E = 3.8. x < 0: erfc (5 ulps f64, 3 f32: 10u / 6u), the product u, x/2 of a
// subnormal 0.5, and B times cond_erfc = |cond - 1|, at most 2 max(1, cond) (the supremum, at
// x = -1.19). E = 11.5 + 2 * 1.62 = 14.7 (f64), 7.5 + 2 * 1.29 = 10.1 (f32).
constexpr double kGeluTolF64 = 16, kGeluTolF32 = 11;
// gelu_tanh: z = 2 sqrt(2/pi) x (1 + 0.044715 x^2) in five roundings plus the two constants
// (f64 0.56u + 0.44u, f32 0.48u + 0.58u): B = 6.0u (f64) / 6.1u (f32). sigmoid(z) 4u and the
// product u: A = 5u. sigmoid turns B into |z (1 - sigmoid z)| B, at most 0.28 B for x >= 0 and
// at most 1.79 max(1, cond) B for x < 0 (the supremum, at x = -1.19). E = 5 + 1.79 * 6.1 = 15.9.
constexpr double kGeluTanhTol = 17;

// ---- the families -------------------------------------------------------------------------------

Family exp_family() {
  Spec s = spec(Unary::exp,
                "y_i = e^(x_i) over one row (inf where e^x overflows, e.g. x > 88.72 in f32)");
  s.finite_outputs = false;
  s.tol_f64 = s.tol_f32 = kSingleCall1Ulp;
  s.regimes = {moderate(1e-3, 30, true),
               near_exp_overflow("near_overflow",
                                 "x = 88.72 (f32) / 709.78 (f64) + s N(0, 1), s in [1e-3, 3]: near "
                                 "the largest finite result, some overflow"),
               exp_underflow_band("underflow",
                                  "x from log(smallest subnormal) - 3 to log(smallest normal) + 3: "
                                  "subnormal results and results that round to 0",
                                  1),
               tiny(),
               magnitudes("wide", "random signs, |x| log-uniform in [1e-8, 1e3]", 1e-8, 1e3, 0),
               special()};
  set_stable<ExpStable>(s, "libm exp");
  return make_family(std::move(s));
}

Family log_family() {
  Spec s = spec(Unary::log,
                "y_i = log(x_i) over one row, x >= 0 (log(0) = -inf exactly, log(inf) = inf)");
  s.lo = 0;
  s.finite_outputs = false;
  s.tol_f64 = s.tol_f32 = kSingleCall1Ulp;
  s.regimes = {
      values("wide", "x log-uniform over [smallest normal, max]",
             [](Entropy& e, DType d) { return magnitude(e, d, dtype_min_normal(d), 1e308); }),
      values("near_one",
             "x = |1 + s N(0, 1)|, s log-uniform in [u, 0.1]: near log's zero (cond 1/|log x|), "
             "some exactly 1",
             [](Entropy& e, DType d) {
               return std::fabs(1 + e.log_uniform(dtype_unit_roundoff(d), 0.1) * e.normal());
             }),
      values("subnormal", "x log-uniform over the subnormals, some exactly 0 (-inf)",
             [](Entropy& e, DType d) {
               return e.chance(0.05) ? 0.0 : e.log_uniform(denorm_min(d), dtype_min_normal(d));
             }),
      magnitudes("moderate", "x log-uniform in [1e-3, 1e3]", 1e-3, 1e3, 1),
      values("near_max", "x uniform in [max/4, max]",
             [](Entropy& e, DType d) { return max_finite(d) * e.uniform(0.25, 1.0); }),
      special(0)};
  set_stable<LogStable>(s, "libm log");
  return make_family(std::move(s));
}

Family log1p_family() {
  Spec s =
      spec(Unary::log1p, "y_i = log(1 + x_i) over one row, x >= -1 (log1p(-1) = -inf exactly)");
  s.lo = -1;
  s.finite_outputs = false;
  s.tol_f64 = s.tol_f32 = kSingleCall1Ulp;
  s.regimes = {
      tiny(),
      values("near_minus_one",
             "x = -1 + t, t log-uniform in [u, 0.5]: near the pole, where relative perturbations "
             "of x matter most",
             [](Entropy& e, DType d) { return -1 + e.log_uniform(dtype_unit_roundoff(d), 0.5); }),
      values("moderate", "x = -1 + t, t log-uniform in [1e-3, 11]",
             [](Entropy& e, DType) { return -1 + e.log_uniform(1e-3, 11); }),
      magnitudes("wide_positive", "x log-uniform in [1e-5, max]", 1e-5, 1e308, 1),
      subnormals(),
      special(-1)};
  set_stable<Log1pStable>(s, "libm log1p");
  return make_family(std::move(s));
}

Family expm1_family() {
  Spec s = spec(Unary::expm1, "y_i = e^(x_i) - 1 over one row (inf where e^x overflows)");
  s.finite_outputs = false;
  s.tol_f64 = s.tol_f32 = kSingleCall1Ulp;
  s.regimes = {tiny(),
               moderate(1e-3, 10, true),
               near_exp_overflow(
                   "near_overflow",
                   "x = 88.72 (f32) / 709.78 (f64) + s N(0, 1), s in [1e-3, 3]: some overflow"),
               magnitudes("large_negative", "x = -t, t log-uniform in [10, max]: expm1 -> -1", 10,
                          1e308, -1),
               subnormals(),
               special()};
  set_stable<Expm1Stable>(s, "libm expm1");
  return make_family(std::move(s));
}

Family tanh_family() {
  Spec s = spec(Unary::tanh, "y_i = tanh(x_i) over one row");
  s.tol_f64 = s.tol_f32 = kTanhTol;
  s.regimes = {tiny(),
               moderate(1e-2, 5),
               magnitudes("saturation_edge",
                          "random signs, |x| log-uniform in [1, 25]: 1 - |tanh x| falls below an "
                          "ulp (x ~ 9 f32, ~19 f64)",
                          1, 25, 0),
               magnitudes("large", "random signs, |x| log-uniform in [25, max]", 25, 1e308, 0),
               subnormals(),
               special()};
  set_stable<TanhStable>(s, "libm tanh");
  return make_family(std::move(s));
}

Family erf_family() {
  Spec s = spec(Unary::erf, "y_i = erf(x_i) over one row");
  s.tol_f64 = s.tol_f32 = kSingleCall1Ulp;
  s.regimes = {tiny(),
               moderate(1e-2, 3),
               magnitudes("saturation_edge",
                          "random signs, |x| log-uniform in [1, 7]: 1 - |erf x| falls below an ulp "
                          "(x ~ 3.9 f32, ~5.9 f64)",
                          1, 7, 0),
               magnitudes("large", "random signs, |x| log-uniform in [6, max]", 6, 1e308, 0),
               subnormals(),
               special()};
  set_stable<ErfStable>(s, "libm erf");
  return make_family(std::move(s));
}

Family sigmoid_family() {
  Spec s = spec(Unary::sigmoid, "y_i = 1 / (1 + e^(-x_i)) over one row");
  s.tol_f64 = s.tol_f32 = kSigmoidTol;
  s.regimes = {
      moderate(1e-2, 20),
      values("large_negative",
             "x = -t, t log-uniform in [10, 1.2 |log(smallest subnormal)|]: sigmoid ~ e^x, down to "
             "subnormals and 0",
             [](Entropy& e, DType d) { return -e.log_uniform(10, -1.2 * exp_subnormal_floor(d)); }),
      exp_underflow_band(
          "underflow",
          "x from log(smallest subnormal) - 3 to log(smallest normal) + 3: subnormal results", 1),
      magnitudes("large_positive", "x log-uniform in [10, max]: sigmoid -> 1", 10, 1e308, 1),
      tiny(),
      special()};
  set_stable<SigmoidStable>(s, "e = exp(-|x|); x >= 0: 1/(1+e), x < 0: e/(1+e)");
  return make_family(std::move(s));
}

Family log_sigmoid_family() {
  Spec s =
      spec(Unary::log_sigmoid, "y_i = -log(1 + e^(-x_i)) over one row (log_sigmoid(-inf) = -inf)");
  s.finite_outputs = false;
  s.tol_f64 = s.tol_f32 = kLogSigmoidTol;
  s.regimes = {
      moderate(1e-2, 20),
      magnitudes(
          "large_negative",
          "x = -t, t log-uniform in [10, max]: log_sigmoid ~ x, where log(1 + e^-x) overflows", 10,
          1e308, -1),
      values("large_positive",
             "x log-uniform in [10, 1.2 |log(smallest subnormal)|]: log_sigmoid ~ -e^-x, down to "
             "subnormals",
             [](Entropy& e, DType d) { return e.log_uniform(10, -1.2 * exp_subnormal_floor(d)); }),
      exp_underflow_band(
          "underflow",
          "x from -log(smallest normal) - 3 to -log(smallest subnormal) + 3: subnormal results",
          -1),
      tiny(),
      special()};
  set_stable<LogSigmoidStable>(s, "min(x, 0) - log1p(exp(-|x|))");
  return make_family(std::move(s));
}

Family softplus_family() {
  Spec s =
      spec(Unary::softplus, "y_i = log(1 + e^(x_i)) over one row (beta = 1, no linear threshold)");
  s.finite_outputs = false;  // softplus(inf) = inf
  s.tol_f64 = s.tol_f32 = kLogSigmoidTol;
  s.regimes = {
      moderate(1e-2, 20),
      values("large_negative",
             "x = -t, t log-uniform in [10, 1.2 |log(smallest subnormal)|]: softplus ~ e^x, down "
             "to subnormals",
             [](Entropy& e, DType d) { return -e.log_uniform(10, -1.2 * exp_subnormal_floor(d)); }),
      near_exp_overflow("near_overflow",
                        "x = 88.72 (f32) / 709.78 (f64) + s N(0, 1), s in [1e-3, 3]: where log(1 + "
                        "e^x) overflows"),
      magnitudes("large_positive", "x log-uniform in [10, max]: softplus ~ x", 10, 1e308, 1),
      tiny(),
      special()};
  set_stable<SoftplusStable>(s, "max(x, 0) + log1p(exp(-|x|))");
  return make_family(std::move(s));
}

Family silu_family() {
  Spec s = spec(Unary::silu, "y_i = x_i sigmoid(x_i) over one row (silu(-inf) = -0)");
  s.finite_outputs = false;  // silu(inf) = inf
  s.tol_f64 = s.tol_f32 = kLogSigmoidTol;
  s.regimes = {
      moderate(1e-2, 20),
      values("large_negative",
             "x = -t, t log-uniform in [10, 1.2 |log(smallest subnormal)|]: silu ~ x e^x, down to "
             "subnormals",
             [](Entropy& e, DType d) { return -e.log_uniform(10, -1.2 * exp_subnormal_floor(d)); }),
      values("near_minimum",
             "x = -1.2785 + s N(0, 1), s log-uniform in [1e-6, 0.5]: around silu's minimum, where "
             "cond -> 0",
             [](Entropy& e, DType) { return -1.2785 + e.log_uniform(1e-6, 0.5) * e.normal(); }),
      magnitudes("large", "random signs, |x| log-uniform in [10, max]", 10, 1e308, 0),
      tiny(),
      special()};
  set_stable<SiluStable>(s, "x * sigmoid(x), sigmoid from exp(-|x|)");
  return make_family(std::move(s));
}

// MPFR's erfc takes 0.1-1.4 ms per value for arguments in [3, 16] (x in [-22, -4]) at 96 bits:
// rows of that regime stay short so that a run keeps its pace (values are independent anyway).
constexpr size_t kSlowErfcRow = 256;

Family gelu_family() {
  Spec s = spec(Unary::gelu,
                "y_i = x_i/2 (1 + erf(x_i / sqrt 2)) over one row (gelu(-inf) = -0); sqrt 2 is "
                "exact in every dtype (as PyTorch's f32 opmath gives f16/bf16)");
  s.finite_outputs = false;  // gelu(inf) = inf
  s.tol_f64 = kGeluTolF64;
  s.tol_f32 = kGeluTolF32;
  s.regimes = {
      moderate(1e-2, 5),
      values(
          "negative_tail",
          "x uniform in [-40, -3] (f64) / [-15, -3] (f32, bf16) / [-6, -2] (f16): 1 + erf(x / "
          "sqrt 2) cancels, to nothing below ~ -6 (f32) / -8.3 (f64) / -3.7 (f16); gelu itself "
          "underflows below ~ -38 (f64) / -14 (f32, bf16) / -5.7 (f16)",
          [](Entropy& e, DType d) {
            if (d == DType::f16) return -e.uniform(2, 6);
            return -e.uniform(3, d == DType::f64 ? 40 : 15);
          },
          kSlowErfcRow),
      magnitudes("large_negative", "x = -t, t log-uniform in [10, max]: gelu underflows to -0", 10,
                 1e308, -1),
      magnitudes("large_positive", "x log-uniform in [3, max]: gelu ~ x", 3, 1e308, 1),
      tiny(),
      special()};
  set_stable<GeluStable>(s, "x >= 0: x/2 (1 + erf(x/sqrt 2)); x < 0: x/2 erfc(-x/sqrt 2)");
  return make_family(std::move(s));
}

Family gelu_tanh_family() {
  Spec s = spec(
      Unary::gelu_tanh,
      "y_i = x_i/2 (1 + tanh(sqrt(2/pi) (x_i + 0.044715 x_i^3))) over one row, the constants as "
      "written and exact in every dtype (gelu_tanh(-inf) = -0)");
  s.finite_outputs = false;  // gelu_tanh(inf) = inf
  s.tol_f64 = s.tol_f32 = kGeluTanhTol;
  s.regimes = {moderate(1e-2, 5),
               values("negative_tail",
                      "x uniform in [-30, -2] ([-6, -2] in f16, where gelu_tanh underflows below "
                      "~ -5.4): 1 + tanh(u) cancels",
                      [](Entropy& e, DType d) { return -e.uniform(2, d == DType::f16 ? 6 : 30); }),
               values("cube_overflow",
                      "|x| = cbrt(max) t, t log-uniform in [0.1, 10], random signs: x^3 overflows "
                      "(|x| ~ 7e12 f32, ~6e102 f64)",
                      [](Entropy& e, DType d) {
                        return sign(e) * std::cbrt(max_finite(d)) * e.log_uniform(0.1, 10);
                      }),
               magnitudes("large", "random signs, |x| log-uniform in [30, max]", 30, 1e308, 0),
               tiny(),
               special()};
  set_stable<GeluTanhStable>(
      s, "x * sigmoid(2 sqrt(2/pi) x (1 + 0.044715 x^2)), sigmoid from exp(-|z|)");
  return make_family(std::move(s));
}

}  // namespace

std::vector<Family> elementwise_families() {
  std::vector<Family> fs;
  for (auto* make :
       {exp_family, log_family, log1p_family, expm1_family, tanh_family, erf_family, sigmoid_family,
        log_sigmoid_family, softplus_family, silu_family, gelu_family, gelu_tanh_family})
    fs.push_back(make());
  return fs;
}

}  // namespace stabfuzz::families
