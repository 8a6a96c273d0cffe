// The extra-counter section and the mapping of a verdict onto its cells.
#include "harness/fuzz/feedback.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace stabfuzz::fuzz {
namespace {

constexpr size_t kRatioBase = 1;
constexpr size_t kDigitBase = kRatioBase + 4 * kRegimeSlots * kRatioBuckets;
constexpr size_t kSiteBase = kDigitBase + 4 * kRegimeSlots * kDigitBuckets;
constexpr size_t kCells = kSiteBase + kSiteCells;

// libFuzzer finds this section by its name (__start_/__stop_ symbols); `used` keeps it when
// nothing else reads it. Written with 1, never incremented: one feature per cell.
__attribute__((section("__libfuzzer_extra_counters"), used)) uint8_t g_counters[kCells];

size_t slot(DType d, size_t regime) {
  return static_cast<size_t>(d) * kRegimeSlots + regime % kRegimeSlots;
}

}  // namespace

size_t ratio_bucket(const Verdict& v) {
  if (v.undecidable) return kRatioBuckets - 1;
  if (v.nonfinite || !std::isfinite(v.max_ratio)) return kRatioBuckets - 2;
  if (v.max_ratio <= 0) return 0;
  const double b = std::floor(std::log2(v.max_ratio)) + 40;
  return static_cast<size_t>(std::clamp(b, 0.0, double(kRatioBuckets - 3)));
}

size_t digits_bucket(const Verdict& v) {
  const double b = std::floor(2 * v.digits_deficit) + 16;  // deficit from -8 digits up
  if (!std::isfinite(b)) return kDigitBuckets - 1;
  return static_cast<size_t>(std::clamp(b, 0.0, double(kDigitBuckets - 1)));
}

void begin_execution() {
  std::memset(g_counters, 0, sizeof g_counters);
  g_counters[0] = 1;
}

// Cumulative cells: an input sets the cells of every bucket up to its own, so that it brings a new
// feature only when it goes past the largest error (or deficit, or instability count) reached
// before in its slot. Single cells would reward every bucket not seen yet, smaller errors
// included, and the corpus would fill with inputs that climb nowhere.
void record(Feedback mode, const Verdict& v, DType d, size_t regime) {
  if (mode != Feedback::error) return;
  const size_t s = slot(d, regime);
  uint8_t* ratio = g_counters + kRatioBase + s * kRatioBuckets;
  const size_t rb = ratio_bucket(v);
  if (rb == kRatioBuckets - 1) {
    ratio[rb] = 1;  // undecidable: a bucket of its own
  } else {
    std::memset(ratio, 1, rb + 1);  // a non-finite output lies above every finite ratio
  }
  if (v.has_cestac) {
    std::memset(g_counters + kDigitBase + s * kDigitBuckets, 1, digits_bucket(v) + 1);
    for (const auto& site : v.log.sites) {
      // Kind x site x order of magnitude of the count, up to the count's own: more instabilities
      // at a site is progress.
      const uint64_t h = cestac::mix64(static_cast<uint64_t>(site.address) * 31 +
                                       static_cast<uint64_t>(site.kind) * 0x9e3779b97f4a7c15ULL);
      for (uint64_t m = 1; m <= static_cast<uint64_t>(std::bit_width(site.count)); ++m)
        g_counters[kSiteBase + (h + m * 0x9e3779b97f4a7c15ULL) % kSiteCells] = 1;
    }
  }
}

size_t cells_set() {
  size_t n = 0;
  for (uint8_t c : g_counters) n += c != 0;
  return n;
}

}  // namespace stabfuzz::fuzz
