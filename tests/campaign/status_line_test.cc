// Progress lines: at most 100 columns, a compact form at narrower terminals, never wrapping; on a
// terminal rewritten in place and ended with a newline when kept.
#include "harness/campaign/status_line.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

namespace stabfuzz::campaign {
namespace {

const std::string kFull =
    "campaign round 12 (property): units 1234/5678, findings 12345 (12000 in refs/libs), elapsed "
    "12h30m, left 1h05m";  // 110 columns
const std::string kCompact = "round 12 property: 1234/5678 units, 12345 findings, 1h05m left";

TEST(StatusLine, FitsTheWidth) {
  EXPECT_EQ(StatusLine::fit("short", "s", 100), "short");
  EXPECT_EQ(StatusLine::fit(kFull, kCompact, 100), kCompact);  // the full form is too wide
  EXPECT_EQ(StatusLine::fit(kFull, kCompact, 40), kCompact.substr(0, 40));
  EXPECT_EQ(StatusLine::fit(kFull, kFull, 120), kFull);
}

TEST(StatusLine, WidthFromColumnsCappedAt100) {
  EXPECT_EQ(status_width(false), 100u);
  ::setenv("COLUMNS", "60", 1);
  EXPECT_EQ(status_width(true), 59u);  // the last column stays free: no wrap
  ::setenv("COLUMNS", "250", 1);
  EXPECT_EQ(status_width(true), 100u);
  ::unsetenv("COLUMNS");
  EXPECT_LE(status_width(true), 100u);
}

TEST(StatusLine, TerminalLineIsRewrittenThenKeptOnItsOwnLine) {
  std::ostringstream os;
  StatusLine line(os, true, 60);
  line.show("first", "f");
  line.show(kFull, kCompact);
  line.keep();
  os << "summary\n";
  EXPECT_EQ(os.str(), "\r\033[Kfirst\r\033[K" + kCompact.substr(0, 60) + "\nsummary\n");
}

TEST(StatusLine, ClearErasesBeforeOtherOutput) {
  std::ostringstream os;
  StatusLine line(os, true, 100);
  line.show("progress", "p");
  line.clear();
  line.keep();  // nothing shown any more: no empty line
  EXPECT_EQ(os.str(), "\r\033[Kprogress\r\033[K");
}

TEST(StatusLine, LogsGetPlainLines) {
  std::ostringstream os;
  StatusLine line(os, false, 100);
  line.show(kFull, kCompact);
  line.show("short", "s");
  line.keep();
  EXPECT_EQ(os.str(), kCompact + "\nshort\n");
}

}  // namespace
}  // namespace stabfuzz::campaign
