#include "runtime/cpu_executor.h"

#include <chrono>
#include <string>

#include "runtime/abi_call.h"
#include "runtime/cache_flush.h"
#include "runtime/crash_report.h"
#include "runtime/kernel_library.h"

namespace ekb::runtime {

CpuExecutor::~CpuExecutor() {
  for (auto& [slot, l] : slots_) close_kernel_library(l.library);
}

int64_t CpuExecutor::load(int slot, int artifact_fd, const std::vector<int64_t>& params) {
  unload(slot);
  Loaded l;
  l.library = open_kernel_library(artifact_fd, params);
  int64_t scratch = l.library.scratch_bytes;
  slots_[slot] = std::move(l);
  return scratch;
}

void CpuExecutor::attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("attach: slot " + std::to_string(slot) + " is empty");
  if (args.size() > kMaxKernelArgs) throw ExecutorError("more than 64 kernel arguments");
  Loaded& l = it->second;
  l.base = arena.base;
  l.args.clear();
  for (const KernelArg& a : args) {
    if (a.is_pointer && a.value >= arena.size) throw ExecutorError("attach: pointer outside the arena");
    l.args.push_back(a.is_pointer ? reinterpret_cast<uint64_t>(arena.base + a.value) : a.value);
  }
  l.flush = arena.regions;
}

int64_t CpuExecutor::run(int slot, bool flush, size_t scrub_bytes) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("run: slot " + std::to_string(slot) + " is empty");
  Loaded& l = it->second;
  if (scrub_bytes) scrub_caches(scrub_bytes);
  if (flush)
    for (const ArenaRegion& r : l.flush) flush_cache_lines(l.base + r.begin, r.end - r.begin);
  clear_errno();
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC
  const auto t0 = Clock::now();
  asm volatile("" ::: "memory");
  call_void_u64(l.library.entry, l.args.data(), l.args.size());
  asm volatile("" ::: "memory");
  const auto t1 = Clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

void CpuExecutor::unload(int slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  close_kernel_library(it->second.library);
  slots_.erase(it);
}

}  // namespace ekb::runtime
