// SVG plot primitives: axes with decade or linear ticks, points, bars, matrix cells.
#include "reports/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace stabfuzz::reports::svg {
namespace {

constexpr double kW = 360, kH = 270, kLeft = 56, kRight = 12, kTop = 42, kBottom = 64;
constexpr double kLegendY = 30;  // legend row between the title and the plot area
constexpr double kInfBand = 18;  // pixels above the plot area for infinite y values

std::string f1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tick_label(double t, bool log) {
  char b[32];
  if (log)
    std::snprintf(b, sizeof b, "1e%d", static_cast<int>(std::lround(t)));
  else
    std::snprintf(b, sizeof b, "%g", t);
  return b;
}

// Finite transformed values' range, padded so a single value still gets an axis.
struct Range {
  double lo = 0, hi = 1;
  double pos(double t, double a, double b) const { return a + (t - lo) / (hi - lo) * (b - a); }
};

Range range_of(const std::vector<double>& ts, bool log) {
  Range r;
  bool any = false;
  for (double t : ts) {
    if (!std::isfinite(t)) continue;
    r.lo = any ? std::min(r.lo, t) : t;
    r.hi = any ? std::max(r.hi, t) : t;
    any = true;
  }
  if (!any) return {0, 1};
  if (log) {
    r.lo = std::floor(r.lo);
    r.hi = std::ceil(r.hi);
  }
  if (r.hi - r.lo < 1e-9) {
    r.lo -= 1;
    r.hi += 1;
  }
  if (!log) r.lo = std::min(r.lo, 0.0);  // linear axes here count things from 0
  return r;
}

std::vector<double> ticks(const Range& r, bool log) {
  std::vector<double> out;
  const double span = r.hi - r.lo;
  double step =
      log ? std::max(1.0, std::ceil(span / 6)) : std::pow(10, std::floor(std::log10(span / 5)));
  if (!log && span / step > 8) step *= 2;
  if (!log && span / step > 8) step *= 2.5;
  for (double t = std::ceil(r.lo / step) * step; t <= r.hi + 1e-9; t += step) out.push_back(t);
  return out;
}

std::string header(const std::string& title, const std::string& css_class, double w, double h) {
  std::ostringstream os;
  os << "<svg class=\"" << escape(css_class) << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
     << "\" role=\"img\" aria-label=\"" << escape(title) << "\"><title>" << escape(title)
     << "</title>"
     << "<text x=\"" << w / 2 << "\" y=\"16\" text-anchor=\"middle\" class=\"ptitle\">"
     << escape(title) << "</text>";
  return os.str();
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string series_colour(const std::string& series) {
  static const std::map<std::string, std::string> fixed = {
      {"f64", "#1f77b4"},    {"f32", "#d62728"},    {"f16", "#2ca02c"}, {"bf16", "#9467bd"},
      {"cestac", "#ff7f0e"}, {"oracle", "#1f77b4"}, {"both", "#2ca02c"}};
  if (auto it = fixed.find(series); it != fixed.end()) return it->second;
  static const char* palette[] = {"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  size_t h = 0;
  for (char c : series) h = h * 31 + static_cast<unsigned char>(c);
  return palette[h % 5];
}

std::string scatter(const std::string& title, const std::vector<Point>& pts, const Axis& x,
                    const Axis& y, const std::string& css_class) {
  const double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop + kInfBand;
  auto tx = [&](double v) -> double {
    if (!x.log) return v;
    return v > 0 && std::isfinite(v) ? std::log10(v) : NAN;
  };
  auto ty = [&](double v) -> double {
    if (std::isinf(v) && v > 0) return INFINITY;
    if (!y.log) return v;
    return v > 0 ? std::log10(v) : NAN;
  };
  std::vector<std::string> cats;
  std::vector<double> xs, ys;
  for (const auto& p : pts) {
    if (x.categorical) {
      if (std::find(cats.begin(), cats.end(), p.category) == cats.end()) cats.push_back(p.category);
    } else {
      xs.push_back(tx(p.x));
    }
    ys.push_back(ty(p.y));
  }
  Range rx = range_of(xs, x.log), ry = range_of(ys, y.log);
  if (x.log) rx.lo -= 0.5;  // room for values <= 0, drawn at the low end
  if (y.log) ry.lo = std::min(ry.lo, 0.0);
  std::ostringstream os;
  os << header(title, css_class, kW, kH);
  os << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\""
     << y0 - y1 << "\" class=\"frame\"/>";
  // Axes: ticks and labels.
  for (double t : ticks(ry, y.log)) {
    const double py = ry.pos(t, y0, y1);
    os << "<line x1=\"" << x0 << "\" x2=\"" << x1 << "\" y1=\"" << f1(py) << "\" y2=\"" << f1(py)
       << "\" class=\"grid\"/><text x=\"" << x0 - 4 << "\" y=\"" << f1(py + 4)
       << "\" text-anchor=\"end\" class=\"tick\">" << tick_label(t, y.log) << "</text>";
  }
  os << "<text x=\"" << x0 - 4 << "\" y=\"" << kTop + 9
     << "\" text-anchor=\"end\" class=\"tick\">inf</text>";
  if (x.categorical) {
    const double slot = (x1 - x0) / std::max<size_t>(1, cats.size());
    for (size_t i = 0; i < cats.size(); ++i) {
      std::string label = cats[i].size() > 14 ? cats[i].substr(0, 13) + "." : cats[i];
      // Slanted, so neighbouring names do not overlap.
      os << "<text transform=\"translate(" << f1(x0 + slot * (i + 0.5) + 3) << "," << y0 + 10
         << ") rotate(-30)\" text-anchor=\"end\" class=\"tick\"><title>" << escape(cats[i])
         << "</title>" << escape(label) << "</text>";
    }
  } else {
    for (double t : ticks(rx, x.log)) {
      const double px = rx.pos(t, x0, x1);
      os << "<line x1=\"" << f1(px) << "\" x2=\"" << f1(px) << "\" y1=\"" << y1 << "\" y2=\"" << y0
         << "\" class=\"grid\"/><text x=\"" << f1(px) << "\" y=\"" << y0 + 14
         << "\" text-anchor=\"middle\" class=\"tick\">" << tick_label(t, x.log) << "</text>";
    }
  }
  os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << kH - 8
     << "\" text-anchor=\"middle\" class=\"axis\">" << escape(x.label)
     << "</text><text transform=\"translate(13," << (y0 + y1) / 2
     << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">" << escape(y.label) << "</text>";
  // Points; categorical ones spread sideways in a fixed pattern so equal values stay visible.
  std::map<std::string, int> seen;
  for (size_t i = 0; i < pts.size(); ++i) {
    const Point& p = pts[i];
    double px;
    if (x.categorical) {
      const double slot = (x1 - x0) / std::max<size_t>(1, cats.size());
      const size_t c = std::find(cats.begin(), cats.end(), p.category) - cats.begin();
      const int k = seen[p.category]++;
      px = x0 + slot * (c + 0.5) + ((k * 7) % 11 - 5) / 5.0 * slot * 0.3;
    } else {
      const double t = xs[i];
      px = std::isfinite(t) ? rx.pos(t, x0, x1) : x0 + 3;
    }
    const double t = ys[i];
    const double py = std::isinf(t) ? kTop + 6 : std::isfinite(t) ? ry.pos(t, y0, y1) : y0 - 3;
    os << "<circle cx=\"" << f1(px) << "\" cy=\"" << f1(py) << "\" r=\"3.5\" fill=\""
       << series_colour(p.series) << "\" class=\"pt\"><title>" << escape(p.title)
       << "</title></circle>";
  }
  // Legend: one swatch per series.
  std::vector<std::string> series;
  for (const auto& p : pts)
    if (std::find(series.begin(), series.end(), p.series) == series.end())
      series.push_back(p.series);
  double lx = x0 + 4;
  for (const auto& s : series) {
    os << "<circle cx=\"" << lx + 4 << "\" cy=\"" << kLegendY << "\" r=\"4\" fill=\""
       << series_colour(s) << "\"/><text x=\"" << lx + 11 << "\" y=\"" << kLegendY + 4
       << "\" class=\"tick\">" << escape(s) << "</text>";
    lx += 16 + 7 * static_cast<double>(s.size());
  }
  if (pts.empty())
    os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << (y0 + y1) / 2
       << "\" text-anchor=\"middle\" class=\"tick\">no data</text>";
  os << "</svg>";
  return os.str();
}

std::string histogram(const std::string& title, const std::vector<double>& values, int lo, int hi,
                      const std::string& x_label) {
  const int bins = std::max(1, hi - lo);
  std::vector<int> counts(static_cast<size_t>(bins), 0);
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const int b = static_cast<int>(std::clamp(std::floor(v) - lo, 0.0, double(bins - 1)));
    ++counts[static_cast<size_t>(b)];
  }
  const int top = std::max(1, *std::max_element(counts.begin(), counts.end()));
  const double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop;
  const double bw = (x1 - x0) / bins;
  std::ostringstream os;
  os << header(title, "plot histogram", kW, kH);
  os << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\""
     << y0 - y1 << "\" class=\"frame\"/>";
  for (int b = 0; b < bins; ++b) {
    const double h = (y0 - y1) * counts[static_cast<size_t>(b)] / top;
    os << "<rect class=\"bar\" x=\"" << f1(x0 + b * bw + 1) << "\" y=\"" << f1(y0 - h)
       << "\" width=\"" << f1(bw - 2) << "\" height=\"" << f1(h) << "\"><title>" << lo + b << " to "
       << lo + b + 1 << ": " << counts[static_cast<size_t>(b)] << "</title></rect>";
    if (counts[static_cast<size_t>(b)])
      os << "<text x=\"" << f1(x0 + (b + 0.5) * bw) << "\" y=\"" << f1(y0 - h - 3)
         << "\" text-anchor=\"middle\" class=\"tick\">" << counts[static_cast<size_t>(b)]
         << "</text>";
    if ((b % (bins > 12 ? 2 : 1)) == 0)
      os << "<text x=\"" << f1(x0 + b * bw) << "\" y=\"" << y0 + 14
         << "\" text-anchor=\"middle\" class=\"tick\">" << lo + b << "</text>";
  }
  os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << kH - 8
     << "\" text-anchor=\"middle\" class=\"axis\">" << escape(x_label)
     << "</text><text transform=\"translate(13," << (y0 + y1) / 2
     << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">findings</text></svg>";
  return os.str();
}

std::string matrix(const std::string& title, const std::vector<std::string>& rows,
                   const std::vector<std::string>& cols,
                   const std::vector<std::vector<bool>>& cells) {
  size_t label_chars = 8;
  for (const auto& r : rows) label_chars = std::max(label_chars, r.size());
  const double lw = 12 + 6.5 * static_cast<double>(label_chars), cw = 70, ch = 20, top = 46;
  const double w = lw + cw * static_cast<double>(cols.size()) + 10;
  const double h = top + ch * static_cast<double>(rows.size()) + 10;
  std::ostringstream os;
  os << header(title, "plot matrix", w, h);
  for (size_t c = 0; c < cols.size(); ++c)
    os << "<text x=\"" << f1(lw + cw * (c + 0.5)) << "\" y=\"" << top - 8
       << "\" text-anchor=\"middle\" class=\"axis\">" << escape(cols[c]) << "</text>";
  for (size_t r = 0; r < rows.size(); ++r) {
    const double y = top + ch * static_cast<double>(r);
    os << "<text x=\"" << lw - 6 << "\" y=\"" << f1(y + 14)
       << "\" text-anchor=\"end\" class=\"tick\">" << escape(rows[r]) << "</text>";
    for (size_t c = 0; c < cols.size(); ++c) {
      const bool on = r < cells.size() && c < cells[r].size() && cells[r][c];
      os << "<rect x=\"" << f1(lw + cw * c + 1) << "\" y=\"" << f1(y + 1) << "\" width=\"" << cw - 2
         << "\" height=\"" << ch - 2 << "\" class=\"" << (on ? "cell on" : "cell off")
         << "\"><title>"
         << escape(rows[r] + " / " + cols[c] + (on ? ": detected" : ": not detected"))
         << "</title></rect>"
         << "<text x=\"" << f1(lw + cw * (c + 0.5)) << "\" y=\"" << f1(y + 14)
         << "\" text-anchor=\"middle\" class=\"tick\">" << (on ? "detected" : "-") << "</text>";
    }
  }
  os << "</svg>";
  return os.str();
}

}  // namespace stabfuzz::reports::svg
