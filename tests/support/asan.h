// STABFUZZ_TEST_ASAN: defined to 1 when the test is built with AddressSanitizer (clang's
// __has_feature or GCC's __SANITIZE_ADDRESS__; GCC 12 has no __has_feature).
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STABFUZZ_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(STABFUZZ_TEST_ASAN)
#define STABFUZZ_TEST_ASAN 1
#endif
