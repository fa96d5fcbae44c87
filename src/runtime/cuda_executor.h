// The cuda backend's worker side. Every region of the shared arena (runtime/tensor_arena.h: a
// buffer's data with its canary bytes) gets device memory of its own, mapped with the driver's
// virtual memory management API at the end of a mapping of the allocation granularity (2 MiB),
// inside one reserved address range where 1 GiB of unmapped address space lies before and after
// every mapping. The layout inside a region is the arena's, so canaries exist on the device too:
//
//   | 1 GiB unmapped | guard | region 0 | 1 GiB unmapped | guard | region 1 | 1 GiB unmapped | ...
//
// A small overrun lands in canary bytes; anything further past the end of a buffer, and anything
// before its mapping, hits unmapped address space and faults (CUDA_ERROR_ILLEGAL_ADDRESS); the
// mapped bytes before a region ("guard") hold a pattern. Around every call of a solution's host
// `ekb_main`:
//
//   before  every region (inputs, poisoned outputs, scratch junk, canaries) copied to the device
//           on the harness's stream; with `flush`, L2 evicted by writing a buffer twice its size
//           (cuMemsetD8Async) and persisting-L2 lines reset, outside the timed interval;
//   call    CUDA events recorded on the stream around ekb_main(..., stream): the device time of
//           the work it enqueued there (work on the legacy default stream is serialized with it);
//   after   the context checked: still the harness's, still current (a kernel that resets the
//           device or switches context fails); the stream synchronized, the regions the slot may
//           write (its outputs and scratch) copied back to the shared arena (the parent checks
//           them and their canaries as on cpu); then the whole context synchronized and device
//           memory read again: outputs that changed since (work left on another stream), other
//           regions that differ from what was copied in (inputs, the other slot's scratch), guard
//           bytes and the flush buffer that changed (checked on the device) are faults.
// A sticky device error (illegal address, trap, ...) leaves the context unusable: it is reported
// (an illegal address as out_of_bounds, the others as a crash) and the worker exits, so the session
// starts a new one. So does a context the candidate destroyed or replaced.
#pragma once
#include <map>

#include "runtime/cuda_driver.h"
#include "runtime/kernel_executor.h"
#include "runtime/kernel_library.h"

namespace ekb::runtime {

class CudaExecutor final : public KernelExecutor {
 public:
  CudaExecutor();  // throws ExecutorError when there is no usable CUDA device
  ~CudaExecutor() override;
  int64_t load(int slot, int artifact_fd, const std::vector<int64_t>& params) override;
  void attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) override;
  // `scrub_bytes` (a CPU cache scrub) does not apply to device memory and is ignored.
  int64_t run(int slot, bool flush, size_t scrub_bytes) override;
  void unload(int slot) override;

 private:
  struct Slot {
    KernelLibrary library;
    std::vector<uint64_t> args;    // device pointers, params, the stream, [scratch]
    std::vector<bool> may_write;   // per region of the arena: one of its outputs or its scratch
  };
  // One region of the arena in device memory: a physical allocation of its own mapped at
  // [mapping, mapping + mapped_bytes), with the region at the end and guard bytes before it.
  struct DeviceRegion {
    ArenaRegion arena;
    cuda::CUmemGenericAllocationHandle memory = 0;
    cuda::CUdeviceptr mapping = 0;
    size_t mapped_bytes = 0;
    cuda::CUdeviceptr begin() const { return mapping + mapped_bytes - (arena.end - arena.begin); }
    size_t guard_bytes() const { return mapped_bytes - (arena.end - arena.begin); }
  };

  // A harness call that must succeed; a sticky error ends the worker (KernelFault). Others throw
  // ExecutorError, or, once candidate code has run since the context was last found intact, a
  // KernelFault that blames the candidate.
  void checked(cuda::CUresult r, const char* what, const char* during = "");
  // After candidate code ran (`who`: its static constructors, ekb_main): the context must still be
  // the one created for it, alive and current; otherwise a KernelFault that ends the worker.
  void require_intact_context(const char* who);
  void map_buffers(const ArenaView& arena);
  void unmap_buffers();
  void fill_guards();
  cuda::CUdeviceptr device_address(uint64_t arena_offset) const;
  // The first byte of [at, at + n) on the device that differs from `expected`, or -1.
  int64_t first_device_difference(cuda::CUdeviceptr at, size_t n, const uint8_t* expected);
  // Guard bytes, and the flush buffer when it was written before the call (reading it after every
  // call would evict a `warm` workload's data from L2), compared on the device with what they
  // must hold; throws the fault for the first that changed.
  void check_memory_beside_buffers(bool flush_buffer_too);

  const cuda::DriverApi* api_ = nullptr;
  cuda::CUdevice device_ = 0;
  cuda::CUcontext context_ = nullptr;
  unsigned long long context_id_ = 0;  // 0: the driver has no cuCtxGetId
  bool probe_mapped_ = false;          // cuPointerGetAttribute(MAPPED) answers for the flush buffer
  bool candidate_ran_ = false;         // candidate code ran since the context was found intact
  cuda::CUstream stream_ = nullptr;
  cuda::CUevent start_ = nullptr, end_ = nullptr;
  cuda::CUmodule check_module_ = nullptr;  // the harness's own kernel (kFirstOtherWordPtx)
  cuda::CUfunction first_other_word_ = nullptr;
  cuda::CUdeviceptr check_results_ = 0;  // one word per range checked on the device
  cuda::CUdeviceptr flush_buffer_ = 0;
  size_t flush_bytes_ = 0;
  unsigned flush_round_ = 0;  // its bytes hold this value (mod 256)

  ArenaView arena_;  // the host mapping mirrored
  size_t granularity_ = 0;
  cuda::CUdeviceptr reservation_ = 0;
  size_t reserved_bytes_ = 0;
  std::vector<DeviceRegion> regions_;  // in the order of arena_.regions
  std::vector<uint8_t> staging_;       // device memory read back for comparisons
  std::map<int, Slot> slots_;
};

}  // namespace ekb::runtime
