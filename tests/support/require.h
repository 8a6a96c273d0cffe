// Optional parts a test depends on (a library built in, a browser, a compiler, a GPU): a test whose
// part is missing skips, saying why, unless the environment variable STABFUZZ_REQUIRE names that
// part (a comma-separated list, or "all"): then it fails, so a CI configured to have the part
// cannot pass without testing it. ci/test sets STABFUZZ_REQUIRE to what ci/bootstrap installs.
//
// Parts: onednn, blas, mkl, torch, chromium, slurm, gcc, gpu, threads.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

namespace stabfuzz::testing {

// True when STABFUZZ_REQUIRE lists `part` (or is "all").
inline bool required(std::string_view part) {
  const char* env = std::getenv("STABFUZZ_REQUIRE");
  if (!env) return false;
  std::stringstream ss(env);
  for (std::string item; std::getline(ss, item, ',');)
    if (item == "all" || item == part) return true;
  return false;
}

}  // namespace stabfuzz::testing

// Skips the test (GTEST_SKIP) with `why`, or fails it when the part is required.
#define STABFUZZ_SKIP_UNLESS_REQUIRED(part, why)                                     \
  do {                                                                               \
    std::ostringstream stabfuzz_why_;                                                \
    stabfuzz_why_ << why;                                                            \
    if (::stabfuzz::testing::required(part))                                         \
      GTEST_FAIL() << "missing part '" << (part)                                     \
                   << "', which STABFUZZ_REQUIRE requires: " << stabfuzz_why_.str(); \
    GTEST_SKIP() << stabfuzz_why_.str();                                             \
  } while (0)
