// The libraries' registration (libs/libraries.cc): every catalog entry registered or listed with a
// reason, where a module is looked for, and whether AddressSanitizer runs.
#include "libs/libraries.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "tests/support/asan.h"

namespace stabfuzz::libs {
namespace {

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

constexpr const char* kEnv = "STABFUZZ_LIBRARIES_TEST_MODULE";

TEST(RegisterLibraries, EveryCatalogEntryIsRegisteredOrListedOnceWithAReason) {
  for (const auto& catalog :
       {onednn_catalog(), onednn3_catalog(), blas_catalog(), mkl_catalog(), torch_catalog()})
    for (const auto& entry : catalog) {
      SCOPED_TRACE(entry.id);
      const auto [f, t] = default_registry().find_target(entry.id);
      int listed = 0;
      for (const auto& u : default_registry().unavailable())
        if (u.id == entry.id) {
          ++listed;
          EXPECT_FALSE(u.reason.empty());
        }
      if (t) {
        EXPECT_EQ(listed, 0);
        EXPECT_EQ(f->name, entry.family);
        EXPECT_EQ(t->kind, TargetKind::library);
      } else {
        EXPECT_EQ(listed, 1);
      }
    }
}

TEST(ModulePath, TheEnvironmentVariableWins) {
  ScopedEnv env(kEnv, "/some/where/libmodule.so");
  EXPECT_EQ(module_path(kEnv, "libmodule.so"), "/some/where/libmodule.so");
}

TEST(ModulePath, ElseNextToTheBinaryThenOneLevelUp) {
  unsetenv(kEnv);
  const std::string self = self_path();
  const std::string dir = self.substr(0, self.rfind('/') + 1);
  ASSERT_FALSE(dir.empty());
  // This test binary lies next to itself.
  EXPECT_EQ(module_path(kEnv, self.substr(dir.size()).c_str()), self);
  {
    ScopedEnv empty(kEnv, "");  // an empty variable counts as unset
    EXPECT_EQ(module_path(kEnv, self.substr(dir.size()).c_str()), self);
  }
  // build/bin/<test>: CMakeCache.txt lies one level up, in build/.
  const std::string parent = dir.substr(0, dir.rfind('/', dir.size() - 2) + 1);
  ASSERT_EQ(access((parent + "CMakeCache.txt").c_str(), R_OK), 0) << parent;
  EXPECT_EQ(module_path(kEnv, "CMakeCache.txt"), parent + "CMakeCache.txt");
  // Nowhere: the path next to the binary, for the error to name.
  EXPECT_EQ(module_path(kEnv, "libstabfuzz_nosuch.so"), dir + "libstabfuzz_nosuch.so");
}

TEST(AsanRunning, SaysWhetherThisProcessRunsAddressSanitizer) {
#ifdef STABFUZZ_TEST_ASAN
  EXPECT_TRUE(asan_running());
#else
  EXPECT_FALSE(asan_running());
#endif
}

}  // namespace
}  // namespace stabfuzz::libs
