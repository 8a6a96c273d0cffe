// Site symbolization (harness/cestac/symbolize.cc): a recorded return address becomes the file:line
// of the call, "?" where no loaded module holds it; the same answer again, and in a forked child.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "stabfuzz/cestac.h"

namespace stabfuzz {
namespace {

using cestac::Kind;

// Records one site here and returns its address (the caller records no other).
uintptr_t recorded_site(int* line) {
  cestac::Run run(1, 1);
  *line = __LINE__ + 1;
  cestac::record(Kind::overflow);
  EXPECT_EQ(run.log().sites.size(), 1u);
  return run.log().sites.empty() ? 0 : run.log().sites[0].address;
}

// A second site, symbolized by no other test.
uintptr_t other_site(int* line) {
  cestac::Run run(1, 1);
  *line = __LINE__ + 1;
  cestac::record(Kind::underflow);
  return run.log().sites.empty() ? 0 : run.log().sites[0].address;
}

TEST(Symbolize, ARecordedSiteNamesTheLineOfTheCall) {
  int line = 0;
  const uintptr_t address = recorded_site(&line);
  ASSERT_NE(address, 0u);
  const std::string where = cestac::symbolize(address);
  EXPECT_EQ(where, "tests/cestac/symbolize_test.cc:" + std::to_string(line));
  EXPECT_EQ(cestac::symbolize(address), where);  // cached, the same
}

TEST(Symbolize, AnAddressOutsideEveryModuleIsUnknown) {
  EXPECT_EQ(cestac::symbolize(0), "?");
  EXPECT_EQ(cestac::symbolize(1), "?");
}

// A forked child (the isolation fork server) starts its own addr2line and gets the same answer.
TEST(Symbolize, AForkedChildResolvesToo) {
  int line = 0;
  const uintptr_t address = recorded_site(&line);
  ASSERT_NE(address, 0u);
  const std::string expected = "tests/cestac/symbolize_test.cc:" + std::to_string(line);
  ASSERT_EQ(cestac::symbolize(address), expected);  // the parent's tool is running
  int other_line = 0;
  const uintptr_t other = other_site(&other_line);
  ASSERT_NE(other, 0u);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    // An address the parent has not cached: resolved by the child's own addr2line.
    const std::string got = cestac::symbolize(other);
    const ssize_t n = ::write(fds[1], got.data(), got.size());
    ::_exit(n == static_cast<ssize_t>(got.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    got.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(got, "tests/cestac/symbolize_test.cc:" + std::to_string(other_line));
}

}  // namespace
}  // namespace stabfuzz
