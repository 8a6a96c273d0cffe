// The campaign output directory's lock (campaign.lock).
#pragma once

#include <string>

namespace stabfuzz::campaign {

// The output directory's lock: <out>/campaign.lock, held (flock) for the campaign's life, so that a
// second campaign or --resume on the same directory refuses instead of interleaving its units and
// checkpoints with the first. The kernel drops the lock when the process dies, kill -9 included,
// so a killed campaign never leaves a stale lock behind; the file keeps the holder's pid only to
// name it in the error.
class DirLock {
 public:
  // Creates DIR when missing and locks it; throws InputError naming the holder's pid when another
  // campaign holds it, or the file and the reason when it cannot be opened.
  explicit DirLock(const std::string& dir);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace stabfuzz::campaign
