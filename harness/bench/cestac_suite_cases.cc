// Inputs of the broad calibration suite. Case i of n draws a difficulty t in [i/n, (i+1)/n) and
// maps it to the digits the kernel should lose, L = t (full + 2), through what sets its
// conditioning (a root's distance, an offset, a condition number, a step count); the true digits
// of the cases then run from the full precision down to 0, the last 2 / (full + 2) of them (11 %
// in f64, 22 % in f32) aimed past 0. The mapping is from the error analysis of each kernel, so it
// only steers: the truth is measured against the exact answer, never assumed. Every value is
// rounded to the dtype before the kernel or the exact answer sees it.
#include "harness/bench/cestac_suite_cases.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "stabfuzz/entropy.h"

namespace stabfuzz::calibrate::suite {
namespace {

struct Draw {
  DType d;
  Entropy& e;
  double t;     // difficulty in [0, 1)
  int index;    // of the case
  double full;  // the format's digits

  double r(double v) const { return round_to(d, v); }
  double lost() const { return t * (full + 2); }  // digits the case should lose
  bool low() const { return d == DType::f16 || d == DType::bf16; }
  double sign() const { return e.chance(0.5) ? 1.0 : -1.0; }
  void shuffle(std::vector<double>& v) const {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[e.below(i)]);
  }
};

// (x - 1)^k expanded, at x = 1 + delta: Horner loses about k log10((1 + |x|) / |delta|) digits.
Problem horner_root(const Draw& g) {
  Problem p;
  const int k = static_cast<int>(g.e.range(3, g.low() ? 6 : (g.d == DType::f32 ? 10 : 12)));
  const double cap = g.low() ? 2.0 : 9.0;  // f16: (1 + x)^6 stays below its 65504
  double delta = std::min(cap, 2.0 / std::max(1e-300, std::pow(10.0, g.lost() / k) - 1));
  delta *= g.e.uniform(0.8, 1.25);
  if (g.e.chance(0.5)) delta = -std::min(delta, 0.9);
  p.a = g.r(1 + delta);
  double binom = 1;  // C(k, j), exact in every dtype for these k
  for (int j = 0; j <= k; ++j) {
    p.x.push_back(g.r(j % 2 ? -binom : binom));
    binom = binom * (k - j) / (j + 1);
  }
  return p;
}

// 100-2000 values sharing an offset c of 1e3..1e10 (f32) or 1e3..1e16 (f64) times their spread:
// half the cases with one sign (a long sum whose rounded-off fraction repeats), half with the
// offset's sign alternating so that it cancels (the sum is the data's noise).
Problem offset_sum(const Draw& g) {
  Problem p;
  const auto n = static_cast<size_t>(g.e.range(100, 2000));
  const double spread = std::pow(10.0, g.e.uniform(-2, 2));
  const double c = g.sign() * spread * std::pow(10.0, 3 + g.t * (g.d == DType::f32 ? 7 : 13));
  const bool cancel = g.e.chance(0.5);
  for (size_t i = 0; i < n; ++i)
    p.x.push_back(g.r((cancel && i % 2 ? -c : c) + spread * g.e.normal()));
  if (cancel) g.shuffle(p.x);
  return p;
}

// Centred data shifted by c = 1e-(full+1)..1e10 times the spread: a tiny c makes the mean a
// cancellation, a large one the long same-sign sum of offset_sum.
Problem shifted_mean(const Draw& g) {
  Problem p;
  const auto n = static_cast<size_t>(g.e.range(100, 2000));
  const double spread = std::pow(10.0, g.e.uniform(-2, 2));
  std::vector<double> d(n);
  double m = 0;
  for (auto& v : d) m += (v = spread * g.e.normal());
  m /= static_cast<double>(n);
  const double c = g.sign() * spread * std::pow(10.0, -(g.full + 1) + g.t * (g.full + 11));
  for (double v : d) p.x.push_back(g.r(v - m + c));
  return p;
}

// Data c + spread N(0, 1); one pass loses about 2 log10(c / spread) digits, so log10(c / spread)
// = L / 2; two passes about 2 (log10(c / spread) - full) (the mean's error, squared), so
// log10(c / spread) = (full + L) / 2. Every tenth case constant data, whose variance is exactly 0.
Problem shifted_data(const Draw& g, bool one_pass) {
  Problem p;
  const auto n = static_cast<size_t>(g.e.range(16, 1000));
  const double spread = std::pow(10.0, g.e.uniform(-3, 3));
  const double c = g.sign() * spread * std::pow(10.0, (one_pass ? 0 : g.full) / 2 + g.lost() / 2);
  const bool constant = g.index % 10 == 0;
  for (size_t i = 0; i < n; ++i) p.x.push_back(g.r(c + (constant ? 0 : spread * g.e.normal())));
  return p;
}
Problem var_one_pass(const Draw& g) { return shifted_data(g, true); }
Problem var_two_pass(const Draw& g) { return shifted_data(g, false); }

// b^2 / 4|ac| = 10^L (>= 2): the small root loses about L digits; b < 0 in one case in seven
// (no cancellation). Case 0 is the input in every dtype.
Problem quadratic_root(const Draw& g) {
  Problem p;
  if (g.index == 0) {
    p.a = g.r(kQuadA), p.b = g.r(kQuadB), p.c = g.r(kQuadC);
    return p;
  }
  p.a = g.r(g.e.log_uniform(0.1, 10));
  p.c = g.r(g.e.log_uniform(0.1, 10) * (g.e.chance(0.2) ? -1 : 1));
  const double rho = std::max(2.0, std::pow(10.0, g.lost()));
  p.b = g.r((g.e.chance(1.0 / 7) ? -1 : 1) * std::sqrt(4 * std::fabs(p.a * p.c) * rho));
  return p;
}

// y_k = 1/k - 5 y_(k-1), the integrals of x^k / (x + 5) over [0, 1], forward from y_0 near
// ln(6/5) (half the cases its rounding, half a relative offset 1e-3..1e-(full+1)): each step
// multiplies the rounding errors of 1/k by -5, so n = L / log10 5 steps lose about L digits
// until the input's own offset dominates the exact answer.
Problem integral_recurrence(const Draw& g) {
  Problem p;
  const double off = g.e.chance(0.5) ? 0 : g.sign() * std::pow(10.0, -g.e.uniform(3, g.full + 1));
  p.a = g.r(std::log(1.2) * (1 + off));
  p.n = std::clamp(static_cast<int>(std::ceil(g.lost() / std::log10(5.0))), 1, 30);
  return p;
}

// x_{k+1} = (r + 1/r) x_k - x_{k-1} from x_0 = 1: x_1 = 1/r follows the decaying solution r^-k,
// which the growing r^k swamps (about 2 k log10 r digits lost at step k); x_1 = r follows the
// dominant one (stable: a control).
Problem three_term(const Draw& g, bool stable) {
  Problem p;
  const double ratio = g.e.uniform(2, 6);
  p.c = g.r(ratio + 1 / ratio);
  p.a = 1;
  p.b = g.r(stable ? ratio : 1 / ratio);
  if (stable) {
    p.n = static_cast<int>(g.e.range(2, g.d == DType::f32 ? 40 : 60));
  } else {
    p.n = std::max(2, static_cast<int>(std::ceil(g.lost() / (2 * std::log10(ratio)))));
  }
  return p;
}
Problem three_term_unstable(const Draw& g) { return three_term(g, false); }
Problem three_term_stable(const Draw& g) { return three_term(g, true); }

// x = +-10^-u, u = t (full + 1): exp(x) - 1 and log(1 + x) lose about u digits (x >= -1/2).
Problem small_argument(const Draw& g) {
  Problem p;
  const double x = std::pow(10.0, -g.t * (g.full + 1)) * g.e.uniform(1, 3);
  p.a = g.r(g.e.chance(0.5) ? std::min(1.0, x) : -std::min(0.5, x));
  return p;
}

// Exponent of term i of n in GenDot: the first half random over [0, top] (the first top + 1, the
// last 0), the second half falling linearly from top to 0.
int gen_exponent(const Draw& g, size_t i, size_t n, double top) {
  const size_t n2 = n / 2;
  if (i == 0) return static_cast<int>(std::round(top)) + 1;
  if (i + 1 == n2) return 0;
  if (i < n2) return static_cast<int>(std::round(g.e.uniform() * top));
  return static_cast<int>(
      std::round(top * (1 - double(i - n2) / double(std::max<size_t>(1, n - n2 - 1)))));
}

// GenDot (Ogita, Rump and Oishi 2005, Algorithm 6.1) for a condition number of about 2^log2_cond:
// half the terms random over the exponent range, the other half chosen to cancel the exact
// running dot product; each term rounded to the dtype, then all shuffled. y = nullptr: GenSum
// (the sum of x, exponents over [0, log2_cond]), scaled by 2^-shift (f16's narrow range).
void gen_dot(const Draw& g, size_t n, double log2_cond, std::vector<double>& x,
             std::vector<double>* y, int shift = 0) {
  const double top = y ? log2_cond / 2 : log2_cond;
  ExactDot acc;
  for (size_t i = 0; i < n; ++i) {
    const double scale = std::ldexp(1.0, gen_exponent(g, i, n, top) - shift);
    const double a = g.e.uniform(-1, 1) * scale, b = g.e.uniform(-1, 1) * scale;
    double xi = g.r(i < n / 2 || y ? a : a - acc.value());
    if (xi == 0) xi = g.r(scale);
    double yi = 1;
    if (y) yi = g.r(i < n / 2 ? b : (b - acc.value()) / xi);
    acc.add(xi, yi);
    x.push_back(xi);
    if (y) y->push_back(yi);
  }
  for (size_t i = n; i > 1; --i) {
    const size_t j = g.e.below(i);
    std::swap(x[i - 1], x[j]);
    if (y) std::swap((*y)[i - 1], (*y)[j]);
  }
}

constexpr double kLog2Of10 = 3.321928094887362;

// Length 1000, condition number 10^L (1 to 1e18 in f64, 1e9 in f32).
Problem dot_cancel(const Draw& g) {
  Problem p;
  gen_dot(g, 1000, g.lost() * kLog2Of10, p.x, &p.y);
  return p;
}

// 8-64 values uniform in [-S, S], S = 0.1 + t top: top a little past where exp overflows
// (naive) or the smallest entry leaves the normal range (shifted), so that about one case in
// five loses digits to overflow or gradual underflow; the entry asked for is the smallest.
Problem softmax(const Draw& g, bool shifted) {
  Problem p;
  const double top = g.d == DType::f64 ? (shifted ? 480 : 830) : (shifted ? 65 : 105);
  const double s = 0.1 + g.t * top;
  const auto n = static_cast<size_t>(g.e.range(8, 64));
  for (size_t i = 0; i < n; ++i) p.x.push_back(g.r(g.e.uniform(-s, s)));
  p.n = static_cast<int>(std::min_element(p.x.begin(), p.x.end()) - p.x.begin());
  return p;
}
Problem softmax_naive(const Draw& g) { return softmax(g, false); }
Problem softmax_shifted(const Draw& g) { return softmax(g, true); }

// GenSum, condition number 10^L: Kahan's error is about 2u times the condition number, free of
// the length (the naive sum's n u).
Problem kahan_sum(const Draw& g) {
  Problem p;
  gen_dot(g, static_cast<size_t>(g.e.range(100, 1000)), g.lost() * kLog2Of10, p.x, nullptr);
  return p;
}

// GenSum, condition number 10^L; f16 and bf16: 16-128 terms, exponents centred on 1.
Problem mixed_sum(const Draw& g) {
  Problem p;
  const double bits = g.lost() * kLog2Of10;
  const size_t n = static_cast<size_t>(g.low() ? g.e.range(16, 128) : g.e.range(100, 1000));
  gen_dot(g, n, bits, p.x, nullptr, g.low() ? static_cast<int>(bits / 2) : 0);
  return p;
}

// x_i in [1/2, 2], y_i = x_i (1 + 10^-L N(0, 1) / sqrt n): prod x_i / y_i - 1 cancels about L
// digits (an exact zero when every y_i rounds back to x_i).
Problem product_ratio(const Draw& g) {
  Problem p;
  const auto n = static_cast<size_t>(g.low() ? g.e.range(4, 16) : g.e.range(10, 100));
  const double rel = std::pow(10.0, -g.lost()) / std::sqrt(static_cast<double>(n));
  for (size_t i = 0; i < n; ++i) {
    p.x.push_back(g.r(g.e.uniform(0.5, 2)));
    p.y.push_back(g.r(p.x.back() * (1 + rel * g.e.normal())));
  }
  return p;
}

// k square roots and k squarings multiply the relative error by 2^k: k = L / log10 2.
Problem root_chain(const Draw& g) {
  Problem p;
  p.a = g.r(g.low() ? g.e.log_uniform(0.1, 10) : g.e.log_uniform(0.01, 100));
  p.n = static_cast<int>(std::lround(g.lost() * kLog2Of10));
  return p;
}

struct Entry {
  KindInfo info;
  Problem (*make)(const Draw&);
};

const std::vector<DType> kStd{DType::f64, DType::f32};
const std::vector<DType> kAll{DType::f64, DType::f32, DType::f16, DType::bf16};

const std::vector<Entry>& table() {
  using K = KernelKind;
  static const std::vector<Entry> t{
      {{K::horner_root, "horner_root", "Horner on (x-1)^k expanded (k 3-12), x near 1", kAll},
       horner_root},
      {{K::offset_sum, "offset_sum",
        "sum of 100-2000 values with a common offset 1e3-1e10 (f32) / 1e16 (f64) times the "
        "spread; half the cases with the offset's sign alternating",
        kStd},
       offset_sum},
      {{K::shifted_mean, "shifted_mean",
        "mean of 100-2000 centred values shifted by 1e-17..1e10 times the spread", kStd},
       shifted_mean},
      {{K::var_one_pass, "var_one_pass",
        "E[x^2] - E[x]^2 of shifted data (1 case in 10 constant: exact 0)", kStd},
       var_one_pass},
      {{K::var_two_pass, "var_two_pass",
        "two-pass variance of shifted data (1 case in 10 constant: exact 0)", kStd},
       var_two_pass},
      {{K::quadratic_root, "quadratic_root",
        "(-b + sqrt(b^2 - 4ac)) / 2a, b^2/4ac 2..1e18; case 0 the issue's input", kStd},
       quadratic_root},
      {{K::integral_recurrence, "integral_recurrence",
        "y_n = 1/n - 5 y_(n-1) forward from y_0 near ln(6/5), n 1-26", kStd},
       integral_recurrence},
      {{K::three_term_unstable, "three_term_unstable",
        "x_(k+1) = (r + 1/r) x_k - x_(k-1) on the decaying solution r^-k", kStd},
       three_term_unstable},
      {{K::three_term_stable, "three_term_stable",
        "the same recurrence on the dominant solution r^k (stable, 2-60 steps)", kStd},
       three_term_stable},
      {{K::exp_minus_1, "exp_minus_1", "exp(x) - 1, |x| 1e-17..1", kAll}, small_argument},
      {{K::expm1, "expm1", "expm1(x), |x| 1e-17..1", kStd}, small_argument},
      {{K::log_one_plus, "log_one_plus", "log(1 + x), |x| 1e-17..1", kAll}, small_argument},
      {{K::log1p, "log1p", "log1p(x), |x| 1e-17..1", kStd}, small_argument},
      {{K::dot_cancel, "dot_cancel", "dot product of length 1000, condition 1..1e18 (GenDot)",
        kStd},
       dot_cancel},
      {{K::softmax_naive, "softmax_naive",
        "smallest entry of exp(x_i) / sum exp(x_j), 8-64 inputs up to past overflow", kStd},
       softmax_naive},
      {{K::softmax_shifted, "softmax_shifted",
        "smallest entry of the max-shifted softmax, up to past underflow", kStd},
       softmax_shifted},
      {{K::kahan_sum, "kahan_sum", "Kahan's compensated sum, condition 1..1e18 (GenSum)", kStd},
       kahan_sum},
      {{K::mixed_sum, "mixed_sum", "recursive sum with mixed signs, condition 1..1e18 (GenSum)",
        kAll},
       mixed_sum},
      {{K::product_ratio, "product_ratio",
        "prod x_i / y_i - 1, products and quotients interleaved, y_i = x_i (1 + 1e-L)", kAll},
       product_ratio},
      {{K::sqrt_div_chain, "sqrt_div_chain", "k square roots, then k steps r / (1 / r)", kAll},
       root_chain},
      {{K::exp_log_chain, "exp_log_chain", "k steps exp(log(r) / 2), then k steps exp(2 log(r))",
        kStd},
       root_chain},
  };
  return t;
}

}  // namespace

const std::vector<KindInfo>& kinds() {
  static const std::vector<KindInfo> k = [] {
    std::vector<KindInfo> v;
    for (const auto& e : table()) v.push_back(e.info);
    return v;
  }();
  return k;
}

const KindInfo* find_kind(const std::string& name) {
  for (const auto& k : kinds())
    if (name == k.name) return &k;
  return nullptr;
}

uint64_t case_stream(KernelKind kind, DType d, int index) {
  const std::string name = table()[static_cast<size_t>(kind)].info.name;
  return hash_str(name + "/" + std::string(dtype_name(d)) + "/" + std::to_string(index));
}

Case make_case(KernelKind kind, DType d, uint64_t seed, int index, int count) {
  SeededEntropy e(seed, case_stream(kind, d, index));
  const double t = (index + e.uniform()) / std::max(1, count);
  const Draw g{d, e, t, index, dtype_max_digits(d)};
  Case c;
  c.kind = kind;
  c.dtype = d;
  c.seed = seed;
  c.index = index;
  c.problem = table()[static_cast<size_t>(kind)].make(g);
  c.exact = exact_answer(kind, c.problem);
  return c;
}

}  // namespace stabfuzz::calibrate::suite
