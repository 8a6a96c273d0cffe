// The campaign output directory's lock: flock on DIR/campaign.lock, the holder's pid inside.
#include "harness/campaign/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "stabfuzz/errors.h"

namespace stabfuzz::campaign {

namespace fs = std::filesystem;

DirLock::DirLock(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError("cannot create directory " + dir + ": " + ec.message());
  const std::string path = dir + "/campaign.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError("cannot open " + path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    std::string holder(buf, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw InputError(dir + " is in use by a running campaign" +
                       (holder.empty() ? std::string() : " (pid " + holder + ")") +
                       "; wait for it to end, or give another --out");
    throw InputError("cannot lock " + path + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // the pid only names the holder in another campaign's error: the lock holds without it
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the lock
}

}  // namespace stabfuzz::campaign
