// Which sanitizer this translation unit is built under, the same with GCC (which defines
// __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__) and Clang (which says so through
// __has_feature): LOCKSIM_ASAN and LOCKSIM_TSAN are 1 under AddressSanitizer and
// ThreadSanitizer, 0 otherwise.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define LOCKSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKSIM_ASAN 1
#endif
#endif
#ifndef LOCKSIM_ASAN
#define LOCKSIM_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define LOCKSIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKSIM_TSAN 1
#endif
#endif
#ifndef LOCKSIM_TSAN
#define LOCKSIM_TSAN 0
#endif
