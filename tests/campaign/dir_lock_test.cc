// The campaign directory's lock (harness/campaign/dir_lock.cc): created with its directory, held
// against a second holder, released with its owner.
#include "harness/campaign/dir_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "stabfuzz/errors.h"
#include "tests/support/run_binary.h"

namespace stabfuzz::campaign {
namespace {

TEST(DirLock, SecondHolderIsRefusedUntilTheFirstIsGone) {
  const std::string dir = testing::temp_dir("out/nested");
  {
    std::optional<DirLock> first;
    first.emplace(dir);
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/campaign.lock"));
    try {
      DirLock second(dir);
      ADD_FAILURE() << "a second lock on " << dir << " was granted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(::getpid())), std::string::npos)
          << e.what();
    }
    first.reset();
    EXPECT_NO_THROW(DirLock again(dir));
  }
}

TEST(DirLock, UnusableDirectoryIsAnInputError) {
  const std::string file = testing::temp_dir("") + "/plain";
  { std::ofstream(file) << "x"; }
  EXPECT_THROW(DirLock lock(file + "/sub"), InputError);
}

}  // namespace
}  // namespace stabfuzz::campaign
