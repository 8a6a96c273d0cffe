// Oracles of the normalization layers: layer_norm, rms_norm and batch_norm.
#include "oracles/normalization.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "oracles/double_double.h"
#include "oracles/mpfr_util.h"
#include "stabfuzz/params.h"

namespace stabfuzz::oracle {
namespace {

// eps as the kernels see it: a parameter rounded to the dtype they add it in.
double dtype_eps(const Input& in, double fallback) {
  return round_to(in.dtype, in.param("eps", fallback));
}

// Bits that hold sum_j x_j and n x_i - sum_j x_j exactly: from the top of the largest value
// (plus log2 n <= 24 carries) down to the last bit of the smallest nonzero value.
mpfr_prec_t exact_sum_precision(const std::vector<double>& x) {
  int hi = INT32_MIN, lo = INT32_MAX;
  for (double v : x) {
    if (v == 0) continue;
    int e;
    std::frexp(v, &e);  // |v| < 2^e, its last bit >= 2^(e - 53), or the subnormal quantum
    hi = std::max(hi, e);
    lo = std::min(lo, std::max(e - 53, -1074));
  }
  return hi == INT32_MIN ? 64 : static_cast<mpfr_prec_t>(hi - lo + 64);
}

// sum_j |n d_ij - 1 - y_i y_j| a_j for every i, a_j = |x_j|, in O(n log n): with the j sorted by
// y_j, 1 + y_i y_j >= 0 exactly on one side of -1/y_i, so prefix sums of a_j and y_j a_j give
// the sum of |1 + y_i y_j| a_j; the j = i term is then replaced by |n - 1 - y_i^2| a_i. The split
// -1/y_i grows with y_i among the negative y_i and among the positive ones, so one pointer per
// sign finds every split in one sweep. Long double keeps the absolute error near 2^-64 times
// sum_j (1 + |y_i y_j|) a_j.
std::vector<long double> layer_norm_numerators(const std::vector<long double>& y,
                                               const std::vector<double>& x) {
  const size_t n = y.size();
  struct Key {
    long double y;
    size_t j;
  };
  std::vector<Key> ord(n);
  for (size_t j = 0; j < n; ++j) ord[j] = {y[j], j};
  std::sort(ord.begin(), ord.end(), [](const Key& a, const Key& b) { return a.y < b.y; });
  std::vector<long double> pa(n + 1, 0), pb(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    const long double a = std::fabs(static_cast<long double>(x[ord[k].j]));
    pa[k + 1] = pa[k] + a;
    pb[k + 1] = pb[k] + ord[k].y * a;
  }
  const long double ln = static_cast<long double>(n);
  std::vector<long double> out(n);
  // [0, c) holds y_j < -1/y_i (for y_i > 0: the negative side), [c, n) the rest.
  size_t c_neg = 0, c_pos = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = ord[k].j;
    const long double yi = ord[k].y, ai = std::fabs(static_cast<long double>(x[i]));
    long double tot;
    if (yi == 0) {
      tot = pa[n];
    } else {
      const long double t = -1 / yi;
      size_t& c = yi < 0 ? c_neg : c_pos;
      while (c < n && ord[c].y < t) ++c;
      const long double lo = pa[c] + yi * pb[c];
      const long double hi = (pa[n] - pa[c]) + yi * (pb[n] - pb[c]);
      tot = yi > 0 ? hi - lo : lo - hi;
    }
    tot += -(1 + yi * yi) * ai + std::fabs(ln - 1 - yi * yi) * ai;
    out[i] = std::max<long double>(tot, 0);
  }
  return out;
}

// Layer normalization of one row at working precision p; exact and cond appended to r.
// c_i = (n x_i - S) / n with S = sum x exact, so c_i is within 2^-p; c_i^2 within 3 * 2^-p, their
// sum 4, / n 5, + eps 6 (all terms >= 0), sqrt 3 + 1 = 4, y = c / sigma 1 + 4 + 1 = 6 * 2^-p
// < 2^(3 - p): err_bits p - 3, passed as p - 4.
bool layer_norm_row(const std::vector<double>& x, double eps, DType dt, mpfr_prec_t p,
                    std::vector<double>& exact, std::vector<double>& cond) {
  const size_t n = x.size();
  const mpfr_prec_t pe = exact_sum_precision(x);
  std::vector<Real> xs;
  xs.reserve(n);
  for (double v : x) xs.emplace_back(kExactDoublePrecision, v);
  Real s(pe), t(pe);
  sum(s, xs);                   // exact
  std::vector<Real> nc, c, sq;  // n c_i exactly, c_i and c_i^2 at p
  nc.reserve(n);
  c.reserve(n);
  sq.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    mpfr_mul_ui(t, xs[i], n, MPFR_RNDN);  // exact
    nc.emplace_back(pe);
    mpfr_sub(nc.back(), t, s, MPFR_RNDN);  // exact
    c.emplace_back(p);
    mpfr_div_ui(c.back(), nc.back(), n, MPFR_RNDN);
    sq.emplace_back(p);
    mpfr_sqr(sq.back(), c.back(), MPFR_RNDN);
  }
  Real sigma(p), y(p);
  sum(sigma, sq);
  mpfr_div_ui(sigma, sigma, n, MPFR_RNDN);
  mpfr_add_d(sigma, sigma, eps, MPFR_RNDN);
  mpfr_sqrt(sigma, sigma, MPFR_RNDN);
  std::vector<long double> ys(n);
  for (size_t i = 0; i < n; ++i) {
    mpfr_div(y, c[i], sigma, MPFR_RNDN);
    const auto v = round_decided(y, p - 4, dt);
    if (!v) return false;
    exact.push_back(*v);
    ys[i] = approx_long_double(y);
  }
  const auto num = layer_norm_numerators(ys, x);
  for (size_t i = 0; i < n; ++i) {
    // cond_i = num_i / (n |c_i|); exact 0 outputs follow normalization.h's convention.
    const long double den = std::fabs(approx_long_double(nc[i]));
    if (mpfr_zero_p(nc[i]))
      cond.push_back(num[i] == 0 ? 0.0 : INFINITY);
    else
      cond.push_back(static_cast<double>(num[i] / den));
  }
  return true;
}

// The same row in double-double (oracles/double_double.h), every error bounded; false when the
// row is outside its range (n > 4096, values that a scaling to max |x| < 2 would round) or an
// output is not decided, and layer_norm_row decides the row in MPFR. u = 2^-53; terms of 2^-1070
// cover low words below the normal range.
//  - S = sum x by AccurateDWPlusDW: within E_S = 3u^2 sum_k |S_k| (the partial sums).
//  - n c_i = n x_i - S (n x_i exact): within E_S + 3u^2 |n c_i|; c_i = (n c_i) / n (DWDivDW2,
//    15u^2 + 56u^3): within d_i = (E_S + 3u^2 |n c_i|) / n + 16u^2 |c_i|.
//  - Q = sum c_i^2 (DWTimesDW3 4u^2; terms >= 0, so AccurateDWPlusDW's partial sums are below Q):
//    within (4 + 3n) u^2 Q + sum (2 |c_i| d_i + d_i^2) + n 2^-1070 (low words below the normal
//    range).
//  - V = Q / n + eps: relative error e_V from Q's, 16u^2 and 3u^2; sigma = sqrt V: e_V / 2 + 3u^2.
//  - y_i = c_i / sigma: d_i / |c_i| + e_sigma + 16u^2; the bounds are summed in double and
//    inflated by 1/16 for their own roundings and second-order terms.
bool layer_norm_row_dd(const std::vector<double>& x_in, double eps_in, DType dt,
                       std::vector<double>& exact, std::vector<double>& cond) {
  using dd::DD;
  constexpr double u2 = 0x1p-106;
  const size_t n = x_in.size();
  if (n == 0 || n > 4096 || !(eps_in >= 0)) return false;
  double mx = 0;
  bool all_equal = true;
  for (double v : x_in) {
    if (!std::isfinite(v)) return false;
    mx = std::fmax(mx, std::fabs(v));
    all_equal = all_equal && v == x_in[0];
  }
  // A row with values past 2^480 is scaled by 2^-k (max in [1, 2); values that fall below the
  // normal range round within 2^-1075, inside the 2^-1070 terms) and eps by 2^-2k (within
  // 2^-1074 if it underflows): y does not change, cond within those roundings.
  std::vector<double> scaled;
  double eps = eps_in, eps_err = 0;
  if (mx > 0x1p480) {
    const int k = std::ilogb(mx);
    scaled.resize(n);
    for (size_t j = 0; j < n; ++j) scaled[j] = std::ldexp(x_in[j], -k);  // tiny ones: 2^-1075
    eps = std::ldexp(eps_in, -2 * k);
    eps_err = 0x1p-1074;
  }
  const std::vector<double>& x = scaled.empty() ? x_in : scaled;
  const double nd = static_cast<double>(n);
  DD s{0, 0};
  double e_s = 0;
  if (all_equal) {  // S = n x exactly (one value, or a constant row): every c_i is exactly 0
    s = dd::two_prod(nd, x[0]);
  } else {
    double partials = 0;
    for (double v : x) {
      s = dd::add_accurate(s, {v, 0});
      partials += std::fabs(s.hi);
    }
    // Low words below the normal range (tiny values): 2^-1070 per term.
    e_s = (3 * u2 * partials + nd * 0x1p-1070) * 1.0625;
  }
  std::vector<DD> nc(n), c(n);
  std::vector<double> d(n);
  DD q{0, 0};
  double spread = 0;  // sum (2 |c_i| d_i + d_i^2)
  for (size_t i = 0; i < n; ++i) {
    nc[i] = dd::add_accurate(dd::two_prod(nd, x[i]), {-s.hi, -s.lo});
    c[i] = dd::div(nc[i], {nd, 0});
    d[i] = (e_s + 3 * u2 * std::fabs(nc[i].hi)) / nd + 16 * u2 * std::fabs(c[i].hi) + 0x1p-1070;
    q = dd::add_accurate(q, dd::mul(c[i], c[i]));
    spread += (2 * std::fabs(c[i].hi) + d[i]) * d[i];
  }
  if (all_equal) {  // y = 0 / sqrt(eps) = 0 exactly
    if (!(eps_in > 0)) return false;
    exact.insert(exact.end(), n, 0.0);
    const auto num = layer_norm_numerators(std::vector<long double>(n, 0.0L), x);
    for (size_t i = 0; i < n; ++i) cond.push_back(num[i] == 0 ? 0.0 : INFINITY);
    return true;
  }
  const double e_q = (4 + 3 * nd) * u2 * q.hi + spread + nd * 0x1p-1070;
  const DD m = dd::div(q, {nd, 0});
  const DD v = dd::add_accurate(m, {eps, 0});
  if (!(v.hi > 0x1p-900)) return false;  // sqrt_dd's residual stays normal
  const double e_v = ((e_q / nd) * (1 + 16 * u2) + 16 * u2 * m.hi + eps_err) / v.hi + 3 * u2;
  if (!(e_v < 0x1p-60)) return false;
  const DD sigma = dd::sqrt_dd(v);
  const double e_sigma = e_v / 2 + 3 * u2;
  std::vector<long double> ys(n);
  const size_t first = exact.size();
  for (size_t i = 0; i < n; ++i) {
    if (c[i].hi == 0) {  // not known to be exactly 0 (that needs an exact sum)
      exact.resize(first);
      return false;
    }
    const DD y = dd::div(c[i], sigma);
    const double e_y = (d[i] / std::fabs(c[i].hi) + e_sigma + 16 * u2) * 1.0625;
    const auto r = dd::round_double_double(y, std::fabs(y.hi) * e_y, dt);
    if (!r) {
      exact.resize(first);
      return false;
    }
    exact.push_back(*r);
    ys[i] = static_cast<long double>(y.hi) + y.lo;
  }
  const auto num = layer_norm_numerators(ys, x);
  for (size_t i = 0; i < n; ++i)
    cond.push_back(
        static_cast<double>(num[i] / std::fabs(static_cast<long double>(nc[i].hi) + nc[i].lo)));
  return true;
}

}  // namespace

namespace detail {

std::optional<OracleResult> layer_norm_double_double(const Input& in) {
  OracleResult r;
  if (!layer_norm_row_dd(in.args.at(0).values, dtype_eps(in, params::kLayerNormEps), in.dtype,
                         r.exact, r.cond))
    return std::nullopt;
  r.decidable = true;
  r.precision_bits = 106;
  return r;
}

OracleResult layer_norm_mpfr(const Input& in) {
  const auto& x = in.args.at(0).values;
  const double eps = dtype_eps(in, params::kLayerNormEps);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return layer_norm_row(x, eps, in.dtype, p, r.exact, r.cond);
  });
}

// Every channel (column) through `row` (the double-double or the MPFR evaluation of one row).
template <class Row>
bool batch_norm_columns(const Input& in, OracleResult& r, Row&& row) {
  const auto& t = in.args.at(0);
  const auto rows = static_cast<size_t>(t.shape.at(0)), cols = static_cast<size_t>(t.shape.at(1));
  r.exact.assign(t.values.size(), 0.0);
  r.cond.assign(t.values.size(), 0.0);
  std::vector<double> col(rows), ex, co;
  for (size_t c = 0; c < cols; ++c) {
    for (size_t i = 0; i < rows; ++i) col[i] = t.values[i * cols + c];
    ex.clear();
    co.clear();
    if (!row(col, ex, co)) return false;
    for (size_t i = 0; i < rows; ++i) {
      r.exact[i * cols + c] = ex[i];
      r.cond[i * cols + c] = co[i];
    }
  }
  return true;
}

std::optional<OracleResult> batch_norm_double_double(const Input& in) {
  const double eps = dtype_eps(in, params::kBatchNormEps);
  OracleResult r;
  if (!batch_norm_columns(in, r, [&](const auto& col, auto& ex, auto& co) {
        return layer_norm_row_dd(col, eps, in.dtype, ex, co);
      }))
    return std::nullopt;
  r.decidable = true;
  r.precision_bits = 106;
  return r;
}

OracleResult batch_norm_mpfr(const Input& in) {
  const double eps = dtype_eps(in, params::kBatchNormEps);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return batch_norm_columns(in, r, [&](const auto& col, auto& ex, auto& co) {
      return layer_norm_row(col, eps, in.dtype, p, ex, co);
    });
  });
}

}  // namespace detail

OracleResult layer_norm(const Input& in) {
  if (auto r = detail::layer_norm_double_double(in)) return std::move(*r);
  return detail::layer_norm_mpfr(in);
}

OracleResult batch_norm(const Input& in) {
  if (auto r = detail::batch_norm_double_double(in)) return std::move(*r);
  return detail::batch_norm_mpfr(in);
}

// ms = sum x_j^2 / n (squares exact in 106 bits, mpfr_sum correctly rounded: 2^-p, / n: 2),
// + eps 3, sqrt 1.5 + 1 = 2.5, y = x / sigma 3.5 * 2^-p < 2^(2 - p): err_bits p - 2, passed p - 3.
OracleResult rms_norm(const Input& in) {
  const auto& x = in.args.at(0).values;
  const double eps = dtype_eps(in, params::kRmsNormEps);
  const size_t n = x.size();
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    std::vector<Real> sq;
    sq.reserve(n);
    for (double v : x) {
      sq.emplace_back(2 * kExactDoublePrecision, v);
      mpfr_sqr(sq.back(), sq.back(), MPFR_RNDN);  // exact
    }
    Real sigma(p), y(p), xm(kExactDoublePrecision);
    sum(sigma, sq);
    mpfr_div_ui(sigma, sigma, n, MPFR_RNDN);
    mpfr_add_d(sigma, sigma, eps, MPFR_RNDN);
    mpfr_sqrt(sigma, sigma, MPFR_RNDN);
    std::vector<long double> ys(n);
    long double total = 0;
    for (size_t i = 0; i < n; ++i) {
      mpfr_set_d(xm, x[i], MPFR_RNDN);
      mpfr_div(y, xm, sigma, MPFR_RNDN);
      const auto v = round_decided(y, p - 3, in.dtype);
      if (!v) return false;
      r.exact.push_back(*v);
      ys[i] = approx_long_double(y);
      total += ys[i] * ys[i];
    }
    // cond_i = |1 - y_i^2 / n| + (sum_j y_j^2 - y_i^2) / n; 0 for x_i = 0 (y_i stays 0).
    const long double ln = static_cast<long double>(n);
    for (size_t i = 0; i < n; ++i) {
      const long double y2 = ys[i] * ys[i];
      r.cond.push_back(x[i] == 0 ? 0.0
                                 : static_cast<double>(std::fabs(1 - y2 / ln) +
                                                       std::max<long double>(total - y2, 0) / ln));
    }
    return true;
  });
}

}  // namespace stabfuzz::oracle
