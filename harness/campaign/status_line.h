// The progress line of a run or a campaign: on a terminal one line rewritten in place, never wider
// than the terminal (COLUMNS, else the terminal's size) nor 100 columns; elsewhere plain lines.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace stabfuzz::campaign {

// Columns a progress line may take: at most 100; on a terminal one less than its width (the
// COLUMNS environment variable, else the size of standard error's terminal), so that it never
// wraps.
size_t status_width(bool tty);

class StatusLine {
 public:
  StatusLine(std::ostream& os, bool tty, size_t width) : os_(os), tty_(tty), width_(width) {}
  StatusLine(std::ostream& os, bool tty) : StatusLine(os, tty, status_width(tty)) {}

  // Shows `full` when it fits the width, else `compact`, cut to the width if it still does not
  // fit. On a terminal it replaces the line shown; elsewhere it is a line of its own.
  void show(const std::string& full, const std::string& compact);
  // Erases the line shown (a terminal), so that other output starts on a clean line.
  void clear();
  // Ends the line shown with a newline: it stays, and what follows starts below it.
  void keep();

  // What show() prints for these lines at this width (no control characters).
  static std::string fit(const std::string& full, const std::string& compact, size_t width);

 private:
  std::ostream& os_;
  bool tty_;
  size_t width_;
  bool shown_ = false;  // a terminal line is on screen, not ended
};

}  // namespace stabfuzz::campaign
