// Allocator settings: large blocks stay in the heap and the heap is not trimmed after each free.
#include "harness/core/memory.h"

#include <malloc.h>

namespace stabfuzz {

void keep_freed_memory() {
  // Blocks below 32 MiB (glibc's largest allowed threshold on 64-bit) come from the heap and are
  // reused; up to 1 GiB of free heap top is kept.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace stabfuzz
