// Oracles of the normalization layers: layer_norm, rms_norm and batch_norm.
#include "oracles/normalization.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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
// the sum of |1 + y_i y_j| a_j; the j = i term is then replaced by |n - 1 - y_i^2| a_i. Long
// double keeps the absolute error near 2^-64 times sum_j (1 + |y_i y_j|) a_j.
std::vector<long double> layer_norm_numerators(const std::vector<long double>& y,
                                               const std::vector<double>& x) {
  const size_t n = y.size();
  std::vector<size_t> ord(n);
  std::iota(ord.begin(), ord.end(), size_t{0});
  std::sort(ord.begin(), ord.end(), [&](size_t a, size_t b) { return y[a] < y[b]; });
  std::vector<long double> ys(n), pa(n + 1, 0), pb(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    const size_t j = ord[k];
    ys[k] = y[j];
    pa[k + 1] = pa[k] + std::fabs(static_cast<long double>(x[j]));
    pb[k + 1] = pb[k] + y[j] * std::fabs(static_cast<long double>(x[j]));
  }
  const long double ln = static_cast<long double>(n);
  std::vector<long double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const long double yi = y[i], ai = std::fabs(static_cast<long double>(x[i]));
    long double tot;
    if (yi == 0) {
      tot = pa[n];
    } else {
      // [0, c) holds y_j < -1/y_i (for y_i > 0: the negative side), [c, n) the rest.
      const size_t c =
          static_cast<size_t>(std::lower_bound(ys.begin(), ys.end(), -1 / yi) - ys.begin());
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

}  // namespace

OracleResult layer_norm(const Input& in) {
  const auto& x = in.args.at(0).values;
  const double eps = dtype_eps(in, params::kLayerNormEps);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    return layer_norm_row(x, eps, in.dtype, p, r.exact, r.cond);
  });
}

OracleResult batch_norm(const Input& in) {
  const auto& t = in.args.at(0);
  const auto rows = static_cast<size_t>(t.shape.at(0)), cols = static_cast<size_t>(t.shape.at(1));
  const double eps = dtype_eps(in, params::kBatchNormEps);
  return ziv([&](mpfr_prec_t p, OracleResult& r) {
    r.exact.assign(t.values.size(), 0.0);
    r.cond.assign(t.values.size(), 0.0);
    std::vector<double> col(rows), ex, co;
    for (size_t c = 0; c < cols; ++c) {
      for (size_t i = 0; i < rows; ++i) col[i] = t.values[i * cols + c];
      ex.clear();
      co.clear();
      if (!layer_norm_row(col, eps, in.dtype, p, ex, co)) return false;
      for (size_t i = 0; i < rows; ++i) {
        r.exact[i * cols + c] = ex[i];
        r.cond[i * cols + c] = co[i];
      }
    }
    return true;
  });
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
