// The learning-rate sweep of `stabfuzz monitor sweep`, its table, CSV, JSON and HTML page.
#include "harness/monitor/sweep.h"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "harness/monitor/output.h"
#include "reports/svg.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {
namespace {

std::string num(double v, const char* fmt = "%.3g") {
  if (std::isnan(v)) return "-";
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

double spread(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double lo = v[0], hi = v[0];
  for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
  return hi - lo;
}

}  // namespace

std::vector<double> parse_number_list(const std::string& s, const std::string& flag,
                                      bool allow_zero) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string cell = s.substr(pos, comma - pos);
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    if (cell.empty() || end != cell.c_str() + cell.size() || !std::isfinite(v) || v < 0 ||
        (v == 0 && !allow_zero))
      throw InputError("--" + flag + ": expected " + (allow_zero ? "non-negative" : "positive") +
                       " numbers separated by commas, got '" + s + "'");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

// One cell of the sweep: the CESTAC run at (lr, wd) and its native k-trick and seed runs.
static SweepRow sweep_row(const SweepConfig& cfg, const Split& data, double lr, double wd,
                          std::ostream& progress) {
  SweepRow row;
  row.lr = lr;
  row.wd = wd;
  TrainConfig c = cfg.base;
  c.lr = lr;
  c.weight_decay = wd;
  c.trace = false;  // the sweep needs the weights and samples, not every operation's digits
  row.cestac = train_cestac(c, data);
  progress << "  lr " << num(lr) << (wd > 0 ? ", weight decay " + num(wd) : "") << ": CESTAC "
           << num(row.cestac.seconds, "%.1f") << " s, loss " << num(row.cestac.train_loss_final)
           << ", lr*lambda0 " << num(lr * row.cestac.lambda0) << std::endl;
  TrainConfig n = c;
  n.sharpness_every = 0;
  for (int k : cfg.ks) {
    n.k = k;
    n.init_seed = 0;
    const TrainResult r = train_native(n, data);
    row.acc_k.push_back(r.test_accuracy.at(0));
    row.loss_k.push_back(r.train_loss_final);
  }
  n.k = 1;
  for (int s = 1; s <= cfg.init_seeds; ++s) {
    n.init_seed = cfg.base.seed + static_cast<uint64_t>(s);
    row.acc_seeds.push_back(train_native(n, data).test_accuracy.at(0));
  }
  return row;
}

std::vector<SweepRow> run_sweep(const SweepConfig& cfg, const Split& data, std::ostream& progress) {
  std::vector<SweepRow> rows;
  for (double lr : cfg.lrs)
    for (double wd : cfg.wds) rows.push_back(sweep_row(cfg, data, lr, wd, progress));
  return rows;
}

std::string sweep_table(const std::vector<SweepRow>& rows) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%8s %7s %9s %12s %10s %10s %9s %9s %11s %11s %11s %9s\n", "lr",
                "wd", "lr*lam0", "lr*(lMax+wd)", "loss", "W digits", "W dmin", "relL1",
                "acc spread", "acc std(k)", "std(seeds)", "loss(k)max");
  os << line;
  for (const auto& r : rows) {
    const auto& c = r.cestac;
    const StepRecord& last = c.steps.back();
    double lk = 0;
    for (double l : r.loss_k) lk = std::max(lk, l);
    std::snprintf(
        line, sizeof line, "%8s %7s %9s %12s %10s %10s %9s %9s %11s %11s %11s %9s\n",
        num(r.lr).c_str(), num(r.wd, "%g").c_str(), num(r.lr * c.lambda0).c_str(),
        num(r.lr * (c.lambda_max + r.wd)).c_str(),
        (c.diverged_at >= 0 ? "div@" + std::to_string(c.diverged_at) : num(last.loss, "%.4g"))
            .c_str(),
        num(last.weight_digits_mean, "%.2f").c_str(), num(last.weight_digits_min, "%.2f").c_str(),
        num(last.rel_l1, "%.2g").c_str(), num(spread(c.test_accuracy), "%.4f").c_str(),
        num(std_of(r.acc_k), "%.4f").c_str(),
        (r.acc_seeds.empty() ? std::string("-") : num(std_of(r.acc_seeds), "%.4f")).c_str(),
        num(lk, "%.4g").c_str());
    os << line;
  }
  return os.str();
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  std::ostringstream os;
  os << "lr,weight_decay,lambda0,lambda_max,lr_lambda0,final_loss,final_loss_digits,weight_digits_"
        "mean,weight_"
        "digits_min,rel_l1,"
        "acc_mean_samples,acc_spread_samples,acc_std_samples,acc_std_k,acc_std_seeds,acc_k,acc_"
        "seeds\n";
  for (const auto& r : rows) {
    const auto& c = r.cestac;
    const StepRecord& last = c.steps.back();
    auto joined = [](const std::vector<double>& v) {
      std::string s;
      for (double x : v) s += (s.empty() ? "" : " ") + num(x, "%.4f");
      return s;
    };
    os << num(r.lr, "%g") << ',' << num(r.wd, "%g") << ',' << num(c.lambda0, "%.6g") << ','
       << num(c.lambda_max, "%.6g") << ',' << num(r.lr * c.lambda0, "%.6g") << ','
       << num(last.loss, "%.6g") << ',' << num(last.loss_digits, "%.3f") << ','
       << num(last.weight_digits_mean, "%.3f") << ',' << num(last.weight_digits_min, "%.3f") << ','
       << num(last.rel_l1, "%.3g") << ',' << num(mean_of(c.test_accuracy), "%.4f") << ','
       << num(spread(c.test_accuracy), "%.4f") << ',' << num(std_of(c.test_accuracy), "%.4f") << ','
       << num(std_of(r.acc_k), "%.4f") << ','
       << (r.acc_seeds.empty() ? std::string() : num(std_of(r.acc_seeds), "%.4f")) << ','
       << joined(r.acc_k) << ',' << joined(r.acc_seeds) << '\n';
  }
  return os.str();
}

json::Value sweep_json(const SweepConfig& cfg, const std::vector<SweepRow>& rows) {
  json::Value j;
  json::Value base;
  const TrainConfig& b = cfg.base;
  base.set("model",
           cfg.model_label.empty() ? std::string(model_name(b.spec.kind)) : cfg.model_label);
  base.set("loss", loss_name(b.loss));
  base.set("precision", b.f64 ? "f64" : "f32");
  base.set("steps", b.steps);
  base.set("batch", b.batch);
  base.set("momentum", b.momentum);
  base.set("seed", b.seed);
  base.set("sharpness_every", b.sharpness_every);
  json::Array ks;
  for (int k : cfg.ks) ks.emplace_back(k);
  base.set("k", std::move(ks));
  base.set("init_seeds", cfg.init_seeds);
  j.set("config", std::move(base));
  json::Array out;
  for (const auto& r : rows) {
    const auto& c = r.cestac;
    const StepRecord& last = c.steps.back();
    json::Value jr;
    jr.set("lr", r.lr);
    jr.set("weight_decay", r.wd);
    jr.set("lr_lambda_max_plus_wd", r.lr * (c.lambda_max + r.wd));
    jr.set("lambda0", c.lambda0);
    jr.set("lambda_max", c.lambda_max);
    jr.set("lr_lambda0", r.lr * c.lambda0);
    jr.set("final_loss", last.loss);
    jr.set("diverged_at_step", c.diverged_at >= 0 ? json::Value(c.diverged_at) : json::Value());
    jr.set("final_loss_digits", last.loss_digits);
    jr.set("weight_digits_mean", last.weight_digits_mean);
    jr.set("weight_digits_min", last.weight_digits_min);
    jr.set("rel_l1", last.rel_l1);
    auto arr = [](const std::vector<double>& v) {
      json::Array a;
      for (double x : v) a.emplace_back(x);
      return a;
    };
    jr.set("test_accuracy_samples", arr(c.test_accuracy));
    jr.set("acc_std_samples", std_of(c.test_accuracy));
    jr.set("test_accuracy_k", arr(r.acc_k));
    jr.set("acc_std_k", std_of(r.acc_k));
    jr.set("train_loss_k", arr(r.loss_k));
    jr.set("test_accuracy_seeds", arr(r.acc_seeds));
    jr.set("acc_std_seeds", r.acc_seeds.empty() ? json::Value() : json::Value(std_of(r.acc_seeds)));
    jr.set("seconds", c.seconds);
    out.push_back(std::move(jr));
  }
  j.set("rows", std::move(out));
  return j;
}

std::string render_sweep_html(const SweepConfig& cfg, const std::vector<SweepRow>& rows) {
  namespace svg = reports::svg;
  std::ostringstream os;
  const std::string model =
      cfg.model_label.empty() ? std::string(model_name(cfg.base.spec.kind)) : cfg.model_label;
  const std::string title = std::string("stabfuzz monitor sweep: ") + model + ", " +
                            loss_name(cfg.base.loss) + ", " + std::to_string(cfg.base.steps) +
                            " steps";
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
     << svg::escape(title)
     << "</title><style>body{font:14px/1.4 "
        "system-ui,sans-serif;margin:24px}table{border-collapse:collapse}"
        "th,td{border:1px solid #ccc;padding:3px "
        "7px}td{text-align:right}.plots{display:flex;flex-wrap:wrap;gap:10px}"
        "svg.plot{border:1px solid #ddd}svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}"
        "svg .tick{font-size:10px}svg .axis{font-size:11px}svg "
        ".ptitle{font-size:12px;font-weight:bold}"
        "</style></head><body><h1>"
     << svg::escape(title) << "</h1><pre id=\"table\">" << svg::escape(sweep_table(rows))
     << "</pre>";
  std::vector<svg::Point> digits, rel, acc;
  for (const auto& r : rows) {
    const double x = r.lr * r.cestac.lambda0;
    const std::string t = "lr " + num(r.lr) + (r.wd > 0 ? ", wd " + num(r.wd) : "");
    if (r.cestac.diverged_at < 0) {  // a diverged run's weights are NaN: nothing to plot
      digits.push_back({x, "", r.cestac.steps.back().weight_digits_mean, "mean", t});
      digits.push_back({x, "", r.cestac.steps.back().weight_digits_min, "min", t});
      rel.push_back({x, "", r.cestac.steps.back().rel_l1, "rel L1", t});
    }
    // Series names chosen to get three different colours from svg::series_colour.
    acc.push_back({r.lr, "", std_of(r.acc_k), "across k", t});
    if (!r.acc_seeds.empty()) acc.push_back({r.lr, "", std_of(r.acc_seeds), "seeds", t});
    acc.push_back({r.lr, "", std_of(r.cestac.test_accuracy), "CESTAC samples", t});
  }
  os << "<div class=\"plots\">"
     << svg::scatter("final weights' digits vs lr*lambda0", digits, {"lr lambda0", true},
                     {"digits"})
     << svg::scatter("rel. L1 between samples vs lr*lambda0", rel, {"lr lambda0", true},
                     {"rel L1", true})
     << svg::scatter("test accuracy std vs lr", acc, {"lr", true}, {"std"})
     << "</div></body></html>\n";
  return os.str();
}

}  // namespace stabfuzz::monitor
