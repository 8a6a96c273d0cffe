// CESTAC calibration: stable and unstable implementations on inputs whose condition number
// spans 1 to 1e12, CESTAC digits against the digits of agreement with the MPFR oracle.
#include "harness/bench/calibrate.h"

#include <cmath>
#include <ostream>

#include "families/regimes.h"
#include "injectors/variance.h"
#include "stabfuzz/entropy.h"
#include "stabfuzz/op.h"

namespace stabfuzz::calibrate {
namespace {

// Rows whose conditioning is set by `log10_cond`: mean-shifted rows for the variance (cond ~
// |shift| / sigma), cancelling pairs for sums and dot products (cond ~ sum |x| / |sum x|).
Input shifted_row(DType d, Entropy& e, double log10_cond) {
  const size_t n = 16 + e.below(1000);
  const double shift = std::pow(10.0, log10_cond) * (e.chance(0.5) ? 1 : -1);
  std::vector<double> v(n);
  for (auto& x : v) x = shift + e.normal();
  Input in = regime::row_input(d, std::move(v));
  in.set_param("unbiased", 0);
  return in;
}

Input cancelling_row(DType d, Entropy& e, double log10_cond) {
  const size_t pairs = 8 + e.below(500);
  std::vector<double> v;
  const double big = std::pow(10.0, log10_cond);
  for (size_t i = 0; i < pairs; ++i) {
    const double a = round_to(d, big * e.uniform(0.5, 1.0));
    v.push_back(a);
    v.push_back(-a);
  }
  for (int i = 0; i < 4; ++i) v.push_back(e.normal());  // the part that survives
  for (size_t i = v.size() - 1; i > 0; --i) std::swap(v[i], v[e.below(i + 1)]);
  return regime::row_input(d, std::move(v));
}

Input cancelling_dot(DType d, Entropy& e, double log10_cond) {
  Input a = cancelling_row(d, e, log10_cond / 2);
  std::vector<double> b(a.args[0].values.size());
  for (auto& x : b) x = round_to(d, std::pow(10.0, log10_cond / 2) * (1 + 0.01 * e.normal()));
  a.args.push_back(Tensor{{static_cast<int64_t>(b.size())}, b});
  return a;
}

}  // namespace

double true_digits(double mean, double exact, DType d) {
  const double full = dtype_max_digits(d);
  if (mean == exact) return full;
  const double rel = std::fabs(mean - exact) / std::fabs(exact);
  return std::clamp(-std::log10(rel), 0.0, full);
}

std::optional<Input> conditioned_input(const std::string& family, DType d, Entropy& e,
                                       double log10_cond) {
  if (family == "sum") return cancelling_row(d, e, log10_cond);
  if (family == "var") return shifted_row(d, e, log10_cond);
  if (family == "dot") return cancelling_dot(d, e, log10_cond);
  return std::nullopt;
}

Summary run(int per, uint64_t seed, std::ostream& progress) {
  const Registry& reg = default_registry();
  struct Subject {
    std::string impl;
    const Family* family;
    std::function<CestacOutput(const Input&, const CestacRequest&)> cestac;
    Input (*make)(DType, Entropy&, double);
  };
  std::vector<Subject> subjects;
  auto add_stable = [&](const char* family, Input (*make)(DType, Entropy&, double)) {
    const Family* f = reg.find_family(family);
    if (!f) return;
    for (const auto& t : f->targets)
      if (t.kind == TargetKind::reference && t.cestac)
        subjects.push_back({t.id, f, t.cestac, make});
  };
  add_stable("sum", cancelling_row);
  add_stable("var", shifted_row);
  add_stable("dot", cancelling_dot);
  if (const Family* var = reg.find_family("var"))
    subjects.push_back(
        {"var/injected/naive_one_pass", var, op_cestac<injectors::VarianceNaive>(), shifted_row});

  Summary s;
  int agree = 0, over = 0;
  for (const auto& subj : subjects) {
    for (DType d : {DType::f64, DType::f32}) {
      SeededEntropy e(seed, std::hash<std::string>{}(subj.impl) ^ static_cast<uint64_t>(d));
      const double max_log_cond = d == DType::f64 ? 12 : 7;
      for (int k = 0; k < per; ++k) {
        const double lc = max_log_cond * k / std::max(1, per - 1);
        const Input in = subj.make(d, e, lc);
        const OracleResult o = subj.family->oracle(in);
        if (!o.decidable || o.exact.empty() || o.exact[0] == 0 || !std::isfinite(o.exact[0]))
          continue;
        CestacRequest req;
        req.seed = seed;
        req.stream = static_cast<uint64_t>(k);
        const CestacOutput c = subj.cestac(in, req);
        Case cs;
        cs.impl = subj.impl;
        cs.dtype = std::string(dtype_name(d));
        cs.log10_cond = std::log10(std::max(1.0, o.cond[0]));
        cs.cestac_digits = c.digits[0];
        cs.true_digits = true_digits(c.mean[0], o.exact[0], d);
        agree += std::fabs(cs.cestac_digits - cs.true_digits) <= 1.0;
        over += cs.cestac_digits > cs.true_digits + 1.0;
        s.cases.push_back(cs);
      }
      progress << "  " << subj.impl << " " << dtype_name(d) << ": " << s.cases.size()
               << " cases so far" << std::endl;
    }
  }
  const double n = std::max<size_t>(1, s.cases.size());
  s.agree_within_1 = agree / n;
  s.overclaim = over / n;
  return s;
}

json::Value to_json(const Summary& s) {
  json::Value out;
  out.set("cases", static_cast<unsigned long>(s.cases.size()));
  out.set("agree_within_1", s.agree_within_1);
  out.set("overclaim", s.overclaim);
  json::Array rows;
  for (const auto& c : s.cases) {
    json::Value r;
    r.set("impl", c.impl);
    r.set("dtype", c.dtype);
    r.set("log10_cond", c.log10_cond);
    r.set("cestac_digits", c.cestac_digits);
    r.set("true_digits", c.true_digits);
    rows.push_back(std::move(r));
  }
  out.set("details", std::move(rows));
  return out;
}

}  // namespace stabfuzz::calibrate
