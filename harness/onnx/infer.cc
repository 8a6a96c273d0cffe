// `stabfuzz monitor infer` on an ONNX graph: the native, CESTAC and 256-bit runs of eval.h, and
// per node the digits against what the conditioning of the graph up to that node explains.
#include "harness/onnx/infer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>

#include "harness/onnx/big.h"
#include "harness/onnx/eval.h"
#include "harness/onnx/fuzz.h"
#include "reports/findings.h"
#include "reports/svg.h"
#include "stabfuzz/errors.h"
#include "stabfuzz/stoch.h"

namespace stabfuzz::onnx {
namespace {

// Relative perturbation of one input element for the condition numbers (first order at 256 bits).
constexpr int kPerturbExponent = -120;
// Up to this many input elements the condition numbers are exact to first order (one run per
// element); above it, kRandomRuns runs with random signs bound them.
constexpr size_t kExactCondInputs = 512;
constexpr int kRandomRuns = 16;

template <class T>
typename Interpreter<T>::Values start_values(const Model& m,
                                             const std::map<std::string, HostTensor>& inputs) {
  typename Interpreter<T>::Values v;
  for (const auto& [name, t] : m.initializers) v[name] = Interpreter<T>::convert(t);
  for (const auto& [name, t] : inputs) v[name] = Interpreter<T>::convert(t);
  return v;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Per value, per element: sum over input elements j of |dy/dx_j| |x_j| (exact first order), or a
// random-sign bound of it; divided by |y| later.
std::map<std::string, std::vector<double>> sensitivities(
    const Model& m, const std::map<std::string, HostTensor>& inputs,
    const Interpreter<Big>::Values& base, std::string& method) {
  size_t n_in = 0;
  for (const auto& [name, t] : inputs)
    if (t.elem == Elem::float32 || t.elem == Elem::float64) n_in += t.size();
  std::map<std::string, std::vector<double>> acc;
  for (const auto& [name, t] : base) acc[name].assign(t.size(), 0.0);
  const Big delta = std::ldexp(1.0, kPerturbExponent);
  // The initializers and inputs at 256 bits, converted once; each run perturbs a copy.
  const auto start = start_values<Big>(m, inputs);
  // sum: add |dy| / delta over the runs (one input element each); else keep the largest.
  auto accumulate = [&](const Interpreter<Big>::Values& run, bool sum) {
    for (const auto& [name, t] : run) {
      const auto& b = base.at(name);
      auto& a = acc[name];
      for (size_t k = 0; k < t.size(); ++k) {
        const double d = std::fabs(((t.v[k] - b.v[k]) / delta).to_double());
        a[k] = sum ? a[k] + d : std::max(a[k], d);
      }
    }
  };
  if (n_in <= kExactCondInputs) {
    method = "exact to first order: one 256-bit run per input element, relative perturbation 2^" +
             std::to_string(kPerturbExponent);
    for (const auto& [name, t] : inputs) {
      if (t.elem != Elem::float32 && t.elem != Elem::float64) continue;
      for (size_t j = 0; j < t.size(); ++j) {
        if (t.values[j] == 0) continue;  // a relative perturbation of 0 is 0
        auto run = start;
        Big& x = run[name].v[j];
        x = x + x * delta;
        Interpreter<Big>::run(m, run);
        accumulate(run, true);
      }
    }
    return acc;
  }
  method = "bounded: " + std::to_string(kRandomRuns) +
           " 256-bit runs with random-sign relative perturbations of every input element, the "
           "largest response times sqrt(input elements)";
  std::mt19937_64 g(12345);
  for (int r = 0; r < kRandomRuns; ++r) {
    auto run = start;
    for (const auto& [in_name, in_t] : inputs) {
      if (in_t.elem != Elem::float32 && in_t.elem != Elem::float64) continue;
      for (Big& x : run[in_name].v) x = (g() & 1) ? x + x * delta : x - x * delta;
    }
    Interpreter<Big>::run(m, run);
    accumulate(run, false);
  }
  const double bound = std::sqrt(static_cast<double>(n_in));
  for (auto& [name, a] : acc)
    for (double& x : a) x *= bound;
  return acc;
}

// What the CESTAC run of one node shows against the 256-bit truth: its digits, the digits its
// conditioning explains, the loss beyond them, its kind, and whether the loss starts there.
// lost_of and nonfinite_of hold the nodes already reported, by output value; this one joins them.
template <class F>
NodeReport node_report(const Node& n, const Values<Stoch<F, 3>>& stoch, const Values<Big>& truth,
                       const std::map<std::string, std::vector<double>>& sens,
                       std::map<std::string, double>& lost_of,
                       std::map<std::string, double>& nonfinite_of, double full_digits) {
  const double min_normal = std::numeric_limits<F>::min();
  NodeReport nr;
  nr.name = n.name;
  nr.op = n.op;
  nr.value = n.out.at(0);
  const auto& s = stoch.at(nr.value);
  const auto& t = truth.at(nr.value);
  const auto& sv = sens.at(nr.value);
  nr.elements = s.size();
  std::vector<double> digits, trues;
  double explained_min = full_digits, worst_lost = -1;
  bool nan = false, overflow = false, underflow = false, nonfinite_in = false;
  for (const auto& i : n.in) nonfinite_in |= nonfinite_of.count(i) && nonfinite_of[i] > 0;
  for (const auto& i : n.in)
    if (lost_of.count(i)) nr.lost_before = std::max(nr.lost_before, lost_of[i]);
  for (size_t k = 0; k < s.size(); ++k) {
    const double mean = s.v[k].mean(), exact = t.v[k].to_double();
    const double d = std::isfinite(mean) ? s.v[k].digits() : 0;
    double truth_digits = full_digits;
    if (mean != exact) {
      const double rel = std::fabs(mean - exact) / std::fabs(exact);
      truth_digits = std::isfinite(rel) ? std::clamp(-std::log10(rel), 0.0, full_digits) + 0.0 : 0;
    }
    if (!std::isfinite(mean)) truth_digits = 0;
    nan |= std::isnan(mean) && !std::isnan(exact);
    overflow |= std::isinf(mean) && std::isfinite(exact);
    underflow |= exact != 0 && std::fabs(exact) < min_normal && mean == 0;  // flushed
    const double cond = exact == 0 ? INFINITY : sv[k] / std::fabs(exact);
    // Below the normal range the format itself holds fewer digits: log10(|y| / the smallest
    // subnormal).
    const double held =
        exact != 0 && std::fabs(exact) < min_normal
            ? std::max(0.0, std::log10(std::fabs(exact) / std::numeric_limits<F>::denorm_min()))
            : full_digits;
    const double explained =
        std::clamp(std::min(held, full_digits - std::log10(std::max(1.0, cond))), 0.0, full_digits);
    explained_min = std::min(explained_min, explained);
    // Below the normal range a loss is the format's underflow (kind underflow, a policy), not
    // an accuracy loss of the node.
    const bool subnormal_range = exact != 0 && std::fabs(exact) < min_normal;
    const double lost = subnormal_range ? 0.0 : std::max(0.0, explained - d);
    if (lost > worst_lost) {
      worst_lost = lost;
      char buf[160];
      std::snprintf(buf, sizeof buf, "element %zu: computed %.9g, 256-bit value %.9g", k, mean,
                    exact);
      nr.worst = buf;
    }
    nr.lost = std::max(nr.lost, lost);
    digits.push_back(d);
    trues.push_back(truth_digits);
  }
  if (!digits.empty()) {
    nr.digits_min = *std::min_element(digits.begin(), digits.end());
    nr.true_min = *std::min_element(trues.begin(), trues.end());
  }
  nr.digits_median = median(digits);
  nr.true_median = median(trues);
  nr.explained_min = explained_min;
  nr.kind = nan                           ? "nan"
            : overflow                    ? "overflow"
            : nr.lost >= kPollutingDigits ? "accuracy"
            : underflow                   ? "underflow"
                                          : "";
  // A node pollutes when the loss starts there: NaN or inf from finite inputs, or digits lost
  // beyond the conditioning by kPollutingDigits more than any of its inputs had lost.
  nr.polluting =
      ((nan || overflow) && !nonfinite_in) || (!nan && !overflow && nr.lost >= kPollutingDigits &&
                                               nr.lost - nr.lost_before >= kPollutingDigits);
  lost_of[nr.value] = nr.lost;
  nonfinite_of[nr.value] = (nan || overflow || nonfinite_in) ? 1 : 0;
  return nr;
}

// One graph output: CESTAC's and the true digits, and the native run's largest relative error.
template <class F>
OutputReport output_report(const std::string& o, const Values<Stoch<F, 3>>& stoch,
                           const Values<Big>& truth, const Values<F>& native, double full_digits) {
  OutputReport orp;
  orp.name = o;
  const auto& s = stoch.at(o);
  const auto& t = truth.at(o);
  const auto& nv = native.at(o);
  orp.elements = s.size();
  orp.digits_min = full_digits;
  orp.true_min = full_digits;
  for (size_t k = 0; k < s.size(); ++k) {
    const double exact = t.v[k].to_double(), mean = s.v[k].mean();
    orp.digits_min = std::min(orp.digits_min, std::isfinite(mean) ? s.v[k].digits() : 0.0);
    const double rel = mean == exact ? 0 : std::fabs(mean - exact) / std::fabs(exact);
    orp.true_min =
        std::min(orp.true_min,
                 std::isfinite(rel) ? std::clamp(-std::log10(rel), 0.0, full_digits) + 0.0 : 0.0);
    const double nat = static_cast<double>(nv.v[k]);
    const double nrel = nat == exact ? 0 : std::fabs(nat - exact) / std::fabs(exact);
    orp.max_rel_error_native =
        std::max(orp.max_rel_error_native, std::isnan(nrel) ? INFINITY : nrel);
  }
  return orp;
}

template <class F>
InferReport infer_as(const Model& m, const std::map<std::string, HostTensor>& inputs,
                     uint64_t seed) {
  using S = Stoch<F, 3>;
  const auto t0 = std::chrono::steady_clock::now();
  InferReport r;
  r.model = m.path;
  r.seed = seed;
  r.precision = std::is_same_v<F, double> ? "f64" : "f32";
  r.full_digits = std::numeric_limits<F>::digits * std::log10(2.0);

  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  auto native = start_values<F>(m, inputs);
  const auto tn = std::chrono::steady_clock::now();
  Interpreter<F>::run(m, native);
  r.native_seconds = seconds_since(tn);
  auto truth = start_values<Big>(m, inputs);
  Interpreter<Big>::run(m, truth);
  const auto sens = sensitivities(m, inputs, truth, r.cond_method);
  auto stoch = start_values<S>(m, inputs);
  {
    cestac::Run run(seed, 0);
    const auto tc = std::chrono::steady_clock::now();
    Interpreter<S>::run(m, stoch);
    r.cestac_seconds = seconds_since(tc);
  }

  std::map<std::string, double> lost_of, nonfinite_of;
  for (const Node& n : m.nodes) {
    NodeReport nr = node_report<F>(n, stoch, truth, sens, lost_of, nonfinite_of, r.full_digits);
    if (nr.polluting) r.polluting.push_back(nr.name);
    r.nodes.push_back(std::move(nr));
  }
  for (const auto& o : m.outputs)
    r.outputs.push_back(output_report<F>(o, stoch, truth, native, r.full_digits));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string fmt(double v, const char* f = "%.2f") {
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

InferReport infer(const Model& m, const std::map<std::string, HostTensor>& inputs, bool f64,
                  uint64_t seed) {
  return f64 ? infer_as<double>(m, inputs, seed) : infer_as<float>(m, inputs, seed);
}

json::Value infer_json(const InferReport& r) {
  json::Array nodes, outputs, polluting;
  for (const auto& n : r.nodes)
    nodes.push_back(json::Object{{"name", n.name},
                                 {"op_type", n.op},
                                 {"output", n.value},
                                 {"elements", static_cast<unsigned long long>(n.elements)},
                                 {"digits_min", n.digits_min},
                                 {"digits_median", n.digits_median},
                                 {"true_digits_min", n.true_min},
                                 {"true_digits_median", n.true_median},
                                 {"explained_digits", n.explained_min},
                                 {"lost_beyond_conditioning", n.lost},
                                 {"kind", n.kind},
                                 {"polluting", n.polluting},
                                 {"worst", n.worst}});
  for (const auto& o : r.outputs)
    outputs.push_back(json::Object{{"name", o.name},
                                   {"elements", static_cast<unsigned long long>(o.elements)},
                                   {"digits_min", o.digits_min},
                                   {"true_digits_min", o.true_min},
                                   {"native_max_rel_error", o.max_rel_error_native}});
  for (const auto& p : r.polluting) polluting.push_back(p);
  return json::Object{{"model", r.model},
                      {"inputs", r.inputs},
                      {"precision", r.precision},
                      {"seed", static_cast<unsigned long long>(r.seed)},
                      {"full_digits", r.full_digits},
                      {"condition_numbers", r.cond_method},
                      {"polluting_threshold_digits", kPollutingDigits},
                      {"nodes", nodes},
                      {"outputs", outputs},
                      {"polluting", polluting},
                      {"native_seconds", r.native_seconds},
                      {"cestac_seconds", r.cestac_seconds},
                      {"seconds", r.seconds}};
}

std::string infer_text(const InferReport& r) {
  std::string s =
      "per node (digits: CESTAC's estimate; true: of the CESTAC mean against 256 bits; "
      "explained: what the conditioning leaves; lost: beyond it)\n";
  char line[320];
  std::snprintf(line, sizeof line, "  %-24s %-12s %8s %8s %8s %8s %9s %6s  %s\n", "node", "op",
                "elements", "digits", "median", "true", "explained", "lost", "kind");
  s += line;
  for (const auto& n : r.nodes) {
    std::snprintf(line, sizeof line, "  %-24s %-12s %8zu %8.2f %8.2f %8.2f %9.2f %6.2f  %s%s\n",
                  n.name.c_str(), n.op.c_str(), n.elements, n.digits_min, n.digits_median,
                  n.true_min, n.explained_min, n.lost, n.kind.empty() ? "-" : n.kind.c_str(),
                  n.polluting ? "  <- polluting" : "");
    s += line;
  }
  for (const auto& o : r.outputs) {
    std::snprintf(line, sizeof line,
                  "output %s: %zu values, digits min %.2f (true %.2f); native run's max relative "
                  "error %.3g\n",
                  o.name.c_str(), o.elements, o.digits_min, o.true_min, o.max_rel_error_native);
    s += line;
  }
  if (r.polluting.empty()) {
    s += "polluting nodes: none (no node loses " + fmt(kPollutingDigits, "%.0f") +
         " digits beyond its conditioning)\n";
  } else {
    s += "polluting nodes:";
    for (const auto& p : r.polluting) s += " " + p;
    s += "\n";
    for (const auto& n : r.nodes)
      if (n.polluting) s += "  " + n.name + " (" + n.op + "): " + n.worst + "\n";
  }
  return s;
}

std::string infer_html(const InferReport& r) {
  using reports::svg::escape;
  std::vector<reports::svg::Point> pts;
  for (const auto& n : r.nodes) {
    const std::string x = n.name + " (" + n.op + ")";
    pts.push_back({0, x, n.digits_min, "digits (min)", x + ": " + fmt(n.digits_min) + " digits"});
    pts.push_back(
        {0, x, n.digits_median, "digits (median)", x + ": median " + fmt(n.digits_median)});
    pts.push_back({0, x, n.explained_min, "explained", x + ": explained " + fmt(n.explained_min)});
  }
  std::string h =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>stabfuzz monitor infer: " +
      escape(r.model) +
      "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,td:nth-child(2)"
      "{text-align:left}.polluting{background:#fdd}</style></head><body><h1>" +
      escape(r.model) + "</h1><p>inputs " + escape(r.inputs) + ", " + escape(r.precision) +
      ", seed " + std::to_string(r.seed) + "; polluting nodes: " +
      (r.polluting.empty() ? std::string("none") : [&] {
        std::string p;
        for (const auto& n : r.polluting) p += (p.empty() ? "" : ", ") + escape(n);
        return p;
      }()) +
      "</p>" +
      reports::svg::scatter("Digits per node, in graph order", pts, {"node", false, true},
                            {"digits", false, false}) +
      "<table><tr><th>node</th><th>op</th><th>elements</th><th>digits min</th><th>median</th>"
      "<th>true min</th><th>explained</th><th>lost</th><th>kind</th></tr>";
  for (const auto& n : r.nodes)
    h += std::string("<tr") + (n.polluting ? " class=\"polluting\"" : "") + "><td>" +
         escape(n.name) + "</td><td>" + escape(n.op) + "</td><td>" + std::to_string(n.elements) +
         "</td><td>" + fmt(n.digits_min) + "</td><td>" + fmt(n.digits_median) + "</td><td>" +
         fmt(n.true_min) + "</td><td>" + fmt(n.explained_min) + "</td><td>" + fmt(n.lost) +
         "</td><td>" + escape(n.kind) + "</td></tr>";
  return h + "</table><p>Condition numbers: " + escape(r.cond_method) + "</p></body></html>\n";
}

int infer_command(const std::string& model, const std::string& inputs, const std::string& out,
                  const std::string& precision, uint64_t seed, bool fuzz, double budget_s) {
  if (inputs.empty())
    throw InputError("monitor infer --model " + model +
                     ": --inputs DIR is required (a test_data_set folder: input_0.pb, ...)");
  if (!precision.empty() && precision != "f32" && precision != "f64")
    throw InputError("--precision must be f32 or f64, got '" + precision + "'");
  const Model m = read_model(model);
  const auto in = read_inputs(m, inputs);
  bool f64 = precision == "f64";
  if (precision.empty())
    for (const auto& [name, t] : in) f64 |= t.elem == Elem::float64;
  InferReport r = infer(m, in, f64, seed);
  r.inputs = inputs;
  const std::string dir = !out.empty() ? out
                                       : "runs/monitor-infer-" +
                                             std::filesystem::path(model).stem().string() + "-s" +
                                             std::to_string(seed);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create output directory " + dir + ": " + ec.message());
  reports::write_json_atomically(dir + "/summary.json", infer_json(r));
  reports::write_text_atomically(dir + "/report.html", infer_html(r));
  std::printf("stabfuzz monitor infer: %s on %s, %zu nodes, Stoch<%s, 3>, seed %llu\n",
              model.c_str(), inputs.c_str(), m.nodes.size(), f64 ? "double" : "float",
              static_cast<unsigned long long>(seed));
  std::printf("%s", infer_text(r).c_str());
  std::printf(
      "condition numbers: %s\ngraph run natively %.3g s, under CESTAC %.3g s (%.1fx); %.2f s in "
      "all; summary: %s/summary.json, report: %s/report.html\n",
      r.cond_method.c_str(), r.native_seconds, r.cestac_seconds,
      r.native_seconds > 0 ? r.cestac_seconds / r.native_seconds : 0.0, r.seconds, dir.c_str(),
      dir.c_str());
  if (!fuzz) return 0;
  if (!(budget_s > 0)) throw InputError("--budget-s must be positive");
  std::printf("\nfuzzing the inputs for %.0f s (seed %llu)\n", budget_s,
              static_cast<unsigned long long>(seed));
  const FuzzReport f = fuzz_inputs(m, in, f64, seed, budget_s, dir);
  std::printf("%lld trials in %.1f s: %zu polluting nodes found\n",
              static_cast<long long>(f.trials), f.seconds, f.breaks.size());
  for (const auto& b : f.breaks)
    std::printf(
        "  %s (%s): %s at trial %lld (%s); replay: stabfuzz monitor infer --model %s "
        "--inputs %s\n",
        b.node.c_str(), b.op.c_str(), b.kind.c_str(), static_cast<long long>(b.trial),
        b.regime.c_str(), model.c_str(), b.dir.c_str());
  return f.breaks.empty() ? 0 : 1;
}

}  // namespace stabfuzz::onnx
