// The broad calibration suite's runner: cases, claims, truths and the per-kind table.
#include "harness/bench/cestac_suite.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <sstream>

#include "stabfuzz/stoch.h"
#include "stabfuzz/version.h"

namespace stabfuzz::calibrate::suite {
namespace {

template <class T>
using Stoch3 = cestac::Stoch<T, 3>;
template <class T>
using Updown3 = cestac::Stoch<T, 3, cestac::Rounding::updown>;

cestac::Config updown_config() {
  cestac::Config c;
  c.rounding = cestac::Rounding::updown;
  return c;
}

std::string percent(int k, int n) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << (n ? 100.0 * k / n : 0.0) << " % (" << k << ")";
  return os.str();
}

std::string fixed(double v, int prec) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << v;
  return os.str();
}

// Adds one verdict to a row; the truths are kept apart for the median.
void count(Row& row, const Verdict& v, std::vector<double>& truths) {
  ++row.cases;
  const double gap = v.claim.digits - v.truth;
  row.agree += std::fabs(gap) <= 1.0;
  row.over += gap > 1.0;
  row.under += gap < -1.0;
  row.worst_over = std::max(row.worst_over, gap);
  row.zeros += v.exact_zero;
  row.zeros_flagged += v.exact_zero && v.claim.zero;
  truths.push_back(v.truth);
}

void finish(Row& row, std::vector<double>& truths) {
  if (truths.empty()) return;
  std::sort(truths.begin(), truths.end());
  row.truth_min = truths.front();
  row.truth_max = truths.back();
  row.truth_median = truths[truths.size() / 2];
}

// Rows per kind and dtype (in the order of kinds()), and per dtype over every kind.
void tabulate(Result& r) {
  for (const auto& k : kinds()) {
    for (DType d : r.options.dtypes) {
      Row row{k.name, d};
      std::vector<double> truths;
      for (const auto& v : r.verdicts)
        if (v.kind == k.kind && v.dtype == d) count(row, v, truths);
      finish(row, truths);
      if (row.cases) r.rows.push_back(row);
    }
  }
  for (DType d : r.options.dtypes) {
    Row row{"all", d};
    std::vector<double> truths;
    for (const auto& v : r.verdicts)
      if (v.dtype == d) count(row, v, truths);
    finish(row, truths);
    if (row.cases) r.overall.push_back(row);
  }
}

std::string table_row(const Row& w, bool overall) {
  std::ostringstream os;
  os << "| " << (overall ? "**all**" : w.kind) << " | " << dtype_name(w.dtype) << " | " << w.cases
     << " | " << percent(w.agree, w.cases) << " | " << percent(w.over, w.cases) << " | "
     << percent(w.under, w.cases) << " | " << fixed(w.worst_over, 2) << " | "
     << (w.zeros ? std::to_string(w.zeros) + " (" + std::to_string(w.zeros_flagged) + ")" : "-")
     << " | " << fixed(w.truth_min, 1) << " / " << fixed(w.truth_median, 1) << " / "
     << fixed(w.truth_max, 1) << " |\n";
  return os.str();
}

json::Value row_json(const Row& w) {
  json::Value j;
  j.set("kernel", w.kind);
  j.set("dtype", std::string(dtype_name(w.dtype)));
  j.set("cases", w.cases);
  j.set("agree", w.agree);
  j.set("overclaim", w.over);
  j.set("underclaim", w.under);
  j.set("worst_overclaim", w.worst_over);
  j.set("exact_zeros", w.zeros);
  j.set("exact_zeros_flagged", w.zeros_flagged);
  j.set("true_digits_min", w.truth_min);
  j.set("true_digits_median", w.truth_median);
  j.set("true_digits_max", w.truth_max);
  return j;
}

std::string seed_list(const std::vector<uint64_t>& seeds) {
  std::string s;
  for (uint64_t x : seeds) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

}  // namespace

// One line per variant; the first is the default of --variant.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      make_variant<Stoch3>("stoch3", "Stoch<T, 3> (stochastic rounding to nearness, the default)"),
      make_variant<Updown3>("updown", "Stoch<T, 3, Rounding::updown> (CADNA's up-or-down rounding)",
                            updown_config()),
  };
  return v;
}

const Variant* find_variant(const std::string& name) {
  for (const auto& v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

double true_digits(double mean, const Exact& exact, double full) {
  if (exact.zero || !std::isfinite(mean) || mean == 0) return 0;
  // mean / 2^exp against hi + lo: the subtraction is exact when they are close (Sterbenz).
  const double m = std::ldexp(mean, static_cast<int>(-exact.exp));
  const double diff = std::fabs((m - exact.hi) - exact.lo);
  if (diff == 0) return full;
  const double rel = diff / std::fabs(exact.hi + exact.lo);
  return std::clamp(-std::log10(rel), 0.0, full);
}

Verdict judge(const Variant& v, const Case& c) {
  Verdict out;
  out.kind = c.kind;
  out.dtype = c.dtype;
  out.seed = c.seed;
  out.index = c.index;
  out.exact = c.exact.value();
  out.exact_zero = c.exact.zero;
  out.claim = v.claim(c, case_stream(c.kind, c.dtype, c.index));
  out.truth = true_digits(out.claim.mean, c.exact, dtype_max_digits(c.dtype));
  return out;
}

Result run(const Variant& v, const Options& o, std::ostream& progress) {
  const auto start = std::chrono::steady_clock::now();
  Result r;
  r.variant = v.name;
  r.scalar = v.scalar;
  r.options = o;
  for (const auto& k : kinds()) {
    if (!o.kind.empty() && o.kind != k.name) continue;
    for (DType d : o.dtypes) {
      if (std::find(k.dtypes.begin(), k.dtypes.end(), d) == k.dtypes.end()) continue;
      for (uint64_t seed : o.seeds)
        for (int i = 0; i < o.cases; ++i)
          r.verdicts.push_back(judge(v, make_case(k.kind, d, seed, i, o.cases)));
    }
    progress << "  " << k.name << ": " << r.verdicts.size() << " cases so far" << std::endl;
  }
  tabulate(r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string markdown_table(const Result& r) {
  std::string s =
      "| kernel | dtype | cases | agree within 1 | overclaim | underclaim | worst over | exact 0 "
      "(flagged) | true digits min / median / max |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& w : r.rows) s += table_row(w, false);
  for (const auto& w : r.overall) s += table_row(w, true);
  return s;
}

std::string comparison_table(const std::vector<Result>& results) {
  std::string s = "| kernel | dtype |";
  std::string rule = "|---|---|";
  for (const auto& r : results) {
    s += " `" + r.variant + "`: agree / over / under |";
    rule += "---:|";
  }
  s += "\n" + rule + "\n";
  auto cell = [](const Row& w) {
    return " " + percent(w.agree, w.cases) + " / " + percent(w.over, w.cases) + " / " +
           percent(w.under, w.cases) + " |";
  };
  const Result& first = results.front();
  for (size_t i = 0; i < first.rows.size() + first.overall.size(); ++i) {
    const bool overall = i >= first.rows.size();
    const Row& w = overall ? first.overall[i - first.rows.size()] : first.rows[i];
    s += "| " + (overall ? std::string("**all**") : w.kind) + " | " +
         std::string(dtype_name(w.dtype)) + " |";
    for (const auto& r : results) {
      const auto& rows = overall ? r.overall : r.rows;
      const size_t k = overall ? i - first.rows.size() : i;
      s += k < rows.size() ? cell(rows[k]) : " - |";
    }
    s += "\n";
  }
  return s;
}

std::string markdown_doc(const Result& r, const std::vector<Result>& others,
                         const std::string& command) {
  std::ostringstream os;
  const bool eval = r.options.seeds == kEvalSeeds;
  os << "# CESTAC calibration on the broad suite\n\n"
     << "Generated by `" << command << "`; do not edit by hand.\n\n"
     << "- stabfuzz " << kVersion << ", " << build_configuration() << "\n"
     << "- machine: " << machine_description() << "\n\n"
     << "Stochastic type: `" << r.scalar << "` (variant `" << r.variant << "`). Seeds "
     << seed_list(r.options.seeds)
     << (eval ? " (the evaluation seeds; tuning seeds are " + seed_list(kTuneSeeds) + ")" : "")
     << ", " << r.options.cases << " cases per kernel, dtype and seed.\n\n";
  os << "Each case runs a plain user-style kernel (`harness/bench/cestac_suite_kernels.h`) on the "
        "stochastic type inside a CESTAC run of its own and compares the digits it claims with "
        "the true digits of its sample mean against the exact answer: the kernel's mathematical "
        "expression on the same rounded inputs, evaluated with MPFR at 2048 bits "
        "(`harness/bench/cestac_suite_exact.cc`, no oracle code).\n\n"
     << "- true digits = clamp(-log10 |mean - exact| / |exact|, 0, full), full when mean = exact; "
        "full is the format's digits (15.95 f64, 7.22 f32, 3.31 f16, 2.41 bf16); a non-finite "
        "mean has 0.\n"
     << "- An exact answer of 0 has 0 true digits: a claim of at most 1 digit agrees (CESTAC "
        "claims 0 for an exact or computational zero), more is an overclaim. The column exact 0 "
        "counts those cases and, in parentheses, how many the engine flagged as computational "
        "zeros.\n"
     << "- agree: |claim - truth| <= 1; overclaim: claim > truth + 1 (the dangerous direction); "
        "underclaim: claim < truth - 1. Worst over is the largest claim - truth.\n\n";
  os << markdown_table(r);
  if (!others.empty()) {
    std::vector<Result> all{r};
    all.insert(all.end(), others.begin(), others.end());
    os << "\n## Against the other rounding\n\nThe same cases, seeds and streams through every "
          "variant (agree / overclaim / underclaim):";
    for (const auto& o : all) os << " `" << o.variant << "` is `" << o.scalar << "`;";
    os << " the first is the default.\n\n" << comparison_table(all);
  }
  os << "\n## Kernels\n\n";
  for (const auto& k : kinds()) os << "- `" << k.name << "`: " << k.what << "\n";
  return os.str();
}

json::Value to_json(const Result& r) {
  json::Value out;
  out.set("variant", r.variant);
  out.set("scalar", r.scalar);
  json::Array seeds;
  for (uint64_t s : r.options.seeds) seeds.push_back(json::Value(static_cast<double>(s)));
  out.set("seeds", std::move(seeds));
  out.set("cases_per_kind_dtype_seed", r.options.cases);
  out.set("seconds", r.seconds);
  json::Array rows, overall, details;
  for (const auto& w : r.rows) rows.push_back(row_json(w));
  for (const auto& w : r.overall) overall.push_back(row_json(w));
  for (const auto& v : r.verdicts) {
    json::Value d;
    d.set("kernel", std::string(kinds()[static_cast<size_t>(v.kind)].name));
    d.set("dtype", std::string(dtype_name(v.dtype)));
    d.set("seed", static_cast<double>(v.seed));
    d.set("case", v.index);
    d.set("exact", v.exact);
    d.set("mean", v.claim.mean);
    d.set("cestac_digits", v.claim.digits);
    d.set("computational_zero", v.claim.zero);
    d.set("true_digits", v.truth);
    details.push_back(std::move(d));
  }
  out.set("rows", std::move(rows));
  out.set("overall", std::move(overall));
  out.set("details", std::move(details));
  return out;
}

}  // namespace stabfuzz::calibrate::suite
