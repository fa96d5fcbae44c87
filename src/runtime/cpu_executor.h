// The cpu backend's worker side: a shared object loaded with dlopen, ekb_main called directly on
// the shared arena's memory, timed with the monotonic clock around the call alone.
#pragma once
#include <map>

#include "runtime/kernel_executor.h"
#include "runtime/kernel_library.h"

namespace ekb::runtime {

class CpuExecutor final : public KernelExecutor {
 public:
  ~CpuExecutor() override;
  int64_t load(int slot, int artifact_fd, const std::vector<int64_t>& params) override;
  void attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) override;
  int64_t run(int slot, bool flush, size_t scrub_bytes) override;
  void unload(int slot) override;

 private:
  struct Loaded {
    KernelLibrary library;
    std::vector<uint64_t> args;      // resolved: pointers and params
    std::vector<ArenaRegion> flush;  // regions to evict before a cold run
    uint8_t* base = nullptr;
  };
  std::map<int, Loaded> slots_;
};

}  // namespace ekb::runtime
