// Version and build configuration of this stabfuzz binary.
#pragma once

#include <string>

namespace stabfuzz {

inline constexpr const char* kVersion = "0.1.0";

// e.g. "clang 14.0.6, libfuzzer on, cuda compiled (nvcc 13.0), mpfr 4.2.0"
std::string build_configuration();

// The machine a figure was measured on, e.g. "x86_64, 2 CPUs, Intel(R) Xeon(R) ..., avx512_bf16
// no" (the CPU model and flags from /proc/cpuinfo where the system has it).
std::string machine_description();

// Today in UTC, 2026-12-05: the date a generated results file names.
std::string utc_date();

}  // namespace stabfuzz
