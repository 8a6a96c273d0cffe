// report.html: one self-contained page (inline CSS, JS and SVG; nothing fetched) for a run.
#pragma once

#include <string>

#include "reports/run_data.h"

namespace stabfuzz::reports {

// Summary and findings tables (sortable by clicking a header), per implementation the ULP error
// and CESTAC digits lost against input magnitude and regime, a histogram of CESTAC digits, and for
// `stabfuzz inject` runs the mutant x detector detection matrix.
std::string render_html(const RunData& run);

}  // namespace stabfuzz::reports
