// Exact answers of the broad calibration suite: each kernel's mathematical expression evaluated
// on the case's exact inputs with MPFR at kExactBits bits, written here from the mathematics and
// deliberately sharing no code with the oracles (oracles/), so that the suite also checks them
// indirectly rather than inheriting their mistakes. Sums, products and dot products of the
// suite's data are exact at this precision (their exponents span far fewer than 2000 bits);
// division, sqrt, exp and log are correctly rounded at 2048 bits, 600 decimal digits beyond any
// format the suite judges.
#include <mpfr.h>

#include <algorithm>
#include <cmath>

#include "harness/bench/cestac_suite_cases.h"

namespace stabfuzz::calibrate::suite {
namespace {

// An mpfr_t of `bits` bits (kExactBits unless a product needs more), freed on scope exit.
struct Big {
  explicit Big(double v = 0, mpfr_prec_t bits = kExactBits) {
    mpfr_init2(m, bits);
    mpfr_set_d(m, v, MPFR_RNDN);  // exact: bits >= 53
  }
  ~Big() { mpfr_clear(m); }
  Big(const Big&) = delete;
  Big& operator=(const Big&) = delete;
  mpfr_t m;
};

constexpr mpfr_rnd_t kN = MPFR_RNDN;

void exact_sum(const std::vector<double>& x, Big& s) {
  mpfr_set_zero(s.m, 1);
  for (double v : x) mpfr_add_d(s.m, s.m, v, kN);
}

void horner(const Problem& p, Big& r) {
  mpfr_set_d(r.m, p.x[0], kN);
  for (size_t i = 1; i < p.x.size(); ++i) {
    mpfr_mul_d(r.m, r.m, p.a, kN);
    mpfr_add_d(r.m, r.m, p.x[i], kN);
  }
}

// (n sum x^2 - (sum x)^2) / n^2: E[x^2] - E[x]^2 and the two-pass formula are this one number;
// the numerator is exact, so constant data gives an exact zero.
void variance(const std::vector<double>& x, Big& r) {
  Big s, s2, t;
  exact_sum(x, s);
  for (double v : x) {
    mpfr_set_d(t.m, v, kN);
    mpfr_mul_d(t.m, t.m, v, kN);
    mpfr_add(s2.m, s2.m, t.m, kN);
  }
  const double n = static_cast<double>(x.size());
  mpfr_mul_d(s2.m, s2.m, n, kN);
  mpfr_sqr(t.m, s.m, kN);
  mpfr_sub(r.m, s2.m, t.m, kN);
  mpfr_div_d(r.m, r.m, n * n, kN);
}

// (-b + sqrt(b^2 - 4ac)) / 2a
void quadratic(const Problem& p, Big& r) {
  Big t(p.a);
  mpfr_mul_d(t.m, t.m, p.c, kN);
  mpfr_mul_2si(t.m, t.m, 2, kN);
  mpfr_set_d(r.m, p.b, kN);
  mpfr_sqr(r.m, r.m, kN);
  mpfr_sub(r.m, r.m, t.m, kN);
  mpfr_sqrt(r.m, r.m, kN);
  mpfr_sub_d(r.m, r.m, p.b, kN);
  mpfr_div_d(r.m, r.m, 2 * p.a, kN);
}

void integral_recurrence(const Problem& p, Big& y) {
  Big inv;
  mpfr_set_d(y.m, p.a, kN);
  for (int k = 1; k <= p.n; ++k) {
    mpfr_set_ui(inv.m, 1, kN);
    mpfr_div_ui(inv.m, inv.m, static_cast<unsigned long>(k), kN);
    mpfr_mul_ui(y.m, y.m, 5, kN);
    mpfr_sub(y.m, inv.m, y.m, kN);
  }
}

void three_term(const Problem& p, Big& x1) {
  Big x0(p.a), x2;
  mpfr_set_d(x1.m, p.b, kN);
  for (int k = 2; k <= p.n; ++k) {
    mpfr_mul_d(x2.m, x1.m, p.c, kN);
    mpfr_sub(x2.m, x2.m, x0.m, kN);
    mpfr_swap(x0.m, x1.m);
    mpfr_swap(x1.m, x2.m);
  }
}

void dot(const Problem& p, Big& s) {
  Big t;
  mpfr_set_zero(s.m, 1);
  for (size_t i = 0; i < p.x.size(); ++i) {
    mpfr_set_d(t.m, p.x[i], kN);
    mpfr_mul_d(t.m, t.m, p.y[i], kN);
    mpfr_add(s.m, s.m, t.m, kN);
  }
}

// exp(x_n) / sum_j exp(x_j): the naive and the max-shifted softmax compute this one number.
void softmax_entry(const Problem& p, Big& r) {
  Big s, t;
  for (double v : p.x) {
    mpfr_set_d(t.m, v, kN);
    mpfr_exp(t.m, t.m, kN);
    mpfr_add(s.m, s.m, t.m, kN);
  }
  mpfr_set_d(r.m, p.x[static_cast<size_t>(p.n)], kN);
  mpfr_exp(r.m, r.m, kN);
  mpfr_div(r.m, r.m, s.m, kN);
}

// prod x_i / prod y_i - 1 with both products exact (64 bits per factor), so that identical
// factors give an exact zero.
void product_ratio(const Problem& p, Big& r) {
  const auto bits = static_cast<mpfr_prec_t>(64 * (p.x.size() + 2));
  Big px(1, bits), py(1, bits), q(0, bits);
  for (size_t i = 0; i < p.x.size(); ++i) {
    mpfr_mul_d(px.m, px.m, p.x[i], kN);
    mpfr_mul_d(py.m, py.m, p.y[i], kN);
  }
  mpfr_div(q.m, px.m, py.m, kN);
  mpfr_sub_ui(q.m, q.m, 1, kN);
  mpfr_set(r.m, q.m, kN);
}

void evaluate(KernelKind kind, const Problem& p, Big& r) {
  switch (kind) {
    case KernelKind::horner_root:
      return horner(p, r);
    case KernelKind::offset_sum:
    case KernelKind::mixed_sum:
    case KernelKind::kahan_sum:  // compensated or not, the sum is the sum
      return exact_sum(p.x, r);
    case KernelKind::shifted_mean:
      exact_sum(p.x, r);
      mpfr_div_d(r.m, r.m, static_cast<double>(p.x.size()), kN);
      return;
    case KernelKind::var_one_pass:
    case KernelKind::var_two_pass:
      return variance(p.x, r);
    case KernelKind::quadratic_root:
      return quadratic(p, r);
    case KernelKind::integral_recurrence:
      return integral_recurrence(p, r);
    case KernelKind::three_term_unstable:
    case KernelKind::three_term_stable:
      return three_term(p, r);
    case KernelKind::exp_minus_1:
    case KernelKind::expm1:
      mpfr_set_d(r.m, p.a, kN);
      mpfr_expm1(r.m, r.m, kN);
      return;
    case KernelKind::log_one_plus:
    case KernelKind::log1p:
      mpfr_set_d(r.m, p.a, kN);
      mpfr_log1p(r.m, r.m, kN);
      return;
    case KernelKind::dot_cancel:
      return dot(p, r);
    case KernelKind::softmax_naive:
    case KernelKind::softmax_shifted:
      return softmax_entry(p, r);
    case KernelKind::product_ratio:
      return product_ratio(p, r);
    case KernelKind::sqrt_div_chain:  // (x^(2^-k))^(2^k) = x in real arithmetic
    case KernelKind::exp_log_chain:
      mpfr_set_d(r.m, p.a, kN);
      return;
    case KernelKind::kCount:
      break;
  }
  mpfr_set_nan(r.m);
}

}  // namespace

double Exact::value() const { return zero ? 0.0 : std::ldexp(hi + lo, static_cast<int>(exp)); }

Exact exact_answer(KernelKind kind, const Problem& p) {
  Big r;
  evaluate(kind, p, r);
  Exact e;
  if (mpfr_zero_p(r.m) || !mpfr_number_p(r.m)) {
    e.zero = mpfr_zero_p(r.m);
    e.hi = e.zero ? 0.0 : mpfr_get_d(r.m, kN);  // NaN or inf: never for the suite's inputs
    return e;
  }
  e.zero = false;
  e.hi = mpfr_get_d_2exp(&e.exp, r.m, kN);
  Big rest;
  mpfr_mul_2si(rest.m, r.m, -e.exp, kN);
  mpfr_sub_d(rest.m, rest.m, e.hi, kN);
  e.lo = mpfr_get_d(rest.m, kN);
  return e;
}

struct ExactDot::Impl {
  Big sum, term;
};

ExactDot::ExactDot() : impl_(std::make_unique<Impl>()) {}
ExactDot::~ExactDot() = default;

void ExactDot::add(double a, double b) {
  mpfr_set_d(impl_->term.m, a, kN);
  mpfr_mul_d(impl_->term.m, impl_->term.m, b, kN);
  mpfr_add(impl_->sum.m, impl_->sum.m, impl_->term.m, kN);
}

double ExactDot::value() const { return mpfr_get_d(impl_->sum.m, kN); }

}  // namespace stabfuzz::calibrate::suite
