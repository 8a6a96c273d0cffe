// `stabfuzz fuzz`'s command line (harness/fuzz/fuzz_cli.cc), through the binary: bad input is one
// error line.
#include <gtest/gtest.h>

#include "tests/support/run_binary.h"

namespace stabfuzz {
namespace {

using testing::count_lines;
using testing::run_stabfuzz;

TEST(FuzzCli, BadInputIsOneErrorLine) {
  for (const char* args :
       {"fuzz --target nosuch --runs 10", "fuzz --target softmax --impl softmax/nosuch --runs 10",
        "fuzz --target reference --runs 10", "fuzz --target softmax,var --runs 10",
        "fuzz --target softmax --dtype f8 --runs 10",
        "fuzz --target softmax --feedback magic --runs 10", "fuzz --target softmax",
        "fuzz --target softmax --runs 10 stray"}) {
    const auto r = run_stabfuzz(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("stabfuzz: error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace stabfuzz
