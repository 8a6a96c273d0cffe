// report.html writer: the page, its tables and the plots it embeds.
#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "reports/catalog.h"
#include "reports/svg.h"

namespace stabfuzz::reports {
namespace {

using svg::escape;

// Tables fit the window: cells wrap anywhere, so no column forces a horizontal scroll bar; in a
// window narrower than the table needs (1000 px for .cards, 1360 px for the 18 columns of a .wide
// findings table) each row becomes a block of "header: value" lines.
constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px;max-width:100%}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#eef;cursor:pointer;user-select:none}th.asc::after{content:" \25B2"}th.desc::after{content:" \25BC"}
th{overflow-wrap:normal}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.bad td{background:#fee}tr.ok td{background:#efe}
code{font-size:12px;background:#f4f4f4;padding:1px 3px}td code{word-break:break-all}
small.why{display:block;color:#555}
.plots{display:flex;flex-wrap:wrap;gap:10px}
svg.plot{background:#fff;border:1px solid #ddd;max-width:100%;height:auto}
svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{font-size:10px;fill:#444}
svg .axis{font-size:11px;fill:#222}svg .ptitle{font-size:12px;font-weight:bold;fill:#222}
svg .pt{stroke:#000;stroke-width:.5;fill-opacity:.8}svg .bar{fill:#4a7bd0}
svg .cell.on{fill:#7fd17f}svg .cell.off{fill:#f2b8b8}
.problems{background:#fff4d6;border:1px solid #e0b84c;padding:6px 12px}
.fix{color:#064}button.copy{font-size:11px;margin-left:4px;cursor:pointer}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}
@media (max-width:1000px){body{margin:10px}}
)";

// Below `width` px, each row of a table of class `cls` is a block of "header: value" lines.
std::string cards_below(int width, const std::string& cls) {
  const std::string t = "table." + cls;
  return "@media (max-width:" + std::to_string(width) + "px){" + t + " thead{display:none}" + t +
         "," + t + " tbody," + t + " tr," + t + " td{display:block}" + t +
         " tr{border:1px solid #bbb;margin:0 0 10px}" + t +
         " td{border:none;padding:1px 6px;text-align:left}" + t +
         " td::before{content:attr(data-label) \": \";font-weight:600;color:#555}}\n";
}

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
// A replay line's copy button: the clipboard, or the text selected where the clipboard is denied.
document.querySelectorAll('button.copy').forEach(function (b) {
  b.addEventListener('click', function () {
    var code = b.previousElementSibling, select = function () {
      var r = document.createRange(), s = window.getSelection();
      r.selectNodeContents(code); s.removeAllRanges(); s.addRange(r);
      try { document.execCommand('copy'); } catch (e) {}
    };
    if (navigator.clipboard) navigator.clipboard.writeText(code.textContent).catch(select);
    else select();
    b.textContent = 'copied';
  });
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

// Gives each <td> of `cells` its column's header as data-label (the narrow layout shows it).
std::string labelled(const std::string& cells, const std::vector<std::string>& heads) {
  std::string out;
  size_t col = 0, from = 0;
  for (size_t p = cells.find("<td"); p != std::string::npos; p = cells.find("<td", p + 3)) {
    const char next = p + 3 < cells.size() ? cells[p + 3] : '\0';
    if (next != ' ' && next != '>') continue;
    out.append(cells, from, p + 3 - from);
    if (col < heads.size()) out += " data-label=\"" + escape(heads[col]) + "\"";
    ++col;
    from = p + 3;
  }
  return out + cells.substr(from);
}

std::string thead(const std::vector<std::string>& heads) {
  std::string out = "<thead><tr>";
  for (const auto& h : heads) out += "<th>" + escape(h) + "</th>";
  return out + "</tr></thead>";
}

// The verdict and, under it, why: what failed, or why a large ULP error is still ok.
std::string verdict_cell(const ImplSummary& r) {
  std::string why;
  const std::string ratio = "worst error/tolerance " + num(r.max_error_over_tolerance, 3);
  if (r.injected())
    why = r.failing_inputs ? std::to_string(r.failing_inputs) + " of " + std::to_string(r.inputs) +
                                 " inputs exposed the planted bug"
                           : "no input exposed the planted bug";
  else if (r.failed())
    why = std::to_string(r.failing_inputs) + " of " + std::to_string(r.inputs) +
          " inputs failed; " + ratio;
  else if (r.failing_inputs > 0)
    why =
        "its failing inputs are of kinds outside --fail-on (a policy, such as flushing "
        "subnormals)";
  else if (r.max_ulp > 16)
    why =
        "max ULP " + num(r.max_ulp) +
        " is explained by the conditioning: every error is within tolerance x condition number (" +
        ratio + ")";
  else
    why = "every input within tolerance (" + ratio + ")";
  return "<td>" + escape(verdict_text(r)) + "<small class=\"why\">" + escape(why) + "</small></td>";
}

// `planted`: the injected rows, else the reference and library ones.
void summary_table(std::ostream& os, const RunData& run, bool planted) {
  const std::vector<std::string> heads = {
      "implementation", "kind",        "dtype",     "inputs",  "failing",
      "findings",       "oracle",      "cestac",    "max ULP", "max error/tol",
      "min digits",     "undecidable", "bb digits", "verdict"};
  os << "<table class=\"sortable cards\" id=\"" << (planted ? "planted-summary" : "summary")
     << "\">" << thead(heads) << "<tbody>";
  for (const auto& r : run.results) {
    if (r.injected() != planted) continue;
    std::ostringstream cells;
    cells << tcell(r.impl) << tcell(r.impl_kind) << tcell(r.dtype) << ncell(double(r.inputs))
          << ncell(double(r.failing_inputs)) << ncell(double(r.findings))
          << ncell(double(r.oracle_detections)) << ncell(double(r.cestac_detections))
          << ncell(r.max_ulp) << ncell(r.max_error_over_tolerance)
          << (r.min_digits ? ncell(*r.min_digits, 2) : "<td class=\"n\" data-v=\"99\">-</td>")
          << ncell(double(r.undecidable)) << bb_cell(r) << verdict_cell(r);
    os << "<tr class=\"" << (r.failed() ? "bad" : "ok") << "\">" << labelled(cells.str(), heads)
       << "</tr>";
  }
  os << "</tbody></table>";
}

// Where a finding kind sorts: kFindingKinds order, unknown kinds last.
size_t kind_rank(const std::string& kind) {
  size_t k = 0;
  for (const char* name : kFindingKinds) {
    if (kind == name) return k;
    ++k;
  }
  return k;
}

// The findings table `id` of the findings in `fs`, in that order.
void findings_table(std::ostream& os, const std::vector<const Finding*>& fs, const char* id) {
  const std::vector<std::string> heads = {"#",
                                          "implementation",
                                          "dtype",
                                          "kind",
                                          "severity",
                                          "regime",
                                          "ULP error",
                                          "error/tol",
                                          "cond",
                                          "digits",
                                          "expected",
                                          "max |x|",
                                          "n",
                                          "detectors",
                                          "computed / exact",
                                          "instability sites",
                                          "suggested fix",
                                          "replay"};
  os << "<table class=\"sortable wide\" id=\"" << id << "\">" << thead(heads) << "<tbody>";
  int k = 0;
  for (const Finding* f : fs) {
    std::string sites;
    for (const auto& s : f->instabilities)
      sites +=
          escape(s.site) + " " + escape(s.kind) + " &times;" + std::to_string(s.count) + "<br>";
    if (!f->failure.empty())
      sites = escape(f->failure + ": " + f->failure_detail);  // no output to judge
    const Suggestion sug = suggest(*f);
    std::ostringstream cells;
    cells << ncell(++k) << tcell(f->impl) << tcell(f->dtype)
          << tcell(f->kind_detail.empty() ? f->kind : f->kind + " (" + f->kind_detail + ")")
          << "<td data-v=\"" << f->severity_rank() << "\">" << escape(f->severity) << "</td>"
          << tcell(f->regime) << ncell(f->max_ulp) << ncell(f->error_over_tolerance)
          << ncell(f->cond)
          << (f->has_cestac ? ncell(f->digits, 2) + ncell(f->expected_digits, 2)
                            : "<td>-</td><td>-</td>")
          << ncell(f->magnitude) << ncell(double(f->n)) << tcell(join(f->detectors)) << "<td><code>"
          << escape(f->computed) << "</code><br><code>" << escape(f->exact) << "</code></td><td>"
          << sites << "</td><td class=\"fix\">" << escape(sug.fix)
          << "</td><td class=\"replay\"><code>" << escape(f->replay)
          << "</code><button class=\"copy\" type=\"button\">copy</button></td>";
    os << "<tr>" << labelled(cells.str(), heads) << "</tr>";
  }
  os << "</tbody></table>";
}

// What a maintainer came for: the reference and library findings, grouped by kind, worst first.
void claiming_findings(std::ostream& os, const RunData& run) {
  std::vector<const Finding*> fs;
  std::map<std::string, long long> per_kind;
  for (const auto& f : run.findings)
    if (f.impl_kind != "injected") {
      fs.push_back(&f);
      ++per_kind[f.kind];
    }
  std::stable_sort(fs.begin(), fs.end(), [](const Finding* a, const Finding* b) {
    const size_t ka = kind_rank(a->kind), kb = kind_rank(b->kind);
    return ka != kb ? ka < kb : worse(*a, *b);
  });
  os << "<h2 id=\"act\">Findings in reference and library implementations</h2>";
  if (fs.empty()) {
    os << "<p>None: no reference or library implementation lost more accuracy than the "
          "conditioning explains on these inputs.</p>";
    return;
  }
  os << "<p>" << fs.size() << " findings: " << escape(kinds_text(per_kind))
     << ". Grouped by kind, worst first; click a header to sort. Each replay command reproduces "
        "its "
        "finding exactly.</p>";
  findings_table(os, fs, "findings");
}

void detection_matrix(std::ostream& os, const json::Value& inject);

// The planted bugs (stabfuzz's own injected targets): how well they were detected, collapsed.
void planted_section(std::ostream& os, const RunData& run) {
  long long pairs = 0, detected = 0;
  for (const auto& r : run.results)
    if (r.injected()) {
      ++pairs;
      detected += r.failing_inputs > 0;
    }
  std::vector<const Finding*> fs;
  for (const auto& f : run.findings)
    if (f.impl_kind == "injected") fs.push_back(&f);
  if (pairs == 0 && fs.empty() && !run.inject) return;
  std::stable_sort(fs.begin(), fs.end(),
                   [](const Finding* a, const Finding* b) { return worse(*a, *b); });
  os << "<h2 id=\"planted-bugs\">Planted bugs</h2><p>Injected implementations carry a known bug "
        "on purpose: their findings measure stabfuzz's detectors, not a library.</p>"
     << "<details><summary>" << detected << " of " << pairs
     << " planted implementation &times; dtype pairs detected; " << fs.size()
     << " findings</summary>";
  if (run.inject) detection_matrix(os, *run.inject);
  summary_table(os, run, true);
  if (!fs.empty()) findings_table(os, fs, "planted");
  os << "</details>";
}

std::string point_title(const Finding& f) {
  return f.impl + " " + f.dtype + " case " + std::to_string(f.case_index) + " (" + f.regime +
         "): " + num(f.max_ulp) + " ULP" +
         (f.has_cestac ? ", " + num(f.digits, 2) + " digits" : "") + "\n" + f.replay;
}

void impl_plots(std::ostream& os, const RunData& run) {
  os << "<h3>Error against input magnitude and regime</h3><p>One point per finding (its shrunk "
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
    os << "<h4>" << escape(impl) << " (" << fs.size() << " findings)</h4><div class=\"plots\">"
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
  os << "<h3>CESTAC digits of the findings</h3><div class=\"plots\">"
     << svg::histogram(
            "CESTAC exact significant digits (" + std::to_string(digits.size()) + " findings)",
            digits, 0, 17, "digits")
     << "</div>";
}

void detection_matrix(std::ostream& os, const json::Value& inject) {
  os << "<h3>Detection matrix (stabfuzz inject)</h3>";
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
     << "</title><style>" << kStyle << cards_below(1000, "cards") << cards_below(1360, "wide")
     << "</style></head><body><h1>" << escape(title) << "</h1>";
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
  claiming_findings(os, run);
  os << "<h2>Reference and library implementations</h2>";
  if (std::any_of(run.results.begin(), run.results.end(),
                  [](const ImplSummary& r) { return !r.injected(); }))
    summary_table(os, run, false);
  else
    os << "<p>None in this run.</p>";
  planted_section(os, run);
  os << "<h2>Plots</h2><details><summary>Error against input magnitude and regime, per "
        "implementation; CESTAC digits</summary>";
  impl_plots(os, run);
  digits_histogram(os, run);
  os << "</details>";
  os << "<script>" << kScript << "</script></body></html>\n";
  return os.str();
}

}  // namespace stabfuzz::reports
