#include "runtime/opencl_executor.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/cache_flush.h"
#include "runtime/opencl_program.h"

namespace ekb::runtime {

namespace {

// Guard gaps hold this 32-bit pattern: bytes that vary, so that writing any constant changes some.
constexpr uint32_t kGuardPattern = 0x5BA5C3E1u;
// Between two regions in device memory, and before the first and after the last. OpenCL cannot
// place buffers between unmapped gaps (as the cuda executor does): a write this far from a buffer
// lands in the gap and is seen; a farther one is not guaranteed to be (docs/EVALUATION.md).
constexpr uint64_t kGuardBytes = 2 << 20;

uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

// Execution errors after which the queue (and, on a GPU, the context) cannot be trusted again.
bool is_execution_error(cl_int r) {
  return r == CL_OUT_OF_RESOURCES || r == CL_INVALID_COMMAND_QUEUE || r == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ||
         r == CL_INVALID_CONTEXT || r < -1000;  // vendor codes (NVIDIA's -9999: illegal address)
}

std::vector<uint8_t> read_descriptor(int fd) {
  std::vector<uint8_t> bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  return bytes;
}

// Before the platform initializes: PoCL's kernel cache in the worker's own directory, owned like it
// (the worker may drop to an unprivileged user after this; as root it would create the cache
// root-owned), and no NVIDIA JIT cache (files in $HOME, which the sandbox moves and size-limits).
// Environment variables are the only settings PoCL and NVIDIA's runtime read for these; ekb's own
// choices (the device) come from the worker's command line.
void prepare_platform_environment(const std::string& private_dir) {
  ::setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 1);  // see opencl_executor.h
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  if (private_dir.empty()) return;
  const std::string cache = private_dir + "/pocl-cache";
  ::mkdir(cache.c_str(), 0700);
  struct stat st {};
  if (::stat(private_dir.c_str(), &st) == 0) (void)!::chown(cache.c_str(), st.st_uid, st.st_gid);
  ::setenv("POCL_CACHE_DIR", cache.c_str(), 1);
}

}  // namespace

void OpenCLExecutor::checked(cl_int r, const char* what, const char* during) {
  if (r == CL_SUCCESS) return;
  const std::string message = std::string(what) + ": " + opencl::error_name(r);
  if (is_execution_error(r)) {
    std::fprintf(stderr, "ekb worker: OpenCL execution error%s: %s\n", during, message.c_str());
    throw KernelFault(ErrorKind::Crash, "the device reported " + opencl::error_name(r) + during + " (the worker is replaced)",
                      -1, true);
  }
  throw ExecutorError(message);
}

OpenCLExecutor::OpenCLExecutor(const std::string& private_dir, const DeviceSelection& device) {
  prepare_platform_environment(private_dir);
  try {
    device_ = opencl::select_device(device);
  } catch (const std::exception& e) {
    throw ExecutorError(e.what());
  }
  cl_ = opencl::api();
  cl_int err = CL_SUCCESS;
  context_ = cl_->clCreateContext(nullptr, 1, &device_.id, nullptr, nullptr, &err);
  checked(err, "clCreateContext");
  queue_ = cl_->clCreateCommandQueue(context_, device_.id, CL_QUEUE_PROFILING_ENABLE, &err);  // in order
  checked(err, "clCreateCommandQueue");
  alignment_ = std::max<size_t>(64, device_.base_address_alignment);
  if (!device_.is_cpu()) {
    flush_bytes_ = std::max<size_t>(2 * device_.global_cache_bytes, 64u << 20);
    flush_buffer_ = cl_->clCreateBuffer(context_, CL_MEM_READ_WRITE, flush_bytes_, nullptr, &err);
    checked(err, "clCreateBuffer (cache flush buffer)");
  }
}

OpenCLExecutor::~OpenCLExecutor() {
  for (auto& [slot, s] : slots_) release_slot(s);
  if (!cl_) return;
  if (device_arena_) cl_->clReleaseMemObject(device_arena_);
  if (flush_buffer_) cl_->clReleaseMemObject(flush_buffer_);
  if (queue_) cl_->clReleaseCommandQueue(queue_);
  if (context_) cl_->clReleaseContext(context_);
}

void OpenCLExecutor::release_slot(Slot& s) {
  for (cl_mem m : s.sub_buffers) cl_->clReleaseMemObject(m);
  s.sub_buffers.clear();
  s.bound = false;
  for (Launch& l : s.launches)
    if (l.kernel) cl_->clReleaseKernel(l.kernel);
  s.launches.clear();
  if (s.program) cl_->clReleaseProgram(s.program);
  s.program = nullptr;
}

int64_t OpenCLExecutor::load(int slot, int artifact_fd, const std::vector<int64_t>& params) {
  unload(slot);
  opencl::ProgramArtifact a;
  try {
    a = opencl::deserialize(read_descriptor(artifact_fd));
  } catch (const std::exception& e) {
    throw ExecutorError(e.what());
  }
  if (a.device_identity != device_.identity())
    throw ExecutorError("the program was built for '" + a.device_identity + "', not this worker's device '" +
                        device_.identity() + "'");
  Slot s;
  s.params = params;
  try {
    s.description = opencl::parse_launch_description(a.source, a.names);
  } catch (const opencl::LaunchError& e) {
    throw ExecutorError(e.what());
  }
  if (params.size() != a.names.params.size())
    throw ExecutorError("the workload has " + std::to_string(params.size()) + " parameters, the program was built for " +
                        std::to_string(a.names.params.size()));

  // The binary; the source where the platform gave none or no longer takes it (a driver update).
  cl_int err = CL_SUCCESS;
  if (!a.binary.empty()) {
    const unsigned char* bin = a.binary.data();
    const size_t size = a.binary.size();
    cl_int status = CL_SUCCESS;
    s.program = cl_->clCreateProgramWithBinary(context_, 1, &device_.id, &size, &bin, &status, &err);
    if (err == CL_SUCCESS && status == CL_SUCCESS)
      err = cl_->clBuildProgram(s.program, 1, &device_.id, a.build_options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS && s.program) {
      cl_->clReleaseProgram(s.program);
      s.program = nullptr;
    }
  }
  if (!s.program) {
    const char* text = a.source.c_str();
    const size_t length = a.source.size();
    s.program = cl_->clCreateProgramWithSource(context_, 1, &text, &length, &err);
    checked(err, "clCreateProgramWithSource");
    err = cl_->clBuildProgram(s.program, 1, &device_.id, a.build_options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log = opencl::build_log(s.program, device_.id);
      release_slot(s);
      throw ExecutorError("the program does not build on this device: " + opencl::error_name(err) + "\n" + log);
    }
  }

  try {
    // Scratch buffers: each at a multiple of the sub-buffer alignment within the slot's scratch.
    uint64_t total = 0;
    for (const opencl::ScratchBuffer& b : s.description.scratch) {
      const int64_t bytes = opencl::evaluate(b.bytes, params);
      if (bytes < 0) throw opencl::LaunchError(b.line, 1, "scratch " + b.name + " has a negative size");
      s.scratch_offsets.push_back(total);
      s.scratch_sizes.push_back(round_up(std::max<uint64_t>(static_cast<uint64_t>(bytes), 1), alignment_));
      total += s.scratch_sizes.back();
    }
    s.has_scratch = !s.description.scratch.empty();
    for (const opencl::KernelLaunch& k : s.description.launches) {
      Launch l;
      l.size = opencl::resolve(k, params);
      l.args = k.args;
      l.kernel = cl_->clCreateKernel(s.program, k.kernel.c_str(), &err);
      if (err != CL_SUCCESS) {
        s.launches.push_back(l);
        throw ExecutorError("no kernel '" + k.kernel + "' in the program: " + opencl::error_name(err));
      }
      s.launches.push_back(l);
      // The parameters now; a wrong type (an int where the ABI passes long) fails here, as a load error.
      for (size_t i = 0; i < k.args.size(); ++i) {
        if (k.args[i].kind != opencl::LaunchArg::Kind::Param) continue;
        const cl_long value = params[static_cast<size_t>(k.args[i].index)];
        cl_int r = cl_->clSetKernelArg(l.kernel, static_cast<cl_uint>(i), sizeof value, &value);
        if (r != CL_SUCCESS)
          throw ExecutorError("kernel " + k.kernel + ", argument " + std::to_string(i) + " (" + k.args[i].name +
                              "): " + opencl::error_name(r) + " (parameters are passed as long)");
      }
    }
    const int64_t declared = s.has_scratch ? static_cast<int64_t>(total) : -1;
    slots_[slot] = std::move(s);
    return declared;
  } catch (const opencl::LaunchError& e) {
    release_slot(s);
    throw ExecutorError(e.what());
  } catch (...) {
    release_slot(s);
    throw;
  }
}

void OpenCLExecutor::attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("attach: slot " + std::to_string(slot) + " is empty");
  Slot& s = it->second;
  for (const KernelArg& a : args)
    if (a.is_pointer && a.value >= arena.size) throw ExecutorError("attach: pointer outside the arena");
  auto same_region = [](const ArenaRegion& a, const ArenaRegion& b) {
    return a.begin == b.begin && a.end == b.end && a.writable == b.writable;
  };
  const bool same_arena = arena.base == arena_.base && arena.size == arena_.size &&
                          std::equal(arena.regions.begin(), arena.regions.end(), arena_.regions.begin(),
                                     arena_.regions.end(), same_region);
  if (!same_arena) {
    // A new arena: every binding and the device mirror are rebuilt on the next run.
    for (auto& [n, other] : slots_) {
      for (cl_mem m : other.sub_buffers) cl_->clReleaseMemObject(m);
      other.sub_buffers.clear();
      other.bound = false;
    }
    arena_ = arena;
    layout_stale_ = true;
  }
  for (cl_mem m : s.sub_buffers) cl_->clReleaseMemObject(m);
  s.sub_buffers.clear();
  s.bound = false;
  s.args = args;
}

void OpenCLExecutor::layout_device_memory() {
  for (auto& [n, s] : slots_) {
    for (cl_mem m : s.sub_buffers) cl_->clReleaseMemObject(m);
    s.sub_buffers.clear();
    s.bound = false;
  }
  if (device_arena_) cl_->clReleaseMemObject(device_arena_);
  device_arena_ = nullptr;

  // Each region placed so that the pointer into it (its buffer's data) is aligned for a sub-buffer.
  std::vector<ArenaRegion> regions = arena_.regions;
  std::sort(regions.begin(), regions.end(), [](const ArenaRegion& a, const ArenaRegion& b) { return a.begin < b.begin; });
  placements_.clear();
  guards_.clear();
  uint64_t at = kGuardBytes;
  guards_.push_back({0, at});
  for (const ArenaRegion& r : regions) {
    uint64_t anchor = r.begin;
    for (const auto& [n, s] : slots_)
      for (const KernelArg& a : s.args)
        if (a.is_pointer && a.value >= r.begin && a.value < r.end) anchor = a.value;
    const uint64_t into = anchor - r.begin;
    const uint64_t start = round_up(at + into, alignment_) - into;
    if (start > at) guards_.push_back({at, start});
    placements_.push_back({r.begin, r.end, start, r.writable});
    at = start + (r.end - r.begin);
    guards_.push_back({at, at + kGuardBytes});
    at += kGuardBytes;
  }
  device_size_ = at;
  cl_int err = CL_SUCCESS;
  device_arena_ = cl_->clCreateBuffer(context_, CL_MEM_READ_WRITE, device_size_, nullptr, &err);
  if (err != CL_SUCCESS) {
    device_arena_ = nullptr;
    throw KernelFault(ErrorKind::Memory, "cannot allocate the kernel's buffers in device memory (" +
                                             std::to_string(device_size_ >> 20) + " MiB): " + opencl::error_name(err));
  }
  size_t longest = 0;
  for (const Range& g : guards_) longest = std::max<size_t>(longest, g.end - g.begin);
  guard_image_.resize(longest);
  for (size_t k = 0; k < longest; k += 4) {
    const uint32_t word = kGuardPattern;
    std::memcpy(guard_image_.data() + k, &word, std::min<size_t>(4, longest - k));
  }
  fill_guards();
  layout_stale_ = false;
}

void OpenCLExecutor::fill_guards() {
  for (const Range& g : guards_) {
    // Offsets and lengths are not all multiples of 4: write the image bytes rather than a fill pattern.
    checked(cl_->clEnqueueWriteBuffer(queue_, device_arena_, CL_FALSE, g.begin, g.end - g.begin, guard_image_.data(), 0,
                                      nullptr, nullptr),
            "clEnqueueWriteBuffer (guard gaps)");
  }
  checked(cl_->clFinish(queue_), "clFinish");
}

uint64_t OpenCLExecutor::device_offset(uint64_t arena_offset) const {
  for (const Placement& p : placements_)
    if (arena_offset >= p.begin && arena_offset < p.end) return p.device + (arena_offset - p.begin);
  throw ExecutorError("a kernel argument points outside every buffer region");
}

cl_mem OpenCLExecutor::sub_buffer(uint64_t device_begin, uint64_t bytes) {
  cl_buffer_region region{device_begin, bytes};
  cl_int err = CL_SUCCESS;
  cl_mem m = cl_->clCreateSubBuffer(device_arena_, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  checked(err, "clCreateSubBuffer");
  return m;
}

void OpenCLExecutor::bind(Slot& s) {
  // The attached arguments: the tensors, the parameters, then the scratch pointer if declared.
  const size_t n_tensors = s.args.size() - s.params.size() - (s.has_scratch ? 1 : 0);
  if (s.args.size() < s.params.size() + (s.has_scratch ? 1 : 0))
    throw ExecutorError("attach: fewer arguments than the workload's parameters");
  std::vector<cl_mem> tensors, scratch;
  for (size_t i = 0; i < n_tensors; ++i) {
    const KernelArg& a = s.args[i];
    if (!a.is_pointer) throw ExecutorError("attach: tensor argument " + std::to_string(i) + " is not a buffer");
    const uint64_t at = device_offset(a.value);
    const Placement& p = *std::find_if(placements_.begin(), placements_.end(),
                                       [&](const Placement& q) { return a.value >= q.begin && a.value < q.end; });
    tensors.push_back(sub_buffer(at, p.end - a.value));  // the data and the trailing canary
    s.sub_buffers.push_back(tensors.back());
  }
  if (s.has_scratch) {
    const uint64_t at = device_offset(s.args.back().value);
    for (size_t i = 0; i < s.scratch_offsets.size(); ++i) {
      scratch.push_back(sub_buffer(at + s.scratch_offsets[i], s.scratch_sizes[i]));
      s.sub_buffers.push_back(scratch.back());
    }
  }
  for (Launch& l : s.launches)
    for (size_t i = 0; i < l.args.size(); ++i) {
      const opencl::LaunchArg& a = l.args[i];
      if (a.kind == opencl::LaunchArg::Kind::Param) continue;  // set at load
      const std::vector<cl_mem>& from = a.kind == opencl::LaunchArg::Kind::Tensor ? tensors : scratch;
      if (static_cast<size_t>(a.index) >= from.size()) throw ExecutorError("argument '" + a.name + "' is not bound");
      cl_int r = cl_->clSetKernelArg(l.kernel, static_cast<cl_uint>(i), sizeof(cl_mem), &from[static_cast<size_t>(a.index)]);
      if (r != CL_SUCCESS)
        throw KernelFault(ErrorKind::Load, "argument " + std::to_string(i) + " (" + a.name + ") of a kernel: " +
                                               opencl::error_name(r) + " (tensors and scratch are __global pointers)");
    }
  s.bound = true;
}

void OpenCLExecutor::flush_caches() {
  if (device_.is_cpu()) {
    // The device's memory is this process's: evict exactly the mirrored regions' cache lines.
    cl_int err = CL_SUCCESS;
    void* p = cl_->clEnqueueMapBuffer(queue_, device_arena_, CL_TRUE, CL_MAP_READ, 0, device_size_, 0, nullptr, nullptr, &err);
    checked(err, "clEnqueueMapBuffer (cache flush)");
    for (const Placement& pl : placements_)
      flush_cache_lines(static_cast<uint8_t*>(p) + pl.device, pl.end - pl.begin);
    checked(cl_->clEnqueueUnmapMemObject(queue_, device_arena_, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
    return;
  }
  // A different value each time, so that no cache can treat the writes as a no-op.
  const cl_uchar value = static_cast<cl_uchar>(++flush_round_);
  checked(cl_->clEnqueueFillBuffer(queue_, flush_buffer_, &value, 1, 0, flush_bytes_, 0, nullptr, nullptr),
          "clEnqueueFillBuffer (cache flush)");
}

int64_t OpenCLExecutor::first_device_difference(uint64_t device_begin, uint64_t bytes, const uint8_t* expected) {
  staging_.resize(std::max<size_t>(staging_.size(), bytes));
  checked(cl_->clEnqueueReadBuffer(queue_, device_arena_, CL_TRUE, device_begin, bytes, staging_.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
  if (std::memcmp(staging_.data(), expected, bytes) == 0) return -1;
  for (size_t k = 0; k < bytes; ++k)
    if (staging_[k] != expected[k]) return static_cast<int64_t>(k);
  return -1;
}

int64_t OpenCLExecutor::run(int slot, bool flush, size_t /*scrub_bytes*/) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("run: slot " + std::to_string(slot) + " is empty");
  if (!arena_.base) throw ExecutorError("run before attach");
  if (layout_stale_) layout_device_memory();
  Slot& s = it->second;
  if (!s.bound) bind(s);

  for (const Placement& p : placements_)
    checked(cl_->clEnqueueWriteBuffer(queue_, device_arena_, CL_FALSE, p.device, p.end - p.begin, arena_.base + p.begin, 0,
                                      nullptr, nullptr),
            "clEnqueueWriteBuffer");
  if (flush) flush_caches();
  // On a GPU the kernels queue behind the copies and the flush, as the cuda executor's launches
  // queue behind its memset, so that the first kernel starts the moment the flush ends. Draining
  // the queue first made every call carry an idle device's pick-up of a new command, which CUDA's
  // calls do not: on the H200 an empty kernel is 5.4 us on an idle queue against 2.6 us behind a
  // flush (`ekb calibrate`'s launch floor), and small kernels measured 1.5x their CUDA times.
  if (device_.is_cpu()) checked(cl_->clFinish(queue_), "clFinish");

  std::vector<cl_event> events;
  auto release_events = [&] {
    for (cl_event e : events) cl_->clReleaseEvent(e);
  };
  for (const Launch& l : s.launches) {
    if (l.size.empty) continue;  // an empty range: nothing to run (OpenCL 1.2 refuses it)
    cl_event e = nullptr;
    cl_int r = cl_->clEnqueueNDRangeKernel(queue_, l.kernel, static_cast<cl_uint>(l.size.global.size()), nullptr,
                                           l.size.global.data(), l.size.local.empty() ? nullptr : l.size.local.data(), 0,
                                           nullptr, &e);
    if (r != CL_SUCCESS) {
      cl_->clFinish(queue_);
      release_events();
      if (is_execution_error(r)) checked(r, "clEnqueueNDRangeKernel", " during the call");
      throw KernelFault(ErrorKind::Crash, "the device refused to launch a kernel: " + opencl::error_name(r) +
                                              " (a local size beyond the device's limit, or too many resources?)");
    }
    events.push_back(e);
  }
  cl_int finished = cl_->clFinish(queue_);
  if (finished == CL_SUCCESS && !events.empty())
    finished = cl_->clWaitForEvents(static_cast<cl_uint>(events.size()), events.data());
  if (finished != CL_SUCCESS) {
    release_events();
    checked(finished, "clFinish", " during the call");
  }
  cl_ulong start = 0, end = 0;
  if (!events.empty()) {
    cl_int a = cl_->clGetEventProfilingInfo(events.front(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    cl_int b = cl_->clGetEventProfilingInfo(events.back(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    release_events();
    checked(a != CL_SUCCESS ? a : b, "clGetEventProfilingInfo");
  }

  for (const Placement& p : placements_)
    if (p.writable)
      checked(cl_->clEnqueueReadBuffer(queue_, device_arena_, CL_TRUE, p.device, p.end - p.begin, arena_.base + p.begin, 0,
                                       nullptr, nullptr),
              "clEnqueueReadBuffer");
  // What differs from what was written was written out of place.
  for (const Placement& p : placements_) {
    if (p.writable) continue;
    const int64_t at = first_device_difference(p.device, p.end - p.begin, arena_.base + p.begin);
    if (at >= 0) throw KernelFault(ErrorKind::OutOfBounds, "an input region changed on the device", static_cast<int64_t>(p.begin) + at);
  }
  for (const Range& g : guards_) {
    const int64_t at = first_device_difference(g.begin, g.end - g.begin, guard_image_.data());
    if (at < 0) continue;
    fill_guards();
    // Named after the region before the gap (the arena's own gaps are where the parent looks).
    uint64_t arena_at = 0;
    for (const Placement& p : placements_)
      if (p.device + (p.end - p.begin) <= g.begin) arena_at = p.end;
    throw KernelFault(ErrorKind::OutOfBounds, "a guard gap between buffers changed on the device",
                      static_cast<int64_t>(std::min<uint64_t>(arena_at, arena_.size - 1)));
  }
  return end > start ? static_cast<int64_t>(end - start) : 0;
}

void OpenCLExecutor::unload(int slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  release_slot(it->second);
  slots_.erase(it);
}

}  // namespace ekb::runtime
