// Durations and timestamps as the command line and progress lines write them.
#include "harness/core/duration.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>

#include "stabfuzz/errors.h"

namespace stabfuzz {

double parse_duration(const std::string& text, const std::string& flag) {
  const auto bad = [&] {
    return InputError(flag + " '" + text + "' is not a duration (90 or 90s, 5m, 2h, 1h30m)");
  };
  if (text.empty()) throw bad();
  double total = 0;
  size_t i = 0;
  bool any_unit = false;
  while (i < text.size()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used == 0 || !std::isfinite(v) || v < 0 || text[i] == '+' || text[i] == '-') throw bad();
    i += used;
    double unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        default:
          throw bad();
      }
      ++i;
      any_unit = true;
    } else if (any_unit) {
      throw bad();  // "1h30": say 1h30m
    }
    total += v * unit;
  }
  return total;
}

namespace {
std::string now_formatted(const char* format, bool utc) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (utc) {
    gmtime_r(&now, &tm);
  } else {
    localtime_r(&now, &tm);
  }
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}
}  // namespace

std::string local_timestamp() { return now_formatted("%Y%m%d-%H%M%S", false); }

std::string format_duration(double seconds) {
  char buf[64];
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", m / 60, m % 60);
  }
  return buf;
}

}  // namespace stabfuzz
