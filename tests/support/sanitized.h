// Whether this test program is built with AddressSanitizer or ThreadSanitizer
// (GCC defines __SANITIZE_*__, clang answers __has_feature): such builds run
// 10-100x slower, and tests that size their work by time take less of it.
#pragma once

namespace engine_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace engine_test
