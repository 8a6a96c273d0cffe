// Inline SVG plots for report.html (reports/svg.cc): escaping, series colours, the scatter plot's
// points, the histogram's bins and the detection matrix's cells.
#include "reports/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace stabfuzz {
namespace {

namespace svg = reports::svg;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Svg, EscapesHtmlSpecialCharacters) {
  EXPECT_EQ(svg::escape("a<b & \"c\">d"), "a&lt;b &amp; &quot;c&quot;&gt;d");
  EXPECT_EQ(svg::escape("plain"), "plain");
}

TEST(Svg, SeriesColoursAreFixedForDtypesAndDetectorsStableForOthers) {
  EXPECT_EQ(svg::series_colour("f64"), "#1f77b4");
  EXPECT_EQ(svg::series_colour("f32"), "#d62728");
  EXPECT_EQ(svg::series_colour("cestac"), "#ff7f0e");
  EXPECT_EQ(svg::series_colour("some/impl"), svg::series_colour("some/impl"));
  EXPECT_EQ(svg::series_colour("some/impl").size(), 7u);
  EXPECT_EQ(svg::series_colour("some/impl")[0], '#');
}

TEST(Svg, ScatterHasOnePointPerValueWithItsTooltip) {
  std::vector<svg::Point> pts(3);
  pts[0] = {1.0, "", 10.0, "f32", "case <1>"};
  pts[1] = {100.0, "", 1e6, "f64", "case 2"};
  pts[2] = {10.0, "", INFINITY, "f32", "case 3"};
  const std::string s = svg::scatter("ULP & size", pts, {"n", true, false}, {"ulp", true, false});
  EXPECT_EQ(s.rfind("<svg class=\"plot\"", 0), 0u) << s.substr(0, 80);
  EXPECT_EQ(count(s, "class=\"pt\""), 3u);
  EXPECT_TRUE(has(s, "<title>case &lt;1&gt;</title>")) << s;
  EXPECT_TRUE(has(s, "ULP &amp; size")) << s;
  EXPECT_TRUE(has(s, svg::series_colour("f64")));
  EXPECT_EQ(s.substr(s.size() - 6), "</svg>");
  EXPECT_EQ(svg::scatter("t", pts, {"x", false, false}, {"y", false, false}, "plot wide")
                .rfind("<svg class=\"plot wide\"", 0),
            0u);
}

TEST(Svg, HistogramCountsUnitBinsClampingOutliers) {
  // Bins [0,1) [1,2) [2,3): -5 clamps into the first, 9 into the last, NaN is left out.
  const std::string h = svg::histogram("digits", {0.5, 1.2, 1.7, 2.0, -5.0, 9.0, NAN}, 0, 3, "d");
  EXPECT_EQ(count(h, "class=\"bar\""), 3u);
  EXPECT_TRUE(has(h, "<title>0 to 1: 2</title>")) << h;
  EXPECT_TRUE(has(h, "<title>1 to 2: 2</title>")) << h;
  EXPECT_TRUE(has(h, "<title>2 to 3: 2</title>")) << h;
  EXPECT_TRUE(has(h, "class=\"plot histogram\""));
}

TEST(Svg, MatrixCellsOnAndOff) {
  const std::string m =
      svg::matrix("detection", {"softmax/no_max", "var/one_pass"}, {"oracle", "cestac"},
                  {{true, true}, {false}});  // a short row: its missing cells are off
  EXPECT_EQ(count(m, "class=\"cell on\""), 2u);
  EXPECT_EQ(count(m, "class=\"cell off\""), 2u);
  EXPECT_TRUE(has(m, "<title>var/one_pass / cestac: not detected</title>")) << m;
  EXPECT_TRUE(has(m, "<title>softmax/no_max / oracle: detected</title>")) << m;
  EXPECT_TRUE(has(m, "class=\"plot matrix\""));
}

}  // namespace
}  // namespace stabfuzz
