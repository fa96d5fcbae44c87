// Making a timed run start cold (docs/EVALUATION.md §5: caches flushed between runs unless a workload measures
// warm cache), outside the timed region.
//
// The precise way is to evict exactly the kernel's data: every cache line of its buffers
// (clflushopt / clflush on x86-64, `dc civac` on AArch64). That costs time proportional to the
// data, whereas streaming a buffer larger than the last-level cache costs hundreds of milliseconds
// per run on server parts with 0.5-1 GiB of L3. A scrub buffer is still available (scrub_bytes) for
// architectures without a user-space flush instruction or to also evict the kernel's other state.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ekb::runtime {

// Writes back and invalidates every cache line of [data, data + bytes) and waits for completion.
// Returns false where no flush instruction is available (nothing was done).
bool flush_cache_lines(const void* data, size_t bytes);

// Writes and reads `bytes` of a private buffer (allocated on first use, grown as needed).
void scrub_caches(size_t bytes);

}  // namespace ekb::runtime
