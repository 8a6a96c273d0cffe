// `stabfuzz monitor infer`: the trained weights' forward pass under CESTAC over the test set.
#include "harness/monitor/infer.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/infer.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include "reports/findings.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "stabfuzz/cestac.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

// Margin buckets by decade: a margin of 1e-3 with 2 digits is a coin toss, one of 10 is not.
constexpr double kEdges[] = {0, 1e-3, 1e-2, 1e-1, 1, 10};

std::string num(double v, const char* fmt = "%.4g") {
  if (std::isnan(v)) return "";
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

DigitsSummary summarize(std::vector<double> d) {
  DigitsSummary s;
  if (d.empty()) return s;
  std::sort(d.begin(), d.end());
  s.min = d.front();
  s.p10 = d[d.size() / 10];
  double sum = 0;
  for (double x : d) sum += x;
  s.mean = sum / static_cast<double>(d.size());
  return s;
}

// The model's weights rounded to F, and the same values as CESTAC scalars.
template <class F>
struct Weights {
  Params<F> native;
  Params<Stoch<F, 3>> stoch;
};

template <class F>
Weights<F> weights_of(const ModelFile& m) {
  using T = Stoch<F, 3>;
  Weights<F> w{Params<F>::zeros(m.spec), Params<T>::zeros(m.spec)};
  for (int i = 0; i < Params<F>::kTensors; ++i)
    for (size_t j = 0; j < m.params.tensor(i).size(); ++j) {
      w.native.tensor(i)[j] = static_cast<F>(m.params.tensor(i)[j]);
      w.stoch.tensor(i)[j] = T(w.native.tensor(i)[j]);  // exact: every sample starts equal
    }
  return w;
}

// Round to nearest: the accuracy train reported for these weights.
template <class F>
double native_accuracy(const ModelSpec& spec, const Params<F>& pn, const Dataset& test) {
  const int B = static_cast<int>(test.rows());
  std::vector<F> x(test.x.begin(), test.x.end());
  const std::vector<int> pred = predict(spec, pn, x.data(), B);
  int64_t right = 0;
  for (int b = 0; b < B; ++b) right += pred[b] == test.y[b];
  return static_cast<double>(right) / B;
}

// Each row's two largest logits (by the samples' mean) and the difference between them.
template <class T>
struct TopTwo {
  std::vector<T> margins;
  std::vector<int> top1, top2;
};

// The forward pass under CESTAC (keyed by `seed`): the logits in ws.z2, every operation traced,
// and each row's top two.
template <class F>
TopTwo<Stoch<F, 3>> cestac_forward(const ModelSpec& spec, const Params<Stoch<F, 3>>& ps,
                                   const Dataset& test, uint64_t seed, Workspace<Stoch<F, 3>>& ws,
                                   Trace& tr) {
  using T = Stoch<F, 3>;
  const int B = static_cast<int>(test.rows()), C = spec.classes;
  TopTwo<T> t{std::vector<T>(static_cast<size_t>(B)), std::vector<int>(static_cast<size_t>(B)),
              std::vector<int>(static_cast<size_t>(B))};
  cestac::Run cr(seed, 0, cestac::Config{cestac::kDefaultCancelDigits, true});
  std::vector<T> x;
  x.reserve(test.x.size());
  for (double v : test.x) x.push_back(T(static_cast<F>(v)));
  tr.begin_step(0);
  loss_and_grad(spec, ps, x.data(), test.y.data(), B, LossKind::ce,
                static_cast<Params<T>*>(nullptr), ws, tr);
  for (int b = 0; b < B; ++b) {
    const T* z = &ws.z2[size_t(b) * C];
    int i1 = 0, i2 = -1;
    for (int c = 1; c < C; ++c) {
      if (z[c].mean() > z[i1].mean()) {
        i2 = i1;
        i1 = c;
      } else if (i2 < 0 || z[c].mean() > z[i2].mean()) {
        i2 = c;
      }
    }
    t.top1[b] = i1;
    t.top2[b] = i2;
    t.margins[b] = z[i1] - z[i2];  // under random rounding, as a consumer would compute it
  }
  return t;
}

// Row b's record from its logits z: their digits (appended to `all_digits`), each sample's
// argmax (counted in `right` when it is the label) and the margin's digits.
template <class T>
InferRow infer_row(int b, int C, const T* z, int label, int top1, const T& margin,
                   std::vector<double>& all_digits, std::vector<int64_t>& right) {
  InferRow row;
  row.row = b;
  row.label = label;
  row.pred = top1;
  row.logit_digits_min = std::numeric_limits<double>::infinity();
  for (int c = 0; c < C; ++c) {
    const double d = value_digits(z[c]);
    all_digits.push_back(d);
    row.logit_digits_min = std::min(row.logit_digits_min, d);
  }
  for (int k = 0; k < T::kSamples; ++k) {
    int best = 0;
    for (int c = 1; c < C; ++c)
      if (z[c].s[k] > z[best].s[k]) best = c;
    row.sample_preds.push_back(best);
    right[k] += best == row.label;
    row.flip |= best != row.sample_preds[0];
  }
  row.margin = margin.mean();
  row.margin_digits = value_digits(margin);
  return row;
}

// The rows by margin decade (kEdges): how many, how many flip, and their digits.
std::vector<MarginBucket> margin_buckets(const std::vector<InferRow>& rows) {
  std::vector<MarginBucket> buckets;
  const int nb = static_cast<int>(std::size(kEdges));
  for (int i = 0; i < nb; ++i) {
    MarginBucket mb;
    mb.lo = kEdges[i];
    mb.hi = i + 1 < nb ? kEdges[i + 1] : std::numeric_limits<double>::infinity();
    std::vector<double> ld, md;
    for (const auto& r : rows)
      if (r.margin >= mb.lo && r.margin < mb.hi) {
        ++mb.rows;
        mb.flips += r.flip;
        ld.push_back(r.logit_digits_min);
        md.push_back(r.margin_digits);
      }
    if (mb.rows) {
      const DigitsSummary a = summarize(ld), b = summarize(md);
      mb.logit_digits_min = a.min;
      mb.logit_digits_mean = a.mean;
      mb.margin_digits_min = b.min;
      mb.margin_digits_mean = b.mean;
    }
    buckets.push_back(mb);
  }
  return buckets;
}

template <class F>
InferResult run(const ModelFile& m, const Dataset& test, uint64_t seed) {
  using T = Stoch<F, 3>;
  const auto t0 = std::chrono::steady_clock::now();
  const ModelSpec& spec = m.spec;
  const int B = static_cast<int>(test.rows()), C = spec.classes;
  InferResult res;
  res.model = m;
  res.data = test.name;
  res.f64 = std::is_same_v<F, double>;
  res.seed = seed;
  if (B == 0) throw InputError("empty test set");

  const Weights<F> w = weights_of<F>(m);
  res.accuracy_native = native_accuracy(spec, w.native, test);

  Workspace<T> ws;
  Trace tr(2, true);
  const TopTwo<T> top = cestac_forward<F>(spec, w.stoch, test, seed, ws, tr);

  cestac::NearestScope nearest;
  std::vector<int64_t> right(T::kSamples, 0);
  std::vector<double> all_digits;
  all_digits.reserve(size_t(B) * C);
  for (int b = 0; b < B; ++b) {
    InferRow row = infer_row(b, C, &ws.z2[size_t(b) * C], test.y[b], top.top1[b], top.margins[b],
                             all_digits, right);
    res.flips += row.flip;
    res.rows.push_back(std::move(row));
  }
  for (int k = 0; k < T::kSamples; ++k)
    res.accuracy_per_sample.push_back(static_cast<double>(right[k]) / B);
  res.logits = summarize(all_digits);
  res.buckets = margin_buckets(res.rows);
  res.layers = tr.stats();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::string bucket_label(const MarginBucket& b) {
  return "[" + num(b.lo, "%g") + ", " + (std::isinf(b.hi) ? std::string("inf") : num(b.hi, "%g")) +
         ")";
}

}  // namespace

InferResult run_infer(const ModelFile& m, const Dataset& test, bool f64, uint64_t seed) {
  if (test.height != m.spec.height || test.width != m.spec.width || test.classes != m.spec.classes)
    throw InputError("the model takes " + std::to_string(m.spec.height) + "x" +
                     std::to_string(m.spec.width) + " images in " + std::to_string(m.spec.classes) +
                     " classes; " + test.name + " has " + std::to_string(test.height) + "x" +
                     std::to_string(test.width) + " in " + std::to_string(test.classes));
  return f64 ? run<double>(m, test, seed) : run<float>(m, test, seed);
}

json::Value infer_json(const InferResult& r) {
  json::Value j, cfg;
  cfg.set("model_file", r.model_path);
  cfg.set("model", model_name(r.model.spec.kind));
  cfg.set("trained_on", r.model.data);
  cfg.set("data", r.data);
  cfg.set("precision", r.f64 ? "f64" : "f32");
  cfg.set("seed", r.seed);
  j.set("config", std::move(cfg));
  json::Value s;
  s.set("test_rows", static_cast<int64_t>(r.rows.size()));
  s.set("accuracy_native", r.accuracy_native);
  s.set("train_reported_accuracy_mean", r.model.test_accuracy_mean);
  json::Array acc;
  for (double a : r.accuracy_per_sample) acc.emplace_back(a);
  s.set("accuracy_per_sample", std::move(acc));
  json::Value lg;
  lg.set("min", r.logits.min);
  lg.set("p10", r.logits.p10);
  lg.set("mean", r.logits.mean);
  s.set("logit_digits", std::move(lg));
  s.set("argmax_flips", r.flips);
  j.set("summary", std::move(s));
  json::Array flips;
  for (const auto& row : r.rows) {
    if (!row.flip) continue;
    json::Value f;
    f.set("row", row.row);
    f.set("label", row.label);
    json::Array sp;
    for (int p : row.sample_preds) sp.emplace_back(static_cast<int64_t>(p));
    f.set("sample_predictions", std::move(sp));
    f.set("margin", row.margin);
    f.set("margin_digits", row.margin_digits);
    flips.push_back(std::move(f));
  }
  j.set("flips", std::move(flips));
  json::Array buckets;
  for (const auto& b : r.buckets) {
    json::Value v;
    v.set("margin", bucket_label(b));
    v.set("rows", b.rows);
    v.set("flips", b.flips);
    if (b.rows) {
      v.set("logit_digits_min", b.logit_digits_min);
      v.set("logit_digits_mean", b.logit_digits_mean);
      v.set("margin_digits_min", b.margin_digits_min);
      v.set("margin_digits_mean", b.margin_digits_mean);
    }
    buckets.push_back(std::move(v));
  }
  j.set("margin_buckets", std::move(buckets));
  json::Array layers;
  for (const auto& o : r.layers) {
    json::Value v;
    v.set("layer", o.layer);
    v.set("op", o.op);
    v.set("site", o.site);
    v.set("elements", o.elements);
    v.set("digits_min", o.min);
    v.set("digits_p10", o.p10);
    v.set("digits_mean", o.mean);
    layers.push_back(std::move(v));
  }
  j.set("layers", std::move(layers));
  return j;
}

std::string infer_csv(const InferResult& r) {
  std::ostringstream os;
  os << "row,label,pred,pred_s0,pred_s1,pred_s2,flip,margin,margin_digits,logit_digits_min\n";
  for (const auto& row : r.rows) {
    os << row.row << ',' << row.label << ',' << row.pred;
    for (int p : row.sample_preds) os << ',' << p;
    os << ',' << row.flip << ',' << num(row.margin, "%.9g") << ',' << num(row.margin_digits) << ','
       << num(row.logit_digits_min) << '\n';
  }
  return os.str();
}

std::string render_infer_html(const InferResult& r) {
  namespace svg = reports::svg;
  std::ostringstream os;
  const std::string title = std::string("stabfuzz monitor infer: ") +
                            model_name(r.model.spec.kind) + " on " + r.data + ", seed " +
                            std::to_string(r.seed);
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
     << svg::escape(title) << "</title><style>"
     << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
        "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px "
        "7px}th{background:#eef}svg.plot{background:#fff;border:1px solid #ddd}"
        "svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{font-size:10px}"
        "svg .ptitle{font-size:12px;font-weight:bold}</style></head><body><h1>"
     << svg::escape(title) << "</h1><p>accuracy " << num(r.accuracy_native)
     << " (round to nearest); argmax differs between CESTAC samples on " << r.flips << " of "
     << r.rows.size() << " rows; logit digits min " << num(r.logits.min, "%.2f") << " p10 "
     << num(r.logits.p10, "%.2f") << " mean " << num(r.logits.mean, "%.2f") << "</p>";
  std::vector<svg::Point> pts;
  for (const auto& row : r.rows)
    pts.push_back({row.margin, "", row.margin_digits, row.flip ? "argmax differs" : "agrees",
                   "row " + std::to_string(row.row)});
  os << svg::scatter("margin (top1 - top2) vs its digits", pts, {"margin", true}, {"digits"});
  os << "<h2>Margin buckets</h2><table><tr><th>margin</th><th>rows</th><th>flips</th><th>logit "
        "digits min</th><th>margin digits mean</th></tr>";
  for (const auto& b : r.buckets)
    os << "<tr><td>" << bucket_label(b) << "</td><td>" << b.rows << "</td><td>" << b.flips
       << "</td><td>" << (b.rows ? num(b.logit_digits_min, "%.2f") : "") << "</td><td>"
       << (b.rows ? num(b.margin_digits_mean, "%.2f") : "") << "</td></tr>";
  os << "</table><h2>Digits per layer output</h2><table><tr><th>layer</th><th>op</th><th>min</"
        "th><th>p10</th><th>mean</th></tr>";
  for (const auto& o : r.layers)
    os << "<tr><td>" << svg::escape(o.layer) << "</td><td>" << svg::escape(o.op) << "</td><td>"
       << num(o.min, "%.2f") << "</td><td>" << num(o.p10, "%.2f") << "</td><td>"
       << num(o.mean, "%.2f") << "</td></tr>";
  os << "</table></body></html>\n";
  return os.str();
}

int infer_command(const InferArgs& o) {
  if (o.model.empty()) throw InputError("monitor infer: --model FILE is required");
  if (o.model.size() > 5 && o.model.compare(o.model.size() - 5, 5, ".onnx") == 0) {
#ifdef STABFUZZ_HAVE_ONNX
    return onnx::infer_command(o.model, o.inputs, o.out, o.precision, o.seed, o.fuzz, o.budget_s);
#else
    throw InputError("monitor infer --model " + o.model +
                     ": built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
  }
  if (!o.inputs.empty() || o.fuzz)
    throw InputError(std::string(o.fuzz ? "--fuzz" : "--inputs") +
                     " is for an ONNX graph (--model M.onnx); " + o.model +
                     " is a monitor train model file");
  const ModelFile m = read_model_file(o.model);
  const std::string data = !o.data.empty() ? o.data : m.data;
  if (!o.precision.empty() && o.precision != "f32" && o.precision != "f64")
    throw InputError("--precision must be f32 or f64, got '" + o.precision + "'");
  const bool f64 = !o.precision.empty() ? o.precision == "f64" : m.f64;
  const uint64_t seed = o.seed;
  const Split split = load_dataset(data, 0);
  const std::string out = !o.out.empty()
                              ? o.out
                              : "runs/monitor-infer-" + std::string(model_name(m.spec.kind)) + "-" +
                                    data + "-s" + std::to_string(seed);
  InferResult r = run_infer(m, split.test, f64, seed);
  r.model_path = o.model;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("cannot create output directory " + out + ": " + ec.message());
  reports::write_json_atomically(out + "/infer.json", infer_json(r));
  reports::write_text_atomically(out + "/infer.csv", infer_csv(r));
  reports::write_text_atomically(out + "/report.html", render_infer_html(r));

  std::printf("%s on %s test set (%zu rows), Stoch<%s, 3>, seed %llu\n", model_name(m.spec.kind),
              data.c_str(), r.rows.size(), f64 ? "double" : "float",
              static_cast<unsigned long long>(seed));
  std::printf("accuracy (round to nearest) %.4f; train reported %.4f for these weights\n",
              r.accuracy_native, m.test_accuracy_mean);
  std::printf("accuracy per CESTAC sample:");
  for (double a : r.accuracy_per_sample) std::printf(" %.4f", a);
  std::printf("\nlogit digits: min %.2f p10 %.2f mean %.2f\n", r.logits.min, r.logits.p10,
              r.logits.mean);
  std::printf("argmax differs between samples: %lld rows", static_cast<long long>(r.flips));
  int shown = 0;
  for (const auto& row : r.rows)
    if (row.flip && shown++ < 10)
      std::printf("%s%lld", shown == 1 ? " (" : ", ", static_cast<long long>(row.row));
  std::printf("%s\n", r.flips > 10 ? ", ...)" : r.flips ? ")" : "");
  std::printf("%-14s %6s %6s %12s %12s\n", "margin", "rows", "flips", "logit dig min",
              "margin dig");
  for (const auto& b : r.buckets)
    std::printf("%-14s %6lld %6lld %12s %12s\n", bucket_label(b).c_str(),
                static_cast<long long>(b.rows), static_cast<long long>(b.flips),
                b.rows ? num(b.logit_digits_min, "%.2f").c_str() : "-",
                b.rows ? num(b.margin_digits_mean, "%.2f").c_str() : "-");
  std::printf("per layer output digits (min / p10 / mean):\n");
  for (const auto& l : r.layers)
    std::printf("  %-6s %-14s %6.2f %6.2f %6.2f\n", l.layer.c_str(), l.op.c_str(), l.min, l.p10,
                l.mean);
  std::printf("%.1f s; outputs: %s/infer.json, infer.csv, report.html\n", r.seconds, out.c_str());
  return 0;
}

}  // namespace stabfuzz::monitor
