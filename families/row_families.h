// Row-family contracts shared by the normalization and loss groups: validation, generators,
// assembly.
//
// Each family of these groups is a Contract (its tensors, value ranges and parameters), a few value
// regimes built from the generators below, an oracle and a tolerance; family<Op>() joins them with
// the stable CPU target written once over the scalar type (targets/cpu/normalization.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "families/regimes.h"
#include "injectors/faultable.h"
#include "stabfuzz/lowp.h"
#include "stabfuzz/op.h"

namespace stabfuzz::families::row_gen {
using namespace targets;  // NOLINT: the reference kernels these families register

using regime::row_length;
using Msg = std::optional<std::string>;
using Params = std::vector<std::pair<std::string, double>>;

constexpr size_t kMaxValues = size_t{1} << 24;

// ---- validation -------------------------------------------------------------------------------

// A tensor of a family's signature: its name and value range (values are also finite and
// representable); `sum_bounded` caps |x| at max / 2, so that x - max x and x - mean x stay finite
// (the kernels scale their sums: every summed term has magnitude <= 2).
struct TensorSpec {
  const char* what;
  double lo = -INFINITY, hi = INFINITY;
  bool sum_bounded = false;
};

// What a family accepts: its tensors (all with `dims` dimensions and the same size), its
// parameter names, and eps's default when it takes eps (0: it does not).
struct Contract {
  const char* family;
  std::vector<TensorSpec> tensors;
  size_t dims = 1;
  std::vector<std::string> params = {};
  double eps = 0;
};

inline Msg check(const Input& in, const Contract& c) {
  const std::string f = c.family;
  if (in.args.size() != c.tensors.size())
    return f + " takes " + std::to_string(c.tensors.size()) + " tensor(s)";
  for (size_t k = 0; k < in.args.size(); ++k) {
    const auto& t = in.args[k];
    const TensorSpec& spec = c.tensors[k];
    size_t size = 1;
    for (int64_t s : t.shape) size = s < 1 ? 0 : size * static_cast<size_t>(s);
    if (t.shape.size() != c.dims || size != t.values.size())
      return f + (c.dims == 1 ? " takes rows [n]" : " takes a tensor [n, c]") +
             " of that many values";
    if (size == 0) return f + " of an empty tensor is undefined";
    if (size > kMaxValues) return "a tensor holds more than 16777216 values";
    // Pairwise sums of up to len terms of magnitude <= 2 (exps, scaled values) stay finite; a
    // reduction runs along a row, or down a column of [n, c].
    const auto len = c.dims == 1 ? size : static_cast<size_t>(t.shape[0]);
    if (static_cast<double>(len) > dtype_format(in.dtype).max_finite() / 4)
      return f + ": a reduction longer than max / 4 of the dtype (16376 in f16)";
    if (size != in.args[0].values.size()) return f + " rows must have equal lengths";
    const double lim = spec.sum_bounded ? dtype_format(in.dtype).max_finite() / 2 : INFINITY;
    const double lo = std::max(spec.lo, -lim), hi = std::min(spec.hi, lim);
    for (double v : t.values) {
      if (!std::isfinite(v)) return std::string(spec.what) + " must be finite";
      if (v < lo || v > hi) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " must lie in [%g, %g]", lo, hi);
        return spec.what + std::string(buf);
      }
      if (!representable(in.dtype, v)) return "a value is not representable in the dtype";
    }
  }
  for (const auto& [name, v] : in.params)
    if (std::find(c.params.begin(), c.params.end(), name) == c.params.end())
      return "unknown parameter '" + name + "'";
  // eps is added in the dtype, so it must stay positive once rounded to it.
  const double eps = in.param("eps", c.eps);
  if (c.eps > 0 && !(std::isfinite(eps) && round_to(in.dtype, eps) > 0))
    return "eps must be finite and positive in the dtype";
  return std::nullopt;
}

// ---- generators -------------------------------------------------------------------------------

inline double sign(Entropy& e) { return e.chance(0.5) ? 1.0 : -1.0; }

inline std::vector<double> normals(Entropy& e, size_t n, double mean, double sd) {
  std::vector<double> v(n);
  for (auto& x : v) x = mean + sd * e.normal();
  return v;
}

inline Input one_row(DType d, std::vector<double> v, Params params = {}) {
  const auto n = static_cast<int64_t>(v.size());
  return regime::make_input(d, {Tensor{{n}, std::move(v)}}, std::move(params));
}

inline Input two_rows(DType d, std::vector<double> a, std::vector<double> b) {
  const auto n = static_cast<int64_t>(a.size());
  return regime::make_input(d, {Tensor{{n}, std::move(a)}, Tensor{{n}, std::move(b)}});
}

inline size_t argmax(const std::vector<double>& v) {
  size_t k = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[k]) k = i;
  return k;
}

inline std::vector<double> softmax_of(std::vector<double> v) {
  const double m = v[argmax(v)];
  double s = 0;
  for (auto& x : v) s += (x = std::exp(x - m));
  for (auto& x : v) x /= s;
  return v;
}

// ---- rows shared by the regimes ---------------------------------------------------------------

using RowFn = std::vector<double> (*)(Entropy&, DType);

inline Regime on_row(const char* name, const char* description, RowFn row, Params p = {}) {
  return {name, description, [row, p](Entropy& e, DType d) { return one_row(d, row(e, d), p); }};
}

// Magnitudes log-uniform in [lo, hi], with random signs when `signs`.
inline std::vector<double> log_uniforms(Entropy& e, double lo, double hi, bool signs) {
  std::vector<double> v(row_length(e));
  for (auto& x : v) x = (signs ? sign(e) : 1.0) * e.log_uniform(lo, hi);
  return v;
}

// 50..99% of the values replaced by exact zeros.
inline std::vector<double> with_zeros(Entropy& e, std::vector<double> v) {
  const double p = e.uniform(0.5, 0.99);
  for (auto& x : v) x = e.chance(p) ? 0.0 : x;
  return v;
}

// ---- assembly ---------------------------------------------------------------------------------

// The stable target runs in every dtype: f16 and bf16 compute each operation in double and round
// it to the format (per-op rounding, stabfuzz/lowp.h); parameters such as eps are rounded to the
// dtype first, in the kernel (T(eps)) and in the oracle alike, as PyTorch holds them.
inline constexpr const char* kLowpSemantics =
    "; f16/bf16: per-op rounding (each op in double, rounded to the format), eps rounded to the "
    "dtype";

template <class Op>
Family family(Contract c, std::string summary, std::vector<Regime> regimes,
              std::function<OracleResult(const Input&)> oracle,
              std::function<double(DType, size_t)> tol, std::string description,
              Msg (*extra)(const Input&) = nullptr) {
  Family f;
  f.name = c.family;
  f.summary = std::move(summary);
  f.regimes = std::move(regimes);
  f.validate = [c, extra](const Input& in) {
    auto m = check(in, c);
    return m || !extra ? m : extra(in);
  };
  f.oracle = std::move(oracle);
  f.tolerance_ulps = std::move(tol);
  f.cestac_margin_digits = 1.0;
  f.finite_outputs = true;
  Target t;
  t.id = f.name + "/cpu/stable";
  t.kind = TargetKind::reference;
  t.description = std::move(description) + kLowpSemantics;
  t.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16};
  t.native = op_native<Op>();
  t.cestac = op_cestac<Op>();
  t.faultable = fault::faultable<Op>();
  f.targets.push_back(std::move(t));
  return f;
}

}  // namespace stabfuzz::families::row_gen
