// report.html of a monitored training run: summary, the polluting operation, instability sites,
// plots of digits, loss and sharpness against step, and the operation x step heatmap of digits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "harness/monitor/output.h"
#include "reports/svg.h"

namespace stabfuzz::monitor {
namespace {

using reports::svg::escape;

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#eef}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px;background:#f4f4f4;padding:1px 3px}
.plots{display:flex;flex-wrap:wrap;gap:10px}
svg.plot,svg.heatmap{background:#fff;border:1px solid #ddd}
svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#444}
svg .axis{font-size:11px;fill:#222}svg .ptitle{font-size:12px;font-weight:bold;fill:#222}
)";

std::string num(double v, const char* fmt = "%.3g") {
  if (std::isnan(v)) return "-";
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// Digits 0 (red) .. full (green).
std::string digit_colour(double d, double full) {
  const double t = std::clamp(d / full, 0.0, 1.0);
  char b[48];
  std::snprintf(b, sizeof b, "hsl(%d,70%%,%d%%)", static_cast<int>(120 * t),
                static_cast<int>(45 + 10 * t));
  return b;
}

std::string heatmap(const TrainResult& r, double full) {
  std::vector<std::string> rows;
  std::map<std::string, size_t> row_of;
  int64_t max_step = 0;
  for (const auto& o : r.ops) {
    const std::string key = o.layer + " " + phase_name(o.phase) + " " + o.op;
    if (!row_of.count(key)) {
      row_of[key] = rows.size();
      rows.push_back(key);
    }
    max_step = std::max(max_step, o.step);
  }
  if (rows.empty()) return "<p>No operation was traced (native run).</p>";
  const int64_t steps = max_step + 1;
  const int64_t cols = std::min<int64_t>(steps, 240);  // steps per column when longer
  const double cw = std::max(2.0, 720.0 / static_cast<double>(cols)), ch = 16, left = 210, top = 30;
  struct Cell {
    double mean = INFINITY, min = INFINITY;
    int64_t polluted = 0, first = -1, last = -1;
  };
  std::vector<std::vector<Cell>> cells(rows.size(), std::vector<Cell>(static_cast<size_t>(cols)));
  for (const auto& o : r.ops) {
    const size_t c = static_cast<size_t>(o.step * cols / steps);
    Cell& cell = cells[row_of[o.layer + " " + phase_name(o.phase) + " " + o.op]][c];
    cell.mean = std::min(cell.mean, o.mean);
    cell.min = std::min(cell.min, o.min);
    cell.polluted += o.polluted;
    if (cell.first < 0) cell.first = o.step;
    cell.last = o.step;
  }
  const double w = left + cw * static_cast<double>(cols) + 20,
               h = top + ch * static_cast<double>(rows.size()) + 40;
  std::ostringstream os;
  os << "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w
     << "\" height=\"" << h
     << "\" role=\"img\" aria-label=\"digits per operation and step\"><text x=\"" << w / 2
     << "\" y=\"16\" text-anchor=\"middle\" class=\"ptitle\">mean digits per operation (rows) and "
        "step (columns); "
        "dot: polluted elements, black frame: the polluting operation</text>";
  const std::string pol_key =
      r.polluting
          ? r.polluting->layer + " " + phase_name(r.polluting->phase) + " " + r.polluting->op
          : "";
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = top + ch * static_cast<double>(i);
    os << "<text x=\"" << left - 4 << "\" y=\"" << y + 12
       << "\" text-anchor=\"end\" class=\"tick\">" << escape(rows[i]) << "</text>";
    for (int64_t c = 0; c < cols; ++c) {
      const Cell& cell = cells[i][static_cast<size_t>(c)];
      if (cell.first < 0) continue;
      const double x = left + cw * static_cast<double>(c);
      os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw << "\" height=\"" << ch
         << "\" fill=\"" << digit_colour(cell.mean, full) << "\"><title>" << escape(rows[i])
         << ", steps " << cell.first << "-" << cell.last << ": mean " << num(cell.mean) << ", min "
         << num(cell.min) << " digits, " << cell.polluted << " polluted</title></rect>";
      if (cell.polluted > 0)
        os << "<circle class=\"marker\" cx=\"" << x + cw / 2 << "\" cy=\"" << y + ch / 2
           << "\" r=\"" << std::min(cw, ch) / 3 << "\" fill=\"#000\"/>";
      if (r.polluting && rows[i] == pol_key && r.polluting->step >= cell.first &&
          r.polluting->step <= cell.last)
        os << "<rect class=\"polluting\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw
           << "\" height=\"" << ch << "\" fill=\"none\" stroke=\"#000\" stroke-width=\"2\"/>";
    }
  }
  const double ya = top + ch * static_cast<double>(rows.size()) + 14;
  os << "<text x=\"" << left << "\" y=\"" << ya << "\" class=\"tick\">step 0</text><text x=\""
     << left + cw * static_cast<double>(cols) << "\" y=\"" << ya
     << "\" text-anchor=\"end\" class=\"tick\">step " << max_step << "</text></svg>";
  return os.str();
}

}  // namespace

std::string render_train_html(const TrainResult& r) {
  namespace svg = reports::svg;
  const TrainConfig& c = r.config;
  const double full = c.f64 ? std::log10(std::ldexp(1.0, 53)) : std::log10(std::ldexp(1.0, 24));
  std::ostringstream os;
  const std::string title = std::string("stabfuzz monitor: ") + model_name(c.spec.kind) + " on " +
                            r.data + ", lr " + num(c.lr) + ", seed " + std::to_string(c.seed);
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << escape(title)
     << "</title><style>" << kStyle << "</style></head><body><h1>" << escape(title) << "</h1>";
  const StepRecord& last = r.steps.back();
  os << "<table id=\"summary\"><tbody>"
     << "<tr><th>training</th><td>" << (c.f64 ? "Stoch&lt;double,3&gt;" : "Stoch&lt;float,3&gt;")
     << ", loss " << loss_name(c.loss) << ", " << c.steps << " steps, batch "
     << (c.batch ? std::to_string(c.batch) : "full") << ", momentum " << num(c.momentum) << ", k "
     << c.k << ", " << num(r.seconds) << " s</td></tr>"
     << "<tr><th>final loss</th><td>"
     << (r.diverged_at >= 0 ? "diverged at step " + std::to_string(r.diverged_at) + ": " : "")
     << num(last.loss, "%.6g") << " (" << num(last.loss_digits, "%.2f") << " digits)</td></tr>"
     << "<tr><th>final weights' digits</th><td>min " << num(last.weight_digits_min, "%.2f")
     << ", mean " << num(last.weight_digits_mean, "%.2f") << " of " << num(full, "%.2f")
     << "</td></tr>"
     << "<tr><th>rel. L1 between samples</th><td>" << num(last.rel_l1) << "</td></tr>"
     << "<tr><th>test accuracy per sample</th><td>";
  for (double a : r.test_accuracy) os << num(a, "%.4f") << " ";
  os << "</td></tr><tr><th>sharpness</th><td>&lambda;<sub>0</sub> = " << num(r.lambda0)
     << ", lr&middot;&lambda;<sub>0</sub> = " << num(c.lr * r.lambda0)
     << ", max |&lambda;| = " << num(r.lambda_max)
     << " (stability limit lr&middot;&lambda; = 2)</td></tr>"
     << "</tbody></table>";
  os << "<h2>Polluting operation</h2>";
  if (r.polluting) {
    const Pollution& p = *r.polluting;
    os << "<p id=\"polluting\">The first operation whose output lost more than " << num(c.delta)
       << " digits more than its inputs explain: <b>" << escape(p.layer) << " "
       << phase_name(p.phase) << " " << escape(p.op) << "</b> at <code>" << escape(p.site)
       << "</code>, step " << p.step << ", element " << p.index << ": " << num(p.out_digits, "%.2f")
       << " digits where its inputs' errors, through its conditioning, explain "
       << num(p.explained_digits, "%.2f") << " (value " << num(p.value, "%.6g") << ").</p>";
  } else {
    os << "<p id=\"polluting\">None: no operation lost more than " << num(c.delta)
       << " digits more than its inputs' errors explain through its conditioning.</p>";
  }
  os << "<h2>Instabilities by kind and "
        "site</h2><table><thead><tr><th>kind</th><th>site</th><th>count</th></tr></thead><tbody>";
  for (const auto& s : r.sites)
    os << "<tr><td>" << escape(s.kind) << "</td><td><code>" << escape(s.site)
       << "</code></td><td class=\"n\">" << s.count << "</td></tr>";
  if (r.sites.empty()) os << "<tr><td colspan=\"3\">none</td></tr>";
  os << "</tbody></table>";

  std::vector<svg::Point> wd, loss, rel, lam;
  for (const auto& o : r.ops)
    if (o.phase == Phase::update && o.op == "sgd_w") {
      wd.push_back({static_cast<double>(o.step), "", o.mean, o.layer + " mean", o.layer});
      wd.push_back({static_cast<double>(o.step), "", o.min, o.layer + " min", o.layer});
    }
  for (const auto& s : r.steps) {
    loss.push_back({static_cast<double>(s.step), "", s.loss, "loss", ""});
    rel.push_back({static_cast<double>(s.step), "", s.rel_l1, "rel L1", ""});
    if (!std::isnan(s.lambda)) {
      lam.push_back({static_cast<double>(s.step), "", s.lambda * c.lr, "lr lambda", ""});
      lam.push_back({static_cast<double>(s.step), "", 2.0, "limit 2", ""});
    }
  }
  os << "<h2>Plots</h2><div class=\"plots\">"
     << svg::scatter("weights' digits vs step", wd, {"step"}, {"digits"})
     << svg::scatter("loss vs step", loss, {"step"}, {"loss", true})
     << svg::scatter("rel. L1 between CESTAC samples", rel, {"step"}, {"rel L1", true});
  if (!lam.empty())
    os << svg::scatter("lr * sharpness vs the limit 2", lam, {"step"}, {"lr lambda"});
  os << "</div><h2>Digits per operation and step</h2>" << heatmap(r, full) << "</body></html>\n";
  return os.str();
}

}  // namespace stabfuzz::monitor
