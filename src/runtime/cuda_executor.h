// The cuda backend's worker side. The shared arena (runtime/tensor_arena.h) is mirrored in device
// memory with the same layout, so a buffer's canary bytes and the guard gaps between buffers exist
// on the device too. Around every call of a solution's host `ekb_main`:
//
//   before  every buffer region (inputs, poisoned outputs, scratch junk, canaries) copied to the
//           device on the harness's stream; with `flush`, L2 evicted by writing a buffer twice its
//           size (cuMemsetD8Async) and persisting-L2 lines reset, outside the timed interval;
//   call    CUDA events recorded on the stream around ekb_main(..., stream): the device time of
//           the work it enqueued there (work on the legacy default stream is serialized with it);
//   after   the stream synchronized, outputs copied back to the shared arena (the parent checks
//           them and their canaries as on cpu); then the whole context synchronized and device
//           memory read again: outputs that changed since (work left on another stream), inputs
//           that differ from what was copied in, guard gaps that were written are faults.
// A sticky device error (illegal address, trap, ...) leaves the context unusable: it is reported
// as a crash and the worker exits, so the session starts a new one.
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
    std::vector<uint64_t> args;  // device pointers, params, the stream, [scratch]
  };
  struct Range {
    uint64_t begin = 0, end = 0;
  };
  // A harness call that must succeed; a sticky error ends the worker (KernelFault), others throw.
  void checked(cuda::CUresult r, const char* what, const char* during = "");
  void mirror(const ArenaView& arena);
  void fill_guards();
  // The first byte of [begin, end) on the device that differs from `expected`, or -1.
  int64_t first_device_difference(uint64_t begin, uint64_t end, const uint8_t* expected);

  const cuda::DriverApi* api_ = nullptr;
  cuda::CUdevice device_ = 0;
  cuda::CUcontext context_ = nullptr;
  cuda::CUstream stream_ = nullptr;
  cuda::CUevent start_ = nullptr, end_ = nullptr;
  cuda::CUdeviceptr flush_buffer_ = 0;
  size_t flush_bytes_ = 0;
  unsigned flush_round_ = 0;

  ArenaView arena_;                  // the host mapping mirrored
  cuda::CUdeviceptr arena_device_ = 0;
  std::vector<Range> guards_;        // the gaps between regions, filled with a pattern
  std::vector<uint8_t> staging_;     // device memory read back for comparisons
  std::vector<uint8_t> guard_image_;  // the pattern, as bytes, for the longest gap
  std::map<int, Slot> slots_;
};

}  // namespace ekb::runtime
