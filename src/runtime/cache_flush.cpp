#include "runtime/cache_flush.h"

#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

namespace ekb::runtime {

namespace {
#if defined(__x86_64__)
bool has_clflushopt() {
  static const bool yes = [] {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
  }();
  return yes;
}
#endif
}  // namespace

bool flush_cache_lines(const void* data, size_t bytes) {
  const uintptr_t line = 64;
  uintptr_t p = reinterpret_cast<uintptr_t>(data) & ~(line - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
#if defined(__x86_64__)
  if (has_clflushopt()) {
    for (; p < end; p += line) asm volatile("clflushopt (%0)" ::"r"(p) : "memory");
  } else {
    for (; p < end; p += line) _mm_clflush(reinterpret_cast<const void*>(p));
  }
  _mm_mfence();
  return true;
#elif defined(__aarch64__)
  for (; p < end; p += line) asm volatile("dc civac, %0" ::"r"(p) : "memory");
  asm volatile("dsb ish" ::: "memory");
  return true;
#else
  (void)p;
  (void)end;
  return false;
#endif
}

void scrub_caches(size_t bytes) {
  static std::vector<uint64_t> buffer;
  size_t words = bytes / sizeof(uint64_t);
  if (buffer.size() < words) buffer.resize(words);
  static uint64_t round = 0;
  ++round;
  for (size_t i = 0; i < words; i += 8) buffer[i] = round + i;  // one write per line
  volatile uint64_t sink = 0;
  uint64_t sum = 0;
  for (size_t i = 0; i < words; i += 8) sum += buffer[i];
  sink = sum;
  (void)sink;
}

}  // namespace ekb::runtime
