// The opencl backend's worker side. The OpenCL platform is initialized (context, in-order queue with
// profiling) when the worker starts, before it enters the sandbox; programs are loaded from their
// artifacts (runtime/opencl_program.h) afterwards, without compiling: PoCL is told to use the
// work-group functions the artifact carries (POCL_WORK_GROUP_SPECIALIZATION=0), since building a
// specialized one runs the system linker, a process the sandbox forbids; its kernel cache goes to
// the worker's private scratch directory.
//
// The shared arena's regions (runtime/tensor_arena.h) are mirrored in one device buffer, each at a
// place where the kernel argument pointing into it is aligned for a sub-buffer
// (CL_DEVICE_MEM_BASE_ADDR_ALIGN), with 2 MiB guard gaps between and around regions filled with a
// pattern (OpenCL cannot leave unmapped address space between buffers, as the cuda executor does). Every
// tensor argument is a sub-buffer from its data to the end of its region (the trailing canary), so
// small overruns land in canary bytes and larger ones in the gaps. Scratch buffers of the launch
// description are sub-buffers of the slot's scratch region, each aligned the same way. Around every
// call of a slot:
//
//   before  every region (inputs, poisoned outputs, scratch junk, canaries) written to the device;
//           with `flush`, the device's caches evicted outside the timed interval (a CPU device: the
//           cache lines of the mapped buffer; a GPU: a buffer larger than its cache rewritten);
//   call    the description's launches enqueued in order on the in-order queue, each with a
//           profiling event; the duration is the first launch's start to the last one's end;
//   after   the queue finished; writable regions read back into the arena (the parent checks
//           outputs and canaries as on cpu); input regions and guard gaps read and compared with
//           what was written: a difference is InputModified / OutOfBounds.
// A failed launch or an execution error (a GPU's illegal address) leaves the context unusable: it
// is reported as a crash and the worker exits, so the session starts a new one.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernel_executor.h"
#include "runtime/opencl_driver.h"
#include "runtime/opencl_launch.h"

namespace ekb::runtime {

class OpenCLExecutor final : public KernelExecutor {
 public:
  // Selects `device` (the backend's choice, from the worker's command line); `private_dir` is the
  // worker's scratch directory (PoCL's kernel cache goes there). Throws ExecutorError when there is
  // no usable device.
  OpenCLExecutor(const std::string& private_dir, const DeviceSelection& device);
  ~OpenCLExecutor() override;
  int64_t load(int slot, int artifact_fd, const std::vector<int64_t>& params) override;
  void attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) override;
  // `scrub_bytes` (a CPU cache scrub) is ignored: `flush` evicts the device's caches.
  int64_t run(int slot, bool flush, size_t scrub_bytes) override;
  void unload(int slot) override;

 private:
  struct Launch {
    cl_kernel kernel = nullptr;
    opencl::ResolvedLaunch size;
    std::vector<opencl::LaunchArg> args;
  };
  struct Slot {
    cl_program program = nullptr;
    opencl::LaunchDescription description;
    std::vector<Launch> launches;
    std::vector<int64_t> params;
    std::vector<uint64_t> scratch_offsets, scratch_sizes;  // within the scratch data, per scratch buffer
    bool has_scratch = false;
    std::vector<KernelArg> args;  // as attached: tensors, params, [scratch]
    std::vector<cl_mem> sub_buffers;  // created on the first run after attach
    bool bound = false;
  };
  struct Placement {
    uint64_t begin = 0, end = 0;  // the region in the arena
    uint64_t device = 0;          // where it starts in the device buffer
    bool writable = false;
  };
  struct Range {
    uint64_t begin = 0, end = 0;
  };

  // A call that must succeed; an execution error ends the worker (KernelFault), others throw.
  void checked(cl_int r, const char* what, const char* during = "");
  void release_slot(Slot& s);
  void layout_device_memory();
  void bind(Slot& s);
  uint64_t device_offset(uint64_t arena_offset) const;
  cl_mem sub_buffer(uint64_t device_begin, uint64_t bytes);
  void fill_guards();
  void flush_caches();
  int64_t first_device_difference(uint64_t device_begin, uint64_t bytes, const uint8_t* expected);

  const opencl::Api* cl_ = nullptr;
  opencl::Device device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  unsigned flush_round_ = 0;
  size_t alignment_ = 64;  // of every sub-buffer's origin

  ArenaView arena_;
  bool layout_stale_ = true;
  cl_mem device_arena_ = nullptr;
  uint64_t device_size_ = 0;
  std::vector<Placement> placements_;
  std::vector<Range> guards_;         // device offsets of the gaps
  std::vector<uint8_t> guard_image_;  // the pattern, as bytes, for the longest gap
  std::vector<uint8_t> staging_;
  std::map<int, Slot> slots_;
};

}  // namespace ekb::runtime
