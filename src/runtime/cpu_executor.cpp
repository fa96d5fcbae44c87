#include "runtime/cpu_executor.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "runtime/abi_call.h"
#include "runtime/cache_flush.h"
#include "runtime/crash_report.h"

namespace ekb::runtime {

CpuExecutor::~CpuExecutor() {
  for (auto& [slot, l] : slots_) {
    (void)slot;
    if (l.handle) ::dlclose(l.handle);
    if (l.fd >= 0) ::close(l.fd);
  }
}

int64_t CpuExecutor::load(int slot, int artifact_fd, const std::vector<int64_t>& params) {
  unload(slot);
  Loaded l;
  l.fd = artifact_fd;
  // Through the descriptor: the worker may run as a user that cannot reach the cache directory.
  std::string path = "/proc/self/fd/" + std::to_string(artifact_fd);
  clear_errno();
  l.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle) {
    ::close(artifact_fd);
    const char* e = ::dlerror();
    throw ExecutorError(std::string("cannot load the shared object: ") + (e ? e : "unknown error"));
  }
  l.entry = ::dlsym(l.handle, "ekb_main");
  if (!l.entry) {
    ::dlclose(l.handle);
    ::close(artifact_fd);
    throw ExecutorError(
        "the solution defines no ekb_main with C linkage (in C++, declare it extern \"C\")");
  }
  int64_t scratch = -1;
  if (void* sb = ::dlsym(l.handle, "ekb_scratch_bytes")) {
    std::vector<uint64_t> a(params.begin(), params.end());
    scratch = call_i64_u64(sb, a.data(), a.size());
    if (scratch < 0) {
      ::dlclose(l.handle);
      ::close(artifact_fd);
      throw ExecutorError("ekb_scratch_bytes returned a negative size (" + std::to_string(scratch) + ")");
    }
  }
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
  call_void_u64(l.entry, l.args.data(), l.args.size());
  asm volatile("" ::: "memory");
  const auto t1 = Clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

void CpuExecutor::unload(int slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  if (it->second.handle) ::dlclose(it->second.handle);
  if (it->second.fd >= 0) ::close(it->second.fd);
  slots_.erase(it);
}

}  // namespace ekb::runtime
