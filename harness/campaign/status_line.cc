// Progress lines that fit the terminal (harness/campaign/status_line.h).
#include "harness/campaign/status_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ostream>

#include "harness/core/console.h"

namespace stabfuzz::campaign {

size_t status_width(bool tty) {
  if (!tty) return kConsoleColumns;
  size_t cols = 0;
  if (const char* env = std::getenv("COLUMNS")) cols = std::strtoul(env, nullptr, 10);
  winsize ws{};
  if (cols == 0 && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0) cols = ws.ws_col;
  if (cols == 0) return kConsoleColumns;
  return std::clamp<size_t>(cols - 1, 20, kConsoleColumns);
}

std::string StatusLine::fit(const std::string& full, const std::string& compact, size_t width) {
  if (full.size() <= width) return full;
  if (compact.size() <= width) return compact;
  return compact.substr(0, width);
}

void StatusLine::show(const std::string& full, const std::string& compact) {
  const std::string line = fit(full, compact, width_);
  if (tty_) {
    os_ << "\r\033[K" << line << std::flush;  // rewrite the line in place
    shown_ = true;
  } else {
    os_ << line << std::endl;
  }
}

void StatusLine::clear() {
  if (shown_) os_ << "\r\033[K" << std::flush;
  shown_ = false;
}

void StatusLine::keep() {
  if (shown_) os_ << std::endl;
  shown_ = false;
}

}  // namespace stabfuzz::campaign
