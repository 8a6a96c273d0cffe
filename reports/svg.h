// Inline SVG plots for report.html: scatter (log or categorical x), histogram, detection matrix.
#pragma once

#include <string>
#include <vector>

namespace stabfuzz::reports::svg {

struct Point {
  double x = 0;          // numeric axes: the value (log axes take log10 themselves)
  std::string category;  // categorical x axes: the category
  double y = 0;          // may be +inf: drawn in a band above the axis, labelled "inf"
  std::string series;    // colour key (e.g. the dtype)
  std::string title;     // tooltip
};

struct Axis {
  std::string label;
  bool log = false;          // log10 scale (values <= 0 are drawn at the axis' low end)
  bool categorical = false;  // x only: points placed by category, in first-seen order
};

// A scatter plot; `css_class` is set on the <svg> (the browser test counts them).
std::string scatter(const std::string& title, const std::vector<Point>& pts, const Axis& x,
                    const Axis& y, const std::string& css_class = "plot");

// Bars of counts over [lo, hi) in unit-wide bins, labelled by their lower edge.
std::string histogram(const std::string& title, const std::vector<double>& values, int lo, int hi,
                      const std::string& x_label);

// Rows x columns of filled (true) or empty (false) cells.
std::string matrix(const std::string& title, const std::vector<std::string>& rows,
                   const std::vector<std::string>& cols,
                   const std::vector<std::vector<bool>>& cells);

// The colour a series gets (the same in every plot of a page).
std::string series_colour(const std::string& series);

// Text escaped for HTML and SVG.
std::string escape(const std::string& s);

}  // namespace stabfuzz::reports::svg
