// Process-wide allocator settings for long runs of many same-sized inputs.
#pragma once

namespace stabfuzz {

// Keeps freed memory in the process instead of returning it to the kernel. CESTAC vectors are
// four times their native size (a 4096-value row of Stoch<double> is 128 KiB), which is above
// glibc's default mmap and trim thresholds: every such vector would then be mapped, zeroed by page
// faults and unmapped again, per input. Called once at the start of main.
void keep_freed_memory();

}  // namespace stabfuzz
