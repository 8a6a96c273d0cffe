// `stabfuzz monitor train|sweep` (harness/monitor/command.cc): bad settings are one error line.
#include <gtest/gtest.h>

#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::run_stabfuzz;
using testing::slurp;

TEST(MonitorCliTest, BadInputIsOneErrorLine) {
  for (const char* args :
       {"monitor", "monitor fly", "monitor train --model rnn --steps 1",
        "monitor train --data mnist --steps 1", "monitor train --loss hinge --steps 1",
        "monitor train --lr -1 --steps 1", "monitor sweep --lr-grid 0.1,x --steps 1",
        "monitor train --precision f16 --steps 1"}) {
    const auto r = run_stabfuzz(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err.rfind("stabfuzz: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace stabfuzz
