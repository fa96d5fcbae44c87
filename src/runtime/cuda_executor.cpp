#include "runtime/cuda_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/abi_call.h"

namespace ekb::runtime {

namespace {

using cuda::CUDA_SUCCESS;
using cuda::CUdeviceptr;
using cuda::CUresult;

// Guard bytes hold this 32-bit pattern: bytes that vary, so that writing any constant changes some.
constexpr unsigned kGuardPattern = 0x5BA5C3E1u;
// Unmapped address space before and after every buffer's mapping: an access this far from a buffer
// faults instead of landing in memory it could change unseen. Address space is not memory.
constexpr size_t kUnmappedGapBytes = size_t{1} << 30;

// The harness's own kernel: the first 32-bit word of words[0, n) that is not `pattern`, as an
// atomic minimum into *first (set to ~0 beforehand). Written in CUDA C as
//   for (i = global thread index; i < n; i += grid size) if (words[i] != pattern) atomicMin(first, i);
// and kept as PTX (ISA 7.0, sm_52: any driver from CUDA 11.0 on compiles it for its device), so
// that neither the build nor the worker needs a CUDA compiler.
constexpr const char* kFirstOtherWordPtx = R"(.version 7.0
.target sm_52
.address_size 64
.visible .entry ekb_first_other_word(.param .u64 words, .param .u64 n, .param .u32 pattern, .param .u64 first)
{
  .reg .pred %p<4>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<18>;
  ld.param.u64 %rd8, [words];
  ld.param.u64 %rd9, [n];
  ld.param.u32 %r1, [pattern];
  ld.param.u64 %rd10, [first];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  cvt.u64.u32 %rd1, %r3;
  mul.wide.u32 %rd11, %r2, %r3;
  mov.u32 %r4, %tid.x;
  cvt.u64.u32 %rd12, %r4;
  add.s64 %rd17, %rd11, %rd12;
  setp.ge.u64 %p1, %rd17, %rd9;
  @%p1 bra DONE;
  mov.u32 %r5, %nctaid.x;
  cvt.u64.u32 %rd13, %r5;
  mul.lo.s64 %rd3, %rd13, %rd1;
  cvta.to.global.u64 %rd4, %rd8;
  cvta.to.global.u64 %rd5, %rd10;
NEXT:
  shl.b64 %rd14, %rd17, 2;
  add.s64 %rd15, %rd4, %rd14;
  ld.global.u32 %r6, [%rd15];
  setp.eq.s32 %p2, %r6, %r1;
  @%p2 bra SAME;
  atom.global.min.u64 %rd16, [%rd5], %rd17;
SAME:
  add.s64 %rd17, %rd17, %rd3;
  setp.lt.u64 %p3, %rd17, %rd9;
  @%p3 bra NEXT;
DONE:
  ret;
}
)";

size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

}  // namespace

void CudaExecutor::checked(CUresult r, const char* what, const char* during) {
  if (r == CUDA_SUCCESS) return;
  std::string message = std::string(what) + ": " + cuda::error_text(r);
  if (cuda::is_sticky_error(r)) {
    // For the parent's log too: the worker exits right after its reply.
    std::fprintf(stderr, "ekb worker: sticky CUDA error%s: %s\n", during, message.c_str());
    // Every buffer lies between unmapped gaps: an illegal address is an access outside them.
    if (r == cuda::CUDA_ERROR_ILLEGAL_ADDRESS)
      throw KernelFault(ErrorKind::OutOfBounds,
                        "the kernel accessed device memory outside its buffers: the device reported " +
                            cuda::error_text(r) + during + " (the worker is replaced)",
                        -1, true);
    throw KernelFault(ErrorKind::Crash, "the device reported " + cuda::error_text(r) + during +
                                            " (the worker is replaced)",
                      -1, true);
  }
  if (candidate_ran_) {
    // The same calls succeeded before the candidate's code ran: it broke what they use.
    require_intact_context("candidate code");
    std::fprintf(stderr, "ekb worker: %s after candidate code ran\n", message.c_str());
    throw KernelFault(ErrorKind::Crash, "after the candidate's code ran, the harness's own " + message +
                                            " (the kernel left the CUDA context broken; the worker is replaced)",
                      -1, true);
  }
  throw ExecutorError(message);
}

void CudaExecutor::require_intact_context(const char* who) {
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "ekb worker: %s\n", what.c_str());
    throw KernelFault(ErrorKind::Crash, what + " (the worker is replaced)", -1, true);
  };
  // A sticky error the probes run into is the kernel's fault, reported as such.
  auto probe = [&](CUresult r) {
    if (cuda::is_sticky_error(r)) checked(r, "checking the context", " during the call");
    return r == CUDA_SUCCESS;
  };
  unsigned flags = 0;
  int active = 0;
  bool intact = probe(api_->cuDevicePrimaryCtxGetState(device_, &flags, &active)) && active;
  if (intact && context_id_) {
    unsigned long long id = 0;
    intact = probe(api_->cuCtxGetId(context_, &id)) && id == context_id_;
  }
  if (intact && probe_mapped_) {
    // A context reset and then used again is active, but the harness's memory went with it.
    int mapped = 0;
    intact = probe(api_->cuPointerGetAttribute(&mapped, cuda::kPointerAttributeMapped, flush_buffer_)) && mapped;
  }
  if (!intact)
    fail(std::string(who) + " destroyed the CUDA context it was given (cudaDeviceReset?): the harness's " +
         "buffers and stream went with it; a kernel must leave the device as it found it");
  cuda::CUcontext current = nullptr;
  if (!probe(api_->cuCtxGetCurrent(&current)) || current != context_)
    fail(std::string(who) + " left another CUDA context current (cudaSetDevice, cuCtxSetCurrent, cuCtxCreate?): " +
         "a kernel must run in the context and on the stream it is given");
  candidate_ran_ = false;
}

CudaExecutor::CudaExecutor() {
  cuda::DeviceProperties props;
  try {
    props = cuda::query_device();
  } catch (const std::exception& e) {
    throw ExecutorError(e.what());
  }
  api_ = cuda::driver();
  checked(api_->cuDeviceGet(&device_, props.ordinal), "cuDeviceGet");
  int vmm = 0;
  checked(api_->cuDeviceGetAttribute(&vmm, cuda::kAttrVirtualMemoryManagementSupported, device_), "cuDeviceGetAttribute");
  if (!vmm)
    throw ExecutorError(props.name + " does not support CUDA virtual memory management (cuMemCreate, cuMemMap), "
                        "which the cuda backend needs to place every buffer between unmapped gaps");
  // The primary context: the one the CUDA runtime inside a solution's shared object uses.
  checked(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  checked(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  if (api_->cuCtxGetId && api_->cuCtxGetId(context_, &context_id_) != CUDA_SUCCESS) context_id_ = 0;
  // A blocking stream: work a kernel puts on the legacy default stream is ordered with it, so timed.
  checked(api_->cuStreamCreate(&stream_, 0), "cuStreamCreate");
  checked(api_->cuEventCreate(&start_, 0), "cuEventCreate");
  checked(api_->cuEventCreate(&end_, 0), "cuEventCreate");
  checked(api_->cuModuleLoadData(&check_module_, kFirstOtherWordPtx), "cuModuleLoadData (the harness's check kernel)");
  checked(api_->cuModuleGetFunction(&first_other_word_, check_module_, "ekb_first_other_word"), "cuModuleGetFunction");
  flush_bytes_ = round_up(std::max<size_t>(2 * props.l2_bytes, 64u << 20), 4);
  checked(api_->cuMemAlloc(&flush_buffer_, flush_bytes_), "cuMemAlloc (L2 flush buffer)");
  checked(api_->cuMemsetD8Async(flush_buffer_, static_cast<unsigned char>(flush_round_), flush_bytes_, stream_),
          "cuMemsetD8Async (L2 flush buffer)");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
  int mapped = 0;
  probe_mapped_ = api_->cuPointerGetAttribute(&mapped, cuda::kPointerAttributeMapped, flush_buffer_) == CUDA_SUCCESS &&
                  mapped;
  cuda::CUmemAllocationProp prop{};
  prop.type = cuda::kMemAllocationTypePinned;
  prop.location = {cuda::kMemLocationTypeDevice, device_};
  checked(api_->cuMemGetAllocationGranularity(&granularity_, &prop, cuda::kMemGranularityMinimum),
          "cuMemGetAllocationGranularity");
}

CudaExecutor::~CudaExecutor() {
  for (auto& [slot, s] : slots_) close_kernel_library(s.library);
  if (!api_) return;
  unmap_buffers();
  if (check_results_) api_->cuMemFree(check_results_);
  if (check_module_) api_->cuModuleUnload(check_module_);
  if (flush_buffer_) api_->cuMemFree(flush_buffer_);
  if (start_) api_->cuEventDestroy(start_);
  if (end_) api_->cuEventDestroy(end_);
  if (stream_) api_->cuStreamDestroy(stream_);
  if (context_) api_->cuDevicePrimaryCtxRelease(device_);
}

int64_t CudaExecutor::load(int slot, int artifact_fd, const std::vector<int64_t>& params) {
  unload(slot);
  Slot s;
  candidate_ran_ = true;
  s.library = open_kernel_library(artifact_fd, params);  // runs its static constructors (cudart's)
  int64_t scratch = s.library.scratch_bytes;
  slots_[slot] = std::move(s);
  require_intact_context("the solution's static constructors or ekb_scratch_bytes");
  return scratch;
}

void CudaExecutor::fill_guards() {
  for (const DeviceRegion& d : regions_)
    if (d.guard_bytes() > 0)
      checked(api_->cuMemsetD32Async(d.mapping, kGuardPattern, d.guard_bytes() / 4, stream_), "cuMemsetD32Async (guards)");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void CudaExecutor::unmap_buffers() {
  for (const DeviceRegion& d : regions_) {
    if (d.mapping) api_->cuMemUnmap(d.mapping, d.mapped_bytes);
    if (d.memory) api_->cuMemRelease(d.memory);
  }
  regions_.clear();
  if (reservation_) api_->cuMemAddressFree(reservation_, reserved_bytes_);
  reservation_ = 0;
  reserved_bytes_ = 0;
}

void CudaExecutor::map_buffers(const ArenaView& arena) {
  if (reservation_ && arena.base == arena_.base && arena.size == arena_.size) return;
  unmap_buffers();
  arena_ = arena;
  regions_.clear();
  size_t reserve = kUnmappedGapBytes;
  for (const ArenaRegion& r : arena.regions) {
    DeviceRegion d;
    d.arena = r;
    d.mapped_bytes = round_up(std::max<size_t>(r.end - r.begin, 1), granularity_);
    reserve += d.mapped_bytes + kUnmappedGapBytes;
    regions_.push_back(d);
  }
  checked(api_->cuMemAddressReserve(&reservation_, reserve, granularity_, 0, 0), "cuMemAddressReserve");
  reserved_bytes_ = reserve;
  cuda::CUmemAllocationProp prop{};
  prop.type = cuda::kMemAllocationTypePinned;
  prop.location = {cuda::kMemLocationTypeDevice, device_};
  cuda::CUmemAccessDesc access{{cuda::kMemLocationTypeDevice, device_}, cuda::kMemAccessReadWrite};
  CUdeviceptr at = reservation_ + kUnmappedGapBytes;
  for (DeviceRegion& d : regions_) {
    CUresult r = api_->cuMemCreate(&d.memory, d.mapped_bytes, &prop, 0);
    if (r != CUDA_SUCCESS) {
      d.memory = 0;
      unmap_buffers();
      throw KernelFault(ErrorKind::Memory, "cannot allocate the kernel's buffers in device memory (" +
                                               std::to_string(arena.size >> 20) + " MiB): " + cuda::error_text(r));
    }
    checked(api_->cuMemMap(at, d.mapped_bytes, 0, d.memory, 0), "cuMemMap");
    d.mapping = at;
    checked(api_->cuMemSetAccess(at, d.mapped_bytes, &access, 1), "cuMemSetAccess");
    at += d.mapped_bytes + kUnmappedGapBytes;
  }
  if (check_results_) checked(api_->cuMemFree(check_results_), "cuMemFree");
  check_results_ = 0;
  checked(api_->cuMemAlloc(&check_results_, sizeof(uint64_t) * (regions_.size() + 1)), "cuMemAlloc (check results)");
  fill_guards();
}

CUdeviceptr CudaExecutor::device_address(uint64_t arena_offset) const {
  for (const DeviceRegion& d : regions_)
    if (arena_offset >= d.arena.begin && arena_offset < d.arena.end) return d.begin() + (arena_offset - d.arena.begin);
  throw ExecutorError("attach: a pointer outside every buffer region");
}

void CudaExecutor::attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("attach: slot " + std::to_string(slot) + " is empty");
  if (args.size() + 1 > kMaxKernelArgs) throw ExecutorError("more than 64 kernel arguments");
  map_buffers(arena);
  Slot& s = it->second;
  s.args.clear();
  s.may_write.assign(regions_.size(), false);
  for (const KernelArg& a : args) {
    if (!a.is_pointer) {
      s.args.push_back(a.value);
      continue;
    }
    s.args.push_back(device_address(a.value));
    for (size_t i = 0; i < regions_.size(); ++i)
      if (a.value >= regions_[i].arena.begin && a.value < regions_[i].arena.end && regions_[i].arena.writable)
        s.may_write[i] = true;
  }
  // The ABI puts the stream after the params, before the scratch pointer (the last argument).
  const bool has_scratch = s.library.scratch_bytes >= 0;
  if (has_scratch && s.args.empty()) throw ExecutorError("attach: no scratch argument");
  s.args.insert(has_scratch ? s.args.end() - 1 : s.args.end(), reinterpret_cast<uint64_t>(stream_));
}

int64_t CudaExecutor::first_device_difference(CUdeviceptr at, size_t n, const uint8_t* expected) {
  staging_.resize(std::max(staging_.size(), n));
  checked(api_->cuMemcpyDtoHAsync(staging_.data(), at, n, stream_), "cuMemcpyDtoHAsync");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
  if (std::memcmp(staging_.data(), expected, n) == 0) return -1;
  for (size_t k = 0; k < n; ++k)
    if (staging_[k] != expected[k]) return static_cast<int64_t>(k);
  return -1;
}

void CudaExecutor::check_memory_beside_buffers(bool flush_buffer_too) {
  // Range k < regions_.size(): the guard bytes before region k; the last: the flush buffer.
  const size_t n_ranges = regions_.size() + 1;
  checked(api_->cuMemsetD32Async(check_results_, 0xFFFFFFFFu, 2 * n_ranges, stream_), "cuMemsetD32Async (check)");
  auto launch = [&](CUdeviceptr words, uint64_t n, unsigned pattern, size_t k) {
    if (n == 0) return;
    CUdeviceptr result = check_results_ + sizeof(uint64_t) * k;
    void* params[] = {&words, &n, &pattern, &result};
    const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>((n + 255) / 256, 4096));
    checked(api_->cuLaunchKernel(first_other_word_, blocks, 1, 1, 256, 1, 1, 0, stream_, params, nullptr),
            "cuLaunchKernel (the harness's check kernel)");
  };
  for (size_t k = 0; k < regions_.size(); ++k) launch(regions_[k].mapping, regions_[k].guard_bytes() / 4, kGuardPattern, k);
  const unsigned flush_word = 0x01010101u * static_cast<unsigned char>(flush_round_);
  if (flush_buffer_too) launch(flush_buffer_, flush_bytes_ / 4, flush_word, regions_.size());
  std::vector<uint64_t> first(n_ranges);
  checked(api_->cuMemcpyDtoHAsync(first.data(), check_results_, sizeof(uint64_t) * n_ranges, stream_),
          "cuMemcpyDtoHAsync (check)");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");

  if (first.back() != ~uint64_t{0})
    throw KernelFault(ErrorKind::OutOfBounds,
                      "the kernel wrote device memory outside its buffers: the harness's L2-flush buffer changed "
                      "(at byte " + std::to_string(4 * first.back()) + ")");
  for (size_t k = 0; k < regions_.size(); ++k) {
    if (first[k] == ~uint64_t{0}) continue;
    fill_guards();
    // Bytes before the region's start; named as an offset in the arena where the arena's own gap
    // before the region still attributes it to this buffer (the nearer one), else in words.
    const DeviceRegion& d = regions_[k];
    const uint64_t before = d.guard_bytes() - 4 * first[k];
    const uint64_t gap_before = d.arena.begin - (k > 0 ? regions_[k - 1].arena.end : 0);
    if (before < gap_before / 2)
      throw KernelFault(ErrorKind::OutOfBounds, "a guard before a buffer changed on the device",
                        static_cast<int64_t>(d.arena.begin - before));
    throw KernelFault(ErrorKind::OutOfBounds, "the kernel wrote device memory " + std::to_string(before) +
                                                  " bytes before the region of the buffer at arena offset " +
                                                  std::to_string(d.arena.begin) + " (its guard bytes changed)");
  }
}

int64_t CudaExecutor::run(int slot, bool flush, size_t /*scrub_bytes*/) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("run: slot " + std::to_string(slot) + " is empty");
  if (!reservation_) throw ExecutorError("run before attach");
  Slot& s = it->second;
  checked(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");

  for (const DeviceRegion& d : regions_)
    checked(api_->cuMemcpyHtoDAsync(d.begin(), arena_.base + d.arena.begin, d.arena.end - d.arena.begin, stream_),
            "cuMemcpyHtoDAsync");
  if (flush) {
    if (api_->cuCtxResetPersistingL2Cache) api_->cuCtxResetPersistingL2Cache();
    // A different value each time, so that no cache can treat the writes as a no-op.
    checked(api_->cuMemsetD8Async(flush_buffer_, static_cast<unsigned char>(++flush_round_), flush_bytes_, stream_),
            "cuMemsetD8Async (L2 flush)");
  }

  checked(api_->cuEventRecord(start_, stream_), "cuEventRecord");
  candidate_ran_ = true;
  call_void_u64(s.library.entry, s.args.data(), s.args.size());
  require_intact_context("ekb_main");
  candidate_ran_ = true;  // what it left running may still break the context
  checked(api_->cuEventRecord(end_, stream_), "cuEventRecord", " after ekb_main returned");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize", " during the call");
  float ms = 0;
  checked(api_->cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");

  for (size_t k = 0; k < regions_.size(); ++k)
    if (s.may_write[k])
      checked(api_->cuMemcpyDtoHAsync(arena_.base + regions_[k].arena.begin, regions_[k].begin(),
                                      regions_[k].arena.end - regions_[k].arena.begin, stream_),
              "cuMemcpyDtoHAsync");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
  checked(api_->cuCtxSynchronize(), "cuCtxSynchronize", " in work ekb_main left on another stream");

  // Now nothing runs on the device: what changed since the stream finished was written by work
  // the call left behind, and what differs from the copies sent was written out of place.
  for (size_t k = 0; k < regions_.size(); ++k) {
    const DeviceRegion& d = regions_[k];
    int64_t at = first_device_difference(d.begin(), d.arena.end - d.arena.begin, arena_.base + d.arena.begin);
    if (at < 0) continue;
    at += static_cast<int64_t>(d.arena.begin);
    if (s.may_write[k])
      throw KernelFault(ErrorKind::AsyncWrite,
                        "device memory changed after the work on the harness's stream had finished "
                        "(ekb_main left work on another stream)",
                        at);
    // An input (named as such by the parent) or a buffer of the other slot.
    throw KernelFault(ErrorKind::OutOfBounds, "a buffer the kernel was not given changed on the device", at);
  }
  check_memory_beside_buffers(flush);
  candidate_ran_ = false;
  return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
}

void CudaExecutor::unload(int slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  close_kernel_library(it->second.library);
  slots_.erase(it);
}

}  // namespace ekb::runtime
