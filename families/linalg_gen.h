// Sampling helpers and assembly shared by the linalg, similarity and optimizer families.
//
// Regimes of these groups aim at a condition number (cond_target), cancel to a chosen depth, or
// push products and norms to the ends of the dtype's range; reference_family() joins a family's
// contract with its stable CPU target, written once over the scalar type (targets/cpu/linalg.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "families/regimes.h"
#include "injectors/faultable.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/op.h"

namespace stabfuzz::families::linalg_gen {

using regime::row_length;
using Params = std::vector<std::pair<std::string, double>>;
using Vec = std::vector<double>;

// ---- sampling helpers ---------------------------------------------------------------------------
inline double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }
inline double clip4(double x) { return std::fmax(-4.0, std::fmin(4.0, x)); }
inline double min_subnormal(DType d) { return dtype_format(d).quantum_min(); }
// A range endpoint by the dtype's exponent range: bf16 shares f32's, f16's ends at 65504 and 6e-8.
inline double by_range(DType d, double f64, double f32, double f16) {
  return d == DType::f64 ? f64 : (d == DType::f16 ? f16 : f32);
}
// 10^-c, c uniform over what the dtype resolves: for cancellations that cannot flip a sign.
inline double depth(Entropy& e, DType d) {
  const double digits =
      d == DType::f64 ? 16.0 : (d == DType::f32 ? 7.5 : dtype_max_digits(d) + 0.3);
  return std::pow(10.0, -e.uniform(1.0, digits));
}
// Conditioning the cancellation regimes aim at: C log-uniform in [10, 0.02 / (u tol)]. Beyond
// cond ~ 1 / (u tol) the allowed error tol cond ulp exceeds the exact value itself: a correct
// kernel may return 0 or the wrong sign, and only a non-finite output could still be judged.
// f16 and bf16 resolve so little (1 / (u tol) ~ 100 and 13) that C spans [2, max(4, 0.2 / (u
// tol))] there: errors up to a third of the value are allowed, larger ones still fire.
inline double cond_target(Entropy& e, DType d, double tol) {
  const double r = 1 / (dtype_unit_roundoff(d) * tol);
  if (d == DType::f16 || d == DType::bf16) return e.log_uniform(2, std::max(4.0, 0.2 * r));
  return e.log_uniform(10, 0.02 * r);
}
// A relative perturbation far below 1 / c (and no smaller than u), random sign.
inline double below(Entropy& e, DType d, double c) {
  const double lo = std::log10(c) + 2, hi = -std::log10(dtype_unit_roundoff(d));
  return sign(e) * std::pow(10.0, -e.uniform(lo, std::max(lo, hi) + 1e-9));
}
// Log-uniform integer in [lo, hi].
inline size_t log_int(Entropy& e, size_t lo, size_t hi) {
  const double l = e.uniform(std::log(double(lo)), std::log(hi + 1.0));
  return std::clamp(static_cast<size_t>(std::exp(l)), lo, hi);
}
inline Vec normals(Entropy& e, size_t n, double scale = 1, double mean = 0) {
  Vec v(n);
  for (auto& x : v) x = mean + scale * e.normal();
  return v;
}
// Random signs, magnitudes log-uniform in [lo, hi].
inline Vec log_mags(Entropy& e, size_t n, double lo, double hi) {
  Vec v(n);
  for (auto& x : v) {
    const double s = sign(e);
    x = s * e.log_uniform(lo, hi);
  }
  return v;
}
// Each of the rows of v (row-major, `cols` wide) times its own factor log-uniform in [lo, hi].
inline Vec scale_rows(Entropy& e, Vec v, size_t cols, double lo, double hi) {
  for (size_t i = 0; i < v.size(); i += cols) {
    const double r = e.log_uniform(lo, hi);
    for (size_t c = 0; c < cols; ++c) v[i + c] *= r;
  }
  return v;
}
inline Tensor vec(Vec v) { return Tensor{{static_cast<int64_t>(v.size())}, std::move(v)}; }
inline Tensor mat(size_t r, size_t c, Vec v) {
  return Tensor{{static_cast<int64_t>(r), static_cast<int64_t>(c)}, std::move(v)};
}
inline Input rows(DType d, Vec a, Vec b, Params p = {}) {
  return regime::make_input(d, {vec(std::move(a)), vec(std::move(b))}, std::move(p));
}

// Two-row regimes shared by dot, cosine_similarity and pairwise_distance.
// In f16 the scales keep sum |a_i b_i| of 4096 values below 65504: [0.05, 1] instead of
// [1e-3, 1e3], and the shifted rows are 2 + 0.01 N (a spread of ~10 ULPs of the mean).
inline Input random_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  const double lo = by_range(d, 1e-3, 1e-3, 0.05), hi = by_range(d, 1e3, 1e3, 1);
  Vec a = normals(e, n, e.log_uniform(lo, hi));  // drawn first: regimes.h, "one draw per call"
  return rows(d, std::move(a), normals(e, n, e.log_uniform(lo, hi)));
}
inline Input shifted_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  const double c = by_range(d, 1e4, 1e4, 2), sd = by_range(d, 1, 1, 0.01);
  const bool both = e.chance(0.5);
  Vec a = normals(e, n, sd, c);
  return rows(d, std::move(a), both ? normals(e, n, sd, c) : normals(e, n, 1, 0));
}
inline Input tiny_rows(Entropy& e, DType d) {
  const size_t n = row_length(e);
  const double lo = 8 * min_subnormal(d), hi = 1e3 * dtype_min_normal(d);
  Vec a = log_mags(e, n, lo, hi);
  return rows(d, std::move(a), log_mags(e, n, lo, hi));
}
// a orthogonal to b (long double projection), then tilted by the multiple of b that sets a.b to
// +-sum |a_i b_i| / c: cond ~ 2c, far above the rounding residual of order u sum |a b|.
inline Input orthogonal_rows(Entropy& e, DType d, double tol) {
  const size_t n = std::max<size_t>(2, row_length(e));
  const double c = cond_target(e, d, tol);
  Vec b = log_mags(e, n, by_range(d, 1e-2, 1e-2, 0.1), by_range(d, 1e2, 1e2, 4));
  Vec a = normals(e, n, e.log_uniform(by_range(d, 1e-3, 1e-3, 0.05), by_range(d, 1e3, 1e3, 1)));
  long double ab = 0, bb = 0, abs = 0;
  for (size_t i = 0; i < n; ++i) ab += a[i] * static_cast<long double>(b[i]), bb += b[i] * b[i];
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<double>(a[i] - ab / bb * b[i]);
    abs += std::fabs(a[i] * static_cast<long double>(b[i]));
  }
  const long double gamma = sign(e) * abs / (c * bb);
  for (size_t i = 0; i < n; ++i) a[i] = static_cast<double>(a[i] + gamma * b[i]);
  return rows(d, std::move(a), std::move(b));
}
// Products a b in [2^26, 2^34] times the smallest normal: one factor tiny (often subnormal), the
// other large. Products below the normal range would lose bits to underflow, an error that no
// componentwise condition number accounts for.

// f16 and bf16 compute each operation in double and round it to the format (per-op rounding,
// stabfuzz/lowp.h); parameters (eps, lr, betas, scale) are rounded to the dtype first, in the
// kernel (T(value)) and in the oracle alike (oracles/linalg.h), as PyTorch holds them.
inline constexpr const char* kLowpSemantics =
    "; f16/bf16: per-op rounding (each op in double, rounded to the format), parameters rounded "
    "to the dtype";

// A family whose one target is its stable CPU reference Op in f64, f32, f16 and bf16, its entry
// points made by Adapter (stabfuzz/op.h PlainAdapter, targets/cpu/linalg.h OpmathAdapter).
template <class Op, class Adapter = PlainAdapter>
Family reference_family(std::string name, std::string summary, std::vector<Regime> regimes,
                        decltype(Family::validate) validate, decltype(Family::oracle) oracle,
                        decltype(Family::tolerance_ulps) tol, std::string desc) {
  Target t;  // assigned member by member: GCC warns about designated initializers that stop early
  t.id = name + "/cpu/stable";
  t.kind = TargetKind::reference;
  t.description = desc + kLowpSemantics;
  t.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  t.native = Adapter::template native<Op>();
  t.cestac = Adapter::template cestac<Op>();
  t.faultable = fault::faultable<Op, Adapter>();
  return Family{.name = std::move(name),
                .summary = std::move(summary),
                .regimes = std::move(regimes),
                .validate = std::move(validate),
                .oracle = std::move(oracle),
                .tolerance_ulps = std::move(tol),
                .cestac_margin_digits = 1.0,
                .finite_outputs = true,
                .targets = {std::move(t)}};
}

}  // namespace stabfuzz::families::linalg_gen
