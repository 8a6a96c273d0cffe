// report.html writer: the page, its tables and the plots it embeds.
#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "reports/catalog.h"
#include "reports/svg.h"

namespace stabfuzz::reports {
namespace {

using svg::escape;

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef;cursor:pointer;user-select:none}th.asc::after{content:" \25B2"}th.desc::after{content:" \25BC"}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fee}tr.ok td{background:#efe}
code{font-size:12px;background:#f4f4f4;padding:1px 3px}
.plots{display:flex;flex-wrap:wrap;gap:10px}
svg.plot{background:#fff;border:1px solid #ddd}
svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#444}
svg .axis{font-size:11px;fill:#222}svg .ptitle{font-size:12px;font-weight:bold;fill:#222}
svg .pt{stroke:#000;stroke-width:.5;fill-opacity:.8}svg .bar{fill:#4a7bd0}
svg .cell.on{fill:#7fd17f}svg .cell.off{fill:#f2b8b8}
.problems{background:#fff4d6;border:1px solid #e0b84c;padding:6px 12px}
.fix{color:#064;min-width:240px}.replay{min-width:420px}td code{word-break:break-all}
)";

// Click a header to sort by it (again: reverse). Cells sort by data-v when present (numbers).
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable').forEach(function (t) {
  t.querySelectorAll('thead th').forEach(function (th, i) {
    th.addEventListener('click', function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.classList.contains('asc') ? -1 : 1;
      t.querySelectorAll('thead th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(dir > 0 ? 'asc' : 'desc');
      var key = function (r) {
        var c = r.cells[i], v = c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent;
        var n = parseFloat(v);
        return isNaN(n) ? v : n;
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  t.setAttribute('data-sortable', 'ready');
});
// report.html#sort=TABLE:COLUMN[:desc] opens with that table sorted (a link to a sorted view).
(function () {
  var m = /^#sort=([A-Za-z0-9_-]+):([0-9]+)(:desc)?$/.exec(location.hash);
  var th = m && document.querySelectorAll('#' + m[1] + ' thead th')[+m[2]];
  if (th) { th.click(); if (m[3]) th.click(); }
})();
)";

// A numeric cell: shown rounded, sorted by value (inf and nan sort as the largest).
std::string ncell(double v, int digits = 3) {
  const double key = std::isnan(v) ? INFINITY : v;
  std::ostringstream os;
  os << "<td class=\"n\" data-v=\""
     << (std::isinf(key) ? (key > 0 ? "Infinity" : "-Infinity") : num(key, 17)) << "\">"
     << num(v, digits) << "</td>";
  return os.str();
}
std::string tcell(const std::string& s) { return "<td>" + escape(s) + "</td>"; }
// A library row's black-box digits (sorted as 99 when absent, like min digits); blank for others.
std::string bb_cell(const ImplSummary& r) {
  if (!r.has_blackbox) return "<td class=\"n\" data-v=\"99\"></td>";
  return r.bb_min_digits ? ncell(*r.bb_min_digits, 2) : "<td class=\"n\" data-v=\"99\">-</td>";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "+") + s;
  return out;
}

void summary_table(std::ostream& os, const RunData& run) {
  os << "<h2>Implementations</h2><table class=\"sortable\" "
        "id=\"summary\"><thead><tr><th>implementation</th>"
        "<th>kind</th><th>dtype</th><th>inputs</th><th>failing</th><th>findings</th><th>oracle</th>"
        "<th>cestac</th><th>max ULP</th><th>max error/tol</th><th>min "
        "digits</th><th>undecidable</th>"
        "<th>bb digits</th><th>verdict</th></tr></thead><tbody>";
  for (const auto& r : run.results) {
    const std::string verdict = verdict_text(r);
    os << "<tr class=\"" << (r.failed() ? "bad" : "ok") << "\">" << tcell(r.impl)
       << tcell(r.impl_kind) << tcell(r.dtype) << ncell(double(r.inputs))
       << ncell(double(r.failing_inputs)) << ncell(double(r.findings))
       << ncell(double(r.oracle_detections)) << ncell(double(r.cestac_detections))
       << ncell(r.max_ulp) << ncell(r.max_error_over_tolerance)
       << (r.min_digits ? ncell(*r.min_digits, 2) : "<td class=\"n\" data-v=\"99\">-</td>")
       << ncell(double(r.undecidable)) << bb_cell(r) << tcell(verdict) << "</tr>";
  }
  os << "</tbody></table>";
}

void findings_table(std::ostream& os, const RunData& run) {
  os << "<h2>Findings</h2><p>Worst first; click a header to sort. Each replay command reproduces "
        "its "
        "finding exactly.</p><table class=\"sortable\" id=\"findings\"><thead><tr><th>#</th>"
        "<th>implementation</th><th>dtype</th><th>kind</th><th>severity</th><th>regime</th><th>ULP "
        "error</th>"
        "<th>error/tol</th><th>cond</th><th>digits</th><th>expected</th><th>max |x|</th><th>n</th>"
        "<th>detectors</th><th>computed / exact</th><th>instability sites</th><th>suggested "
        "fix</th>"
        "<th>replay</th></tr></thead><tbody>";
  std::vector<const Finding*> all;
  for (const auto& f : run.findings) all.push_back(&f);
  std::stable_sort(all.begin(), all.end(),
                   [](const Finding* a, const Finding* b) { return worse(*a, *b); });
  int k = 0;
  for (const Finding* f : all) {
    std::string sites;
    for (const auto& s : f->instabilities)
      sites +=
          escape(s.site) + " " + escape(s.kind) + " &times;" + std::to_string(s.count) + "<br>";
    if (!f->failure.empty())
      sites = escape(f->failure + ": " + f->failure_detail);  // no output to judge
    const Suggestion sug = suggest(*f);
    os << "<tr>" << ncell(++k) << tcell(f->impl) << tcell(f->dtype)
       << tcell(f->kind_detail.empty() ? f->kind : f->kind + " (" + f->kind_detail + ")")
       << "<td data-v=\"" << f->severity_rank() << "\">" << escape(f->severity) << "</td>"
       << tcell(f->regime) << ncell(f->max_ulp) << ncell(f->error_over_tolerance) << ncell(f->cond)
       << (f->has_cestac ? ncell(f->digits, 2) + ncell(f->expected_digits, 2)
                         : "<td>-</td><td>-</td>")
       << ncell(f->magnitude) << ncell(double(f->n)) << tcell(join(f->detectors)) << "<td><code>"
       << escape(f->computed) << "</code><br><code>" << escape(f->exact) << "</code></td><td>"
       << sites << "</td><td class=\"fix\">" << escape(sug.fix)
       << "</td><td class=\"replay\"><code>" << escape(f->replay) << "</code></td></tr>";
  }
  os << "</tbody></table>";
  if (all.empty()) os << "<p>No findings.</p>";
}

std::string point_title(const Finding& f) {
  return f.impl + " " + f.dtype + " case " + std::to_string(f.case_index) + " (" + f.regime +
         "): " + num(f.max_ulp) + " ULP" +
         (f.has_cestac ? ", " + num(f.digits, 2) + " digits" : "") + "\n" + f.replay;
}

void impl_plots(std::ostream& os, const RunData& run) {
  os << "<h2>Error against input magnitude and regime</h2><p>One point per finding (its shrunk "
        "input), coloured by dtype. Digits lost = the digits the conditioning predicts minus the "
        "CESTAC digits. Non-finite ULP errors are drawn in the band marked inf.</p>";
  for (const auto& impl : run.impls()) {
    const auto fs = run.worst_first(impl);
    if (fs.empty()) continue;
    std::vector<svg::Point> ulp_mag, lost_mag, ulp_reg, lost_reg;
    for (const Finding* f : fs) {
      const double ulp = std::isnan(f->max_ulp) ? INFINITY : f->max_ulp;
      const std::string t = point_title(*f);
      ulp_mag.push_back({f->magnitude, "", ulp, f->dtype, t});
      ulp_reg.push_back({0, f->regime, ulp, f->dtype, t});
      if (f->has_cestac) {
        lost_mag.push_back({f->magnitude, "", f->digits_lost(), f->dtype, t});
        lost_reg.push_back({0, f->regime, f->digits_lost(), f->dtype, t});
      }
    }
    const svg::Axis mag{"max |x| of the input", true, false}, reg{"regime", false, true};
    const svg::Axis ulp{"ULP error", true, false}, lost{"digits lost", false, false};
    os << "<h3>" << escape(impl) << " (" << fs.size() << " findings)</h3><div class=\"plots\">"
       << svg::scatter("ULP error vs magnitude", ulp_mag, mag, ulp)
       << svg::scatter("ULP error vs regime", ulp_reg, reg, ulp);
    if (!lost_mag.empty())
      os << svg::scatter("digits lost vs magnitude", lost_mag, mag, lost)
         << svg::scatter("digits lost vs regime", lost_reg, reg, lost);
    os << "</div>";
  }
}

void digits_histogram(std::ostream& os, const RunData& run) {
  std::vector<double> digits;
  for (const auto& f : run.findings)
    if (f.has_cestac) digits.push_back(f.digits);
  os << "<h2>CESTAC digits of the findings</h2><div class=\"plots\">"
     << svg::histogram(
            "CESTAC exact significant digits (" + std::to_string(digits.size()) + " findings)",
            digits, 0, 17, "digits")
     << "</div>";
}

void detection_matrix(std::ostream& os, const json::Value& inject) {
  os << "<h2>Detection matrix (stabfuzz inject)</h2>";
  auto metric = [&](const char* key) {
    const json::Value* v = inject.get(key);
    return v && v->is_number() ? num(v->as_number(), 3) : std::string("-");
  };
  os << "<p>recall " << metric("recall") << ", CESTAC " << metric("recall_cestac") << ", oracle "
     << metric("recall_oracle");
  if (const json::Value* fp = inject.get("false_positive_targets"); fp && fp->is_array()) {
    os << "; false-positive targets: " << fp->as_array().size();
    for (const auto& t : fp->as_array())
      os << " <code>" << escape(t.is_string() ? t.as_string() : json::dump(t)) << "</code>";
  }
  os << "</p>";
  std::vector<std::string> rows;
  std::vector<std::vector<bool>> cells;
  os << "<table class=\"sortable\" id=\"mutants\"><thead><tr><th>mutant</th><th>family</th>"
        "<th>detected</th><th>detector</th><th>inputs to detect</th><th>seconds to detect</th>"
        "</tr></thead><tbody>";
  for (const auto& m : inject.at("mutants").as_array()) {
    auto s = [&](const char* k) {
      const json::Value* v = m.get(k);
      return v && v->is_string() ? v->as_string() : std::string();
    };
    const bool detected =
        m.get("detected") && m.at("detected").is_bool() && m.at("detected").as_bool();
    const std::string det = s("detector");
    rows.push_back(s("id"));
    cells.push_back({detected && (det == "cestac" || det == "both"),
                     detected && (det == "oracle" || det == "both")});
    auto n = [&](const char* k) {
      const json::Value* v = m.get(k);
      if (v && v->is_number()) return ncell(v->as_number());
      return v && v->is_string() ? tcell(v->as_string()) : std::string("<td>-</td>");
    };
    os << "<tr class=\"" << (detected ? "ok" : "bad") << "\">" << tcell(s("id"))
       << tcell(s("family")) << tcell(detected ? "yes" : "NO") << tcell(det)
       << n("inputs_to_detect") << n("seconds_to_detect") << "</tr>";
  }
  os << "</tbody></table><div class=\"plots\">"
     << svg::matrix("mutant x detector", rows, {"cestac", "oracle"}, cells) << "</div>";
}

}  // namespace

std::string render_html(const RunData& run) {
  std::ostringstream os;
  const std::string title = "stabfuzz report: " + run.target + ", seed " + std::to_string(run.seed);
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << escape(title)
     << "</title><style>" << kStyle << "</style></head><body><h1>" << escape(title) << "</h1>";
  long long inputs = 0, failing = 0;
  for (const auto& r : run.results) {
    inputs += r.inputs;
    failing += r.failing_inputs;
  }
  os << "<p>" << run.results.size() << " implementation &times; dtype pairs, " << inputs
     << " inputs, " << failing << " failing, " << run.findings.size() << " findings, "
     << num(run.seconds) << " s. "
     << "A finding means the implementation lost more accuracy than the problem's condition number "
        "explains.</p>";
  if (!run.problems.empty()) {
    os << "<div class=\"problems\" id=\"problems\"><b>" << run.problems.size()
       << " unreadable line(s) skipped</b><ul>";
    for (const auto& p : run.problems) os << "<li><code>" << escape(p) << "</code></li>";
    os << "</ul></div>";
  }
  summary_table(os, run);
  if (run.inject) detection_matrix(os, *run.inject);
  impl_plots(os, run);
  digits_histogram(os, run);
  findings_table(os, run);
  os << "<script>" << kScript << "</script></body></html>\n";
  return os.str();
}

}  // namespace stabfuzz::reports
