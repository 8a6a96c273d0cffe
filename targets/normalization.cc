// The normalization group: log_softmax, layer/rms/batch norm and the losses, as family contracts.
#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "harness/gen/regimes.h"
#include "oracles/normalization.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/op.h"
#include "targets/cpu/normalization.h"
#include "targets/families.h"

namespace stabfuzz::targets {
namespace {

using gen::row_length;
using Msg = std::optional<std::string>;
using Params = std::vector<std::pair<std::string, double>>;

constexpr size_t kMaxValues = size_t{1} << 24;

// ---- validation -------------------------------------------------------------------------------

Msg check_shape(const Input& in, size_t count, const char* family) {
  if (in.args.size() != count)
    return std::string(family) + " takes " + std::to_string(count) + (count == 1 ? " tensor" : " tensors");
  for (const auto& t : in.args) {
    size_t size = 1;
    for (int64_t s : t.shape) size = s < 1 ? 0 : size * static_cast<size_t>(s);
    if (t.shape.empty() || size != t.values.size()) return "a tensor's shape does not match its values";
    if (size == 0) return std::string(family) + " of an empty tensor is undefined";
    if (size > kMaxValues) return "a tensor holds more than 16777216 values";
  }
  return std::nullopt;
}

// Values finite, representable and within [lo, hi]; `what` names them in the message.
Msg check_values(const Input& in, size_t k, const char* what, double lo = -INFINITY, double hi = INFINITY) {
  for (double v : in.args[k].values) {
    if (!std::isfinite(v)) return std::string(what) + " must be finite";
    if (v < lo || v > hi) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " must lie in [%g, %g]", lo, hi);
      return std::string(what) + buf;
    }
    if (!representable(in.dtype, v)) return "a value is not representable in the dtype";
  }
  return std::nullopt;
}

Msg check_rows(const Input& in, size_t count, const char* family) {
  if (auto m = check_shape(in, count, family)) return m;
  for (const auto& t : in.args)
    if (t.shape.size() != 1) return std::string(family) + " takes 1-D rows (shape [n])";
  for (const auto& t : in.args)
    if (t.values.size() != in.args[0].values.size()) return std::string(family) + " rows must have equal lengths";
  return std::nullopt;
}

Msg check_params(const Input& in, std::initializer_list<const char*> known) {
  for (const auto& [name, v] : in.params) {
    bool ok = false;
    for (const char* k : known) ok |= name == k;
    if (!ok) return "unknown parameter '" + name + "'";
  }
  return std::nullopt;
}

// eps is added in the dtype, so it must stay positive once rounded to it.
Msg check_eps(const Input& in, double fallback) {
  const double eps = in.param("eps", fallback);
  if (!std::isfinite(eps) || !(round_to(in.dtype, eps) > 0)) return "eps must be finite and positive in the dtype";
  return std::nullopt;
}

// Row sums of up to 2^24 values of magnitude <= max / 2^26 cannot overflow.
double norm_limit(DType d) { return std::ldexp(dtype_format(d).max_finite(), -26); }

// ---- generators -------------------------------------------------------------------------------

double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }

std::vector<double> normals(Entropy& e, size_t n, double mean, double sd) {
  std::vector<double> v(n);
  for (auto& x : v) x = mean + sd * e.normal();
  return v;
}

Input one_row(DType d, std::vector<double> v, Params params = {}) {
  const auto n = static_cast<int64_t>(v.size());
  return gen::make_input(d, {Tensor{{n}, std::move(v)}}, std::move(params));
}

Input two_rows(DType d, std::vector<double> a, std::vector<double> b) {
  const auto n = static_cast<int64_t>(a.size());
  return gen::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{n}, std::move(b)}});
}

// Magnitudes whose squares overflow or underflow the dtype, within norm_limit.
double huge_or_tiny(Entropy& e, DType d) {
  const bool f64 = d == DType::f64;
  return e.chance(0.5) ? (f64 ? e.log_uniform(1e160, 1e290) : e.log_uniform(1e20, 1e28))
                       : (f64 ? e.log_uniform(1e-290, 1e-160) : e.log_uniform(1e-28, 1e-20));
}

size_t argmax(const std::vector<double>& v) {
  size_t k = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[k]) k = i;
  return k;
}

std::vector<double> softmax_of(std::vector<double> v) {
  const double m = v[argmax(v)];
  double s = 0;
  for (auto& x : v) s += (x = std::exp(x - m));
  for (auto& x : v) x /= s;
  return v;
}

// ---- log_softmax and cross_entropy ------------------------------------------------------------

struct RowRegime {
  const char* name;
  const char* description;
  std::vector<double> (*row)(Entropy&, DType);
};

// One logit with a gap of 5..1000 over N(0, 1) others: probabilities near 1 and near 0.
std::vector<double> dominant_row(Entropy& e, DType) {
  auto v = normals(e, std::max<size_t>(2, row_length(e)), 0, 1);
  v[e.below(v.size())] = e.log_uniform(5, 1000);
  return v;
}

const RowRegime kLogitRows[] = {
    {"small", "logits N(0, s^2), s log-uniform in [1e-3, 10]",
     [](Entropy& e, DType) { return normals(e, row_length(e), 0, e.log_uniform(1e-3, 10)); }},
    {"near_overflow", "logits around the exp overflow threshold (709.8 f64, 88.7 f32), some beyond",
     [](Entropy& e, DType d) {
       return normals(e, row_length(e), gen::exp_overflow_threshold(d), e.log_uniform(0.01, 10));
     }},
    {"all_very_negative", "every logit below the exp underflow threshold (-708.4 f64, -87.3 f32)",
     [](Entropy& e, DType d) {
       auto v = normals(e, row_length(e), 0, e.log_uniform(0.01, 20));
       const double c = gen::exp_underflow_threshold(d) * e.uniform(1.0, 1.5);
       for (auto& x : v) x = c - std::fabs(x);
       return v;
     }},
    {"mean_shifted", "+-2000 or +-1e4 plus s N(0, 1), s log-uniform in [0.1, 10]",
     [](Entropy& e, DType) {
       return normals(e, row_length(e), sign(e) * (e.chance(0.5) ? 2000 : 1e4), e.log_uniform(0.1, 10));
     }},
    {"dominant", "one logit 5..1000 above N(0, 1) others: probabilities near 1 and near 0", dominant_row},
    {"near_constant", "c + c 1e-9..1e-4 N(0, 1), |c| log-uniform in 1e-3..1e4: nearly equal logits",
     [](Entropy& e, DType) {
       const double c = sign(e) * e.log_uniform(1e-3, 1e4);
       return normals(e, row_length(e), c, std::fabs(c) * e.log_uniform(1e-9, 1e-4));
     }},
    {"mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs",
     [](Entropy& e, DType) {
       std::vector<double> v(row_length(e));
       for (auto& x : v) x = sign(e) * e.log_uniform(1e-6, 1e3);
       return v;
     }},
};

std::vector<Regime> log_softmax_regimes() {
  std::vector<Regime> r;
  for (const auto& k : kLogitRows)
    r.push_back({k.name, k.description, [row = k.row](Entropy& e, DType d) { return one_row(d, row(e, d)); }});
  return r;
}

std::vector<Regime> cross_entropy_regimes() {
  std::vector<Regime> r;
  for (const auto& k : kLogitRows) {
    if (std::string_view(k.name) == "dominant" || std::string_view(k.name) == "near_constant") continue;
    r.push_back({k.name, std::string(k.description) + "; random target",
                 [row = k.row](Entropy& e, DType d) {
                   auto v = row(e, d);
                   const auto t = static_cast<double>(e.below(v.size()));
                   return one_row(d, std::move(v), {{"target", t}});
                 }});
  }
  r.push_back({"confident_correct", "one logit 5..1000 above the rest and it is the target: loss near 0",
               [](Entropy& e, DType d) {
                 auto v = dominant_row(e, d);
                 const auto t = static_cast<double>(argmax(v));
                 return one_row(d, std::move(v), {{"target", t}});
               }});
  r.push_back({"confident_wrong", "one logit 5..1000 above the rest, another is the target: large loss",
               [](Entropy& e, DType d) {
                 auto v = dominant_row(e, d);
                 const size_t k = argmax(v), t = (k + 1 + e.below(v.size() - 1)) % v.size();
                 return one_row(d, std::move(v), {{"target", static_cast<double>(t)}});
               }});
  return r;
}

Msg validate_log_softmax(const Input& in) {
  if (auto m = check_rows(in, 1, "log_softmax")) return m;
  if (auto m = check_params(in, {})) return m;
  return check_values(in, 0, "log_softmax logits");
}

Msg validate_cross_entropy(const Input& in) {
  if (auto m = check_rows(in, 1, "cross_entropy")) return m;
  if (auto m = check_params(in, {"target"})) return m;
  if (auto m = check_values(in, 0, "cross_entropy logits")) return m;
  const double t = in.param("target", 0);
  if (!(t >= 0 && t < static_cast<double>(in.args[0].values.size()) && t == std::trunc(t)))
    return "target must be a class index in [0, n)";
  return std::nullopt;
}

// Tolerance at cond <= 1, in ULPs. With k the argmax and T = sum_{j != k} e^(x_j - m): T errs by
// (7 + log2(n/8)) u (pairwise sum, <= (4 + log2 n) u for every n) + 1 u (exp), log1p adds 1 u,
// the roundings of x_i - m and of the final subtraction 1 u each (both terms of y_i have one
// sign). The rounding of x_j - m inside the exps moves l by u sum_{j != k} s_j |x_j - m|: at most
// u cond_k |y_k| for i = k, and at most u log n <= u log2(n) |y_i| for i != k (|y_i| >= log 2 there,
// and sum_j s_j (m - x_j) = entropy - l <= log n). Total 8 + 2 log2 n, + 1 for the rounding of
// the exact value. Measured: see the family comment in log_softmax_family().
double log_softmax_tolerance(DType, size_t n) { return 9.0 + 2.0 * std::log2(static_cast<double>(n)); }

// ---- layer_norm, rms_norm, batch_norm ---------------------------------------------------------

Params eps_choice(Entropy& e) {
  const double choices[] = {1e-12, 1e-3};
  if (e.chance(0.5)) return {};
  return {{"eps", choices[e.below(2)]}};
}

std::vector<double> outlier_row(Entropy& e, size_t n) {
  auto v = normals(e, n, 0, 1);
  const auto k = 1 + e.below(3);
  for (uint64_t i = 0; i < k; ++i) v[e.below(n)] = sign(e) * e.log_uniform(1e2, 1e6);
  return v;
}

std::vector<Regime> layer_norm_regimes() {
  return {
      {"standard", "N(0, s^2), s log-uniform in [1e-2, 1e2]",
       [](Entropy& e, DType d) { return one_row(d, normals(e, row_length(e), 0, e.log_uniform(1e-2, 1e2))); }},
      {"mean_shifted", "+-2000, +-1e4 or +-1e3..1e6 plus s N(0, 1), s log-uniform in [0.1, 10]",
       [](Entropy& e, DType d) {
         const double c = e.chance(0.6) ? (e.chance(0.5) ? 2000 : 1e4) : e.log_uniform(1e3, 1e6);
         return one_row(d, normals(e, row_length(e), sign(e) * c, e.log_uniform(0.1, 10)));
       }},
      {"near_constant", "c + noise with variance far below eps or zero (a quarter exactly constant); eps 1e-5, 1e-12 or 1e-3",
       [](Entropy& e, DType d) {
         const double c = sign(e) * e.log_uniform(1e-3, 1e4);
         const double s = e.chance(0.25) ? 0.0 : std::fabs(c) * e.log_uniform(1e-10, 1e-5);
         return one_row(d, normals(e, row_length(e), c, s), eps_choice(e));
       }},
      {"outliers", "N(0, 1) with 1..3 values of magnitude 1e2..1e6",
       [](Entropy& e, DType d) { return one_row(d, outlier_row(e, row_length(e))); }},
      {"mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs",
       [](Entropy& e, DType d) { return one_row(d, kLogitRows[6].row(e, d)); }},
      {"huge_tiny", "s N(0, 1) with s so large or small that x^2 overflows or underflows the dtype",
       [](Entropy& e, DType d) { return one_row(d, normals(e, row_length(e), 0, huge_or_tiny(e, d))); }},
      {"two_values", "two distinct values a, b (|b - a| from 1e-6 to 1 relative) in random order",
       [](Entropy& e, DType d) {
         const double a = sign(e) * e.log_uniform(1e-3, 1e4), b = a * (1 + sign(e) * e.log_uniform(1e-6, 1));
         std::vector<double> v(row_length(e));
         for (auto& x : v) x = e.chance(0.5) ? a : b;
         return one_row(d, std::move(v));
       }},
  };
}

std::vector<Regime> rms_norm_regimes() {
  return {
      {"standard", "N(0, s^2), s log-uniform in [1e-2, 1e2]",
       [](Entropy& e, DType d) { return one_row(d, normals(e, row_length(e), 0, e.log_uniform(1e-2, 1e2))); }},
      {"mean_shifted", "+-1e4 plus N(0, 1): every output near +-1",
       [](Entropy& e, DType d) { return one_row(d, normals(e, row_length(e), sign(e) * 1e4, 1)); }},
      {"near_eps", "N(0, s^2), s log-uniform in [1e-6, 1e-2]: mean square below to above eps (1e-6, or 1e-12)",
       [](Entropy& e, DType d) {
         Params p = e.chance(0.3) ? Params{{"eps", 1e-12}} : Params{};
         return one_row(d, normals(e, row_length(e), 0, e.log_uniform(1e-6, 1e-2)), p);
       }},
      {"huge_tiny", "s N(0, 1) with s so large or small that x^2 overflows or underflows the dtype",
       [](Entropy& e, DType d) { return one_row(d, normals(e, row_length(e), 0, huge_or_tiny(e, d))); }},
      {"sparse", "N(0, 1) with 50..99% exact zeros",
       [](Entropy& e, DType d) {
         auto v = normals(e, row_length(e), 0, 1);
         const double p = e.uniform(0.5, 0.99);
         for (auto& x : v) x = e.chance(p) ? 0.0 : x;
         return one_row(d, std::move(v));
       }},
      {"outliers", "N(0, 1) with 1..3 values of magnitude 1e2..1e6",
       [](Entropy& e, DType d) { return one_row(d, outlier_row(e, row_length(e))); }},
      {"mixed_scales", "magnitudes log-uniform over 1e-6..1e3, random signs",
       [](Entropy& e, DType d) { return one_row(d, kLogitRows[6].row(e, d)); }},
  };
}

// [n, c] with n <= 512 and n c <= 16384; column c drawn by `col(e, c, n)`.
template <class Col>
Input batch(Entropy& e, DType d, Col col, Params p = {}) {
  const size_t n = row_length(e, 512), c = row_length(e, std::min<size_t>(64, 16384 / n));
  std::vector<double> v(n * c);
  for (size_t k = 0; k < c; ++k) {
    const auto x = col(e, n);
    for (size_t i = 0; i < n; ++i) v[i * c + k] = x[i];
  }
  return gen::make_input(d, {Tensor{{static_cast<int64_t>(n), static_cast<int64_t>(c)}, std::move(v)}}, std::move(p));
}

std::vector<Regime> batch_norm_regimes() {
  return {
      {"standard", "[n, c], channels N(m, s^2), m N(0, 1), s log-uniform in [1e-2, 1e2]",
       [](Entropy& e, DType d) {
         return batch(e, d, [](Entropy& e, size_t n) { return normals(e, n, e.normal(), e.log_uniform(1e-2, 1e2)); });
       }},
      {"mean_shifted", "channels +-1e3..1e5 plus s N(0, 1), s log-uniform in [0.1, 10]",
       [](Entropy& e, DType d) {
         return batch(e, d, [](Entropy& e, size_t n) {
           return normals(e, n, sign(e) * e.log_uniform(1e3, 1e5), e.log_uniform(0.1, 10));
         });
       }},
      {"constant_channel", "half the channels constant with |x| in 1e7..1e9 (exact output 0), the rest N(0, 1)",
       [](Entropy& e, DType d) {
         return batch(e, d, [](Entropy& e, size_t n) {
           return e.chance(0.5) ? std::vector<double>(n, sign(e) * e.log_uniform(1e7, 1e9)) : normals(e, n, 0, 1);
         });
       }},
      {"near_constant", "channels c + noise with variance far below eps; eps 1e-5, 1e-12 or 1e-3",
       [](Entropy& e, DType d) {
         auto p = eps_choice(e);
         return batch(e, d, [](Entropy& e, size_t n) {
           const double c = sign(e) * e.log_uniform(1e-3, 1e4);
           return normals(e, n, c, std::fabs(c) * e.log_uniform(1e-10, 1e-5));
         }, std::move(p));
       }},
      {"mixed_scales", "channels of scale log-uniform in 1e-6..1e3, some with outliers",
       [](Entropy& e, DType d) {
         return batch(e, d, [](Entropy& e, size_t n) {
           if (e.chance(0.3)) return outlier_row(e, n);
           return normals(e, n, 0, e.log_uniform(1e-6, 1e3));
         });
       }},
      {"huge_tiny", "channels s N(0, 1) with s so large or small that x^2 overflows or underflows",
       [](Entropy& e, DType d) {
         const double s = huge_or_tiny(e, d);
         return batch(e, d, [s](Entropy& e, size_t n) { return normals(e, n, 0, s * e.uniform(0.5, 2)); });
       }},
  };
}

Msg validate_norm(const Input& in, const char* family, double eps, bool bounded, bool matrix) {
  if (auto m = check_shape(in, 1, family)) return m;
  if (in.args[0].shape.size() != (matrix ? 2u : 1u))
    return std::string(family) + (matrix ? " takes a 2-D tensor [n, c]" : " takes a 1-D row (shape [n])");
  if (auto m = check_params(in, {"eps"})) return m;
  if (auto m = check_eps(in, eps)) return m;
  const double lim = bounded ? norm_limit(in.dtype) : INFINITY;
  return check_values(in, 0, bounded ? "values (|x| <= max / 2^26, so row sums cannot overflow)" : "values", -lim, lim);
}

// Tolerance at cond <= 1, in ULPs, with g = 7 + log2(n/8) <= 4 + log2 n the pairwise-sum bound.
// Corrected two-pass: the correction mu2 errs by (g + 1) u mean|d|, which moves y_i by that over
// |x_i - mu|; mean|d| <= 2 mean|x| and cond_i |x_i - mu| >= mean|x| for outputs at the mean (and
// mean|d| <= |x_i - mu| for |y_i| >= 1), so 2 (g + 1) u max(1, cond_i). The rounding of d = x - mu1
// is an input perturbation of u |x_j - mu1| (y is shift invariant): 2 u max(1, cond_i). c_i and
// the division 1 u each, sigma (g + 5) u / 2 + 2 u (sum of squares, eps terms, sqrt, scale).
// Total 2.5 g + 10.5 <= 20.5 + 2.5 log2 n; + 0.5 for the rounding of the exact value.
// batch_norm receives n = n c, which only loosens the bound of its per-channel sums.
double layer_norm_tolerance(DType, size_t n) { return 21.0 + 2.5 * std::log2(static_cast<double>(n)); }

// rms_norm: q = mean((x/S)^2) + (eps/S)/S errs by (g + 5) u (quotient, square, sum, / n, the eps
// term, the addition; all terms >= 0), sqrt halves that and adds 1, the scale S 1, the division
// 1: (g + 5)/2 + 3 <= 7.5 + log2(n)/2; + 0.5 for the rounding of the exact value.
double rms_norm_tolerance(DType, size_t n) { return 8.0 + 0.5 * std::log2(static_cast<double>(n)); }

// ---- bce_with_logits, kl_div, entropy ---------------------------------------------------------

double target_value(Entropy& e) {
  const double r = e.uniform();
  return r < 0.35 ? 0.0 : (r < 0.7 ? 1.0 : e.uniform());
}

template <class X, class Z>
Input bce_input(Entropy& e, DType d, X x, Z z) {
  const size_t n = row_length(e);
  std::vector<double> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = x(e);
    b[i] = z(e, a[i]);
  }
  return two_rows(d, std::move(a), std::move(b));
}

std::vector<Regime> bce_regimes() {
  auto any_target = [](Entropy& e, double) { return target_value(e); };
  return {
      {"saturated", "|x| log-uniform in 10..1e4 (sigmoid saturated), targets 0, 1 or uniform",
       [=](Entropy& e, DType d) { return bce_input(e, d, [](Entropy& e) { return sign(e) * e.log_uniform(10, 1e4); }, any_target); }},
      {"soft_targets", "x N(0, 16), targets uniform in [0, 1]",
       [](Entropy& e, DType d) {
         return bce_input(e, d, [](Entropy& e) { return 4 * e.normal(); }, [](Entropy& e, double) { return e.uniform(); });
       }},
      {"near_zero_logits", "|x| log-uniform in 1e-8..0.1, targets 0, 1 or uniform",
       [=](Entropy& e, DType d) { return bce_input(e, d, [](Entropy& e) { return sign(e) * e.log_uniform(1e-8, 0.1); }, any_target); }},
      {"targets_near_0_1", "targets 2^-k or 1 - 2^-k agreeing with |x| in 1..100: loss near 0, x - x z cancels",
       [](Entropy& e, DType d) {
         return bce_input(e, d, [](Entropy& e) { return sign(e) * e.log_uniform(1, 100); },
                          [](Entropy& e, double x) {
                            const double t = e.log_uniform(1e-7, 0.1);
                            return x > 0 ? 1 - t : t;
                          });
       }},
      {"huge_logits", "|x| log-uniform from 1e4 to 1e30 (f32) / 1e300 (f64), targets 0, 1 or uniform",
       [=](Entropy& e, DType d) {
         const double hi = d == DType::f64 ? 1e300 : 1e30;
         return bce_input(e, d, [hi](Entropy& e) { return sign(e) * e.log_uniform(1e4, hi); }, any_target);
       }},
      {"mixed_scales", "|x| log-uniform over 1e-6..1e3, random signs, targets 0, 1 or uniform",
       [=](Entropy& e, DType d) { return bce_input(e, d, [](Entropy& e) { return sign(e) * e.log_uniform(1e-6, 1e3); }, any_target); }},
  };
}

Msg validate_bce(const Input& in) {
  if (auto m = check_rows(in, 2, "bce_with_logits")) return m;
  if (auto m = check_params(in, {})) return m;
  if (auto m = check_values(in, 0, "logits")) return m;
  return check_values(in, 1, "targets", 0.0, 1.0);
}

// |x z| rounds by u |x z| <= u cond |l|; max(x, 0) - x z >= 0 and log1p(exp(-|x|)) >= 0 (exp
// 1 u, log1p 1 u and propagates at most 1 u), the two roundings of the sums 1 u each:
// 4 u max(1, cond); + 1 for libm's functions rounding within 1 ulp, + 0.5 for the exact value's.
double bce_tolerance(DType, size_t) { return 6.0; }

// Probabilities: softmax of N(0, s^2) logits, rounded (they need not sum to 1 exactly).
std::vector<double> probs(Entropy& e, size_t n) { return softmax_of(normals(e, n, 0, e.log_uniform(0.1, 10))); }

// log of p as the dtype holds it; a p that rounds to 0 gets the log of the smallest normal.
double dtype_log(DType d, double p) { return std::log(std::max(round_to(d, p), dtype_min_normal(d))); }

std::vector<double> log_probs(Entropy& e, size_t n) {
  auto q = probs(e, n);
  for (auto& x : q) x = std::log(std::max(x, 1e-300));
  return q;
}

// p with one entry near 1 and the rest tiny (1e-30..1e-5 of it) or zero.
std::vector<double> peaked(Entropy& e, size_t n) {
  std::vector<double> p(n);
  for (auto& x : p) x = e.chance(0.2) ? 0.0 : e.log_uniform(1e-30, 1e-5);
  p[e.below(n)] = 1;
  double s = 0;
  for (double x : p) s += x;
  for (auto& x : p) x /= s;
  return p;
}

std::vector<Regime> kl_div_regimes() {
  return {
      {"random", "p and q softmax of N(0, s^2) logits",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return two_rows(d, log_probs(e, n), probs(e, n));
       }},
      {"close", "logq = log p + delta N(0, 1), delta log-uniform in 1e-8..1e-2: KL near 0",
       [](Entropy& e, DType d) {
         auto p = probs(e, row_length(e));
         const double s = e.log_uniform(1e-8, 1e-2);
         std::vector<double> lq(p.size());
         for (size_t i = 0; i < p.size(); ++i) lq[i] = dtype_log(d, p[i]) + s * e.normal();
         return two_rows(d, std::move(lq), std::move(p));
       }},
      {"equal", "logq = log p rounded to the dtype: KL at rounding level, very ill-conditioned",
       [](Entropy& e, DType d) {
         auto p = probs(e, row_length(e));
         std::vector<double> lq(p.size());
         for (size_t i = 0; i < p.size(); ++i) lq[i] = dtype_log(d, p[i]);
         return two_rows(d, std::move(lq), std::move(p));
       }},
      {"peaked", "p near one-hot (others 1e-30..1e-5 or 0), q softmax of N(0, s^2)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         return two_rows(d, log_probs(e, n), peaked(e, n));
       }},
      {"sparse", "p with 50..99% exact zeros (0 log 0 = 0), q softmax of N(0, s^2)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         auto p = probs(e, n);
         const double z = e.uniform(0.5, 0.99);
         for (auto& x : p) x = e.chance(z) ? 0.0 : x;
         return two_rows(d, log_probs(e, n), std::move(p));
       }},
      {"very_negative_logq", "logq log-uniform in -1e4..-10, p softmax of N(0, s^2)",
       [](Entropy& e, DType d) {
         const size_t n = row_length(e);
         std::vector<double> lq(n);
         for (auto& x : lq) x = -e.log_uniform(10, 1e4);
         return two_rows(d, std::move(lq), probs(e, n));
       }},
  };
}

Msg validate_kl_div(const Input& in) {
  if (auto m = check_rows(in, 2, "kl_div")) return m;
  if (auto m = check_params(in, {})) return m;
  if (auto m = check_values(in, 0, "logq")) return m;
  return check_values(in, 1, "probabilities p", 0.0, 1.0);
}

// With N = sum p_i (|D_i + 1| + |logq_i|) (= cond |y|), D_i = log p_i - logq_i, g = 7 + log2(n/8):
// the error is <= u [sum p_i |log p_i| + (2 + g) sum |t_i|] (log, subtraction and product 1 u each,
// the sum g u). Since |D + 1| + |D| >= 1, sum |t_i| <= 2 N + |y| and sum p_i |log p_i| <= 3 N + |y|,
// so the error is <= (10 + 3 g) u max(1, cond) |y| <= (22 + 3 log2 n_row) u ...; the verdict's n is
// 2 n_row: 19 + 3 log2 n.
double kl_div_tolerance(DType, size_t n) { return 19.0 + 3.0 * std::log2(static_cast<double>(n)); }

std::vector<Regime> entropy_regimes() {
  return {
      {"uniform", "p = 1/n (1 + 1e-3 N(0, 1)), normalized",
       [](Entropy& e, DType d) {
         auto v = normals(e, row_length(e), 1, 1e-3);
         double s = 0;
         for (double x : v) s += x;
         for (auto& x : v) x /= s;
         return one_row(d, std::move(v));
       }},
      {"random", "softmax of N(0, s^2) logits, s log-uniform in [0.1, 10]",
       [](Entropy& e, DType d) { return one_row(d, probs(e, row_length(e))); }},
      {"peaked", "one p near 1, the rest 1e-30..1e-5 of it or 0",
       [](Entropy& e, DType d) { return one_row(d, peaked(e, row_length(e))); }},
      {"near_one", "independent p_i = 1 - t, t log-uniform in 1e-7..0.1 (not normalized)",
       [](Entropy& e, DType d) {
         std::vector<double> v(row_length(e));
         for (auto& x : v) x = 1 - e.log_uniform(1e-7, 0.1);
         return one_row(d, std::move(v));
       }},
      {"zeros_and_ones", "p_i 0, 1 or softmax-like, at least half of them 0 or 1",
       [](Entropy& e, DType d) {
         auto v = probs(e, row_length(e));
         for (auto& x : v)
           if (e.chance(0.6)) x = e.chance(0.5) ? 0.0 : 1.0;
         return one_row(d, std::move(v));
       }},
      {"tiny", "p_i log-uniform in [1e-30, 1e-5]: H tiny but every term normal",
       [](Entropy& e, DType d) {
         std::vector<double> v(row_length(e));
         for (auto& x : v) x = e.log_uniform(1e-30, 1e-5);
         return one_row(d, std::move(v));
       }},
  };
}

Msg validate_entropy(const Input& in) {
  if (auto m = check_rows(in, 1, "entropy")) return m;
  if (auto m = check_params(in, {})) return m;
  return check_values(in, 0, "probabilities p", 0.0, 1.0);
}

// Every term -p log p >= 0 (log 1 u, product 1 u), pairwise sum g u with g <= 4 + log2 n, no
// cancellation: (6 + log2 n) u relative; + 0.5 for the exact value's rounding, + 1.5 for libm.
double entropy_tolerance(DType, size_t n) { return 8.0 + std::log2(static_cast<double>(n)); }

// ---- assembly ---------------------------------------------------------------------------------

template <class Op>
Family family(std::string name, std::string summary, std::vector<Regime> regimes,
              std::function<Msg(const Input&)> validate, std::function<OracleResult(const Input&)> oracle,
              std::function<double(DType, size_t)> tol, std::string description) {
  Family f;
  f.name = name;
  f.summary = std::move(summary);
  f.regimes = std::move(regimes);
  f.validate = std::move(validate);
  f.oracle = std::move(oracle);
  f.tolerance_ulps = std::move(tol);
  f.cestac_margin_digits = 1.0;
  f.finite_outputs = true;
  Target t;
  t.id = name + "/cpu/stable";
  t.kind = TargetKind::reference;
  t.description = std::move(description);
  t.dtypes = {DType::f64, DType::f32};
  t.native = op_native<Op>();
  t.cestac = op_cestac<Op>();
  f.targets.push_back(std::move(t));
  return f;
}

}  // namespace

std::vector<Family> normalization_families() {
  std::vector<Family> v;
  v.push_back(family<LogSoftmaxStable>(
      "log_softmax", "y_i = x_i - log sum_j exp(x_j) over one finite row x [n]", log_softmax_regimes(),
      validate_log_softmax, oracle::log_softmax, log_softmax_tolerance,
      "max subtraction, log1p of the pairwise sum of the other exps"));
  v.push_back(family<CrossEntropyStable>(
      "cross_entropy", "loss = -log_softmax(x)[target] for logits x [n], param target (class index, default 0)",
      cross_entropy_regimes(), validate_cross_entropy, oracle::cross_entropy, log_softmax_tolerance,
      "(m - x_t) + log1p of the pairwise sum of the other exps"));
  v.push_back(family<LayerNormStable>(
      "layer_norm", "y = (x - mean) / sqrt(var + eps) over one row x [n] (biased var), param eps (default 1e-5)",
      layer_norm_regimes(), [](const Input& in) { return validate_norm(in, "layer_norm", 1e-5, true, false); },
      oracle::layer_norm, layer_norm_tolerance, "corrected two-pass mean, scaled pairwise sum of squares"));
  v.push_back(family<RmsNormStable>(
      "rms_norm", "y = x / sqrt(mean(x^2) + eps) over one row x [n], param eps (default 1e-6)", rms_norm_regimes(),
      [](const Input& in) { return validate_norm(in, "rms_norm", 1e-6, false, false); }, oracle::rms_norm,
      rms_norm_tolerance, "scaled pairwise sum of squares"));
  v.push_back(family<BatchNormStable>(
      "batch_norm",
      "training-mode batch norm of x [n, c] row-major: each channel by its batch mean and biased var, "
      "param eps (default 1e-5); output [n, c]",
      batch_norm_regimes(), [](const Input& in) { return validate_norm(in, "batch_norm", 1e-5, true, true); },
      oracle::batch_norm, layer_norm_tolerance, "per channel: corrected two-pass mean, scaled sum of squares"));
  v.push_back(family<BceWithLogitsStable>(
      "bce_with_logits", "l_i = max(x_i, 0) - x_i z_i + log1p(exp(-|x_i|)) for logits x [n] and targets z [n] in [0, 1]",
      bce_regimes(), validate_bce, oracle::bce_with_logits, bce_tolerance, "max(x, 0) - x z + log1p(exp(-|x|))"));
  v.push_back(family<KlDivStable>(
      "kl_div", "y = sum_i p_i (log p_i - logq_i) (0 log 0 = 0) for log-probabilities logq [n] and p [n] in [0, 1]",
      kl_div_regimes(), validate_kl_div, oracle::kl_div, kl_div_tolerance,
      "p (log p - logq) over p > 0, pairwise sum"));
  v.push_back(family<EntropyStable>(
      "entropy", "H = -sum_i p_i log p_i (0 log 0 = 0) for probabilities p [n] in [0, 1]", entropy_regimes(),
      validate_entropy, oracle::entropy, entropy_tolerance, "-p log p over p > 0, pairwise sum"));
  return v;
}

}  // namespace stabfuzz::targets
