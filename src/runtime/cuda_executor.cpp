#include "runtime/cuda_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/abi_call.h"

namespace ekb::runtime {

namespace {

using cuda::CUresult;
using cuda::CUDA_SUCCESS;
using eval::ErrorKind;

// Guard gaps hold this 32-bit pattern: bytes that vary, so that writing any constant changes some.
constexpr unsigned kGuardPattern = 0x5BA5C3E1u;

}  // namespace

void CudaExecutor::checked(CUresult r, const char* what, const char* during) {
  if (r == CUDA_SUCCESS) return;
  std::string message = std::string(what) + ": " + cuda::error_text(r);
  if (cuda::is_sticky_error(r)) {
    // For the parent's log too: the worker exits right after its reply.
    std::fprintf(stderr, "ekb worker: sticky CUDA error%s: %s\n", during, message.c_str());
    throw KernelFault(ErrorKind::Crash, "the device reported " + cuda::error_text(r) + during +
                                            " (the worker is replaced)",
                      -1, true);
  }
  throw ExecutorError(message);
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
  // The primary context: the one the CUDA runtime inside a solution's shared object uses.
  checked(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  checked(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  // A blocking stream: work a kernel puts on the legacy default stream is ordered with it, so timed.
  checked(api_->cuStreamCreate(&stream_, 0), "cuStreamCreate");
  checked(api_->cuEventCreate(&start_, 0), "cuEventCreate");
  checked(api_->cuEventCreate(&end_, 0), "cuEventCreate");
  flush_bytes_ = std::max<size_t>(2 * props.l2_bytes, 64u << 20);
  checked(api_->cuMemAlloc(&flush_buffer_, flush_bytes_), "cuMemAlloc (L2 flush buffer)");
}

CudaExecutor::~CudaExecutor() {
  for (auto& [slot, s] : slots_) close_kernel_library(s.library);
  if (!api_) return;
  if (arena_device_) api_->cuMemFree(arena_device_);
  if (flush_buffer_) api_->cuMemFree(flush_buffer_);
  if (start_) api_->cuEventDestroy(start_);
  if (end_) api_->cuEventDestroy(end_);
  if (stream_) api_->cuStreamDestroy(stream_);
  if (context_) api_->cuDevicePrimaryCtxRelease(device_);
}

int64_t CudaExecutor::load(int slot, int artifact_fd, const std::vector<int64_t>& params) {
  unload(slot);
  Slot s;
  s.library = open_kernel_library(artifact_fd, params);  // runs its static constructors (cudart's)
  int64_t scratch = s.library.scratch_bytes;
  slots_[slot] = std::move(s);
  return scratch;
}

void CudaExecutor::fill_guards() {
  for (const Range& g : guards_)
    checked(api_->cuMemsetD32Async(arena_device_ + g.begin, kGuardPattern, (g.end - g.begin) / 4, stream_),
            "cuMemsetD32Async (guard gaps)");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void CudaExecutor::mirror(const ArenaView& arena) {
  if (arena_device_ && arena.base == arena_.base && arena.size == arena_.size) return;
  if (arena_device_) checked(api_->cuMemFree(arena_device_), "cuMemFree");
  arena_device_ = 0;
  arena_ = arena;
  CUresult r = api_->cuMemAlloc(&arena_device_, arena.size);
  if (r != CUDA_SUCCESS) {
    arena_device_ = 0;
    throw KernelFault(ErrorKind::Memory, "cannot allocate the kernel's buffers in device memory (" +
                                             std::to_string(arena.size >> 20) + " MiB): " + cuda::error_text(r));
  }
  // The gaps: everything of the arena outside the regions (page-aligned, so whole 32-bit words).
  guards_.clear();
  std::vector<ArenaRegion> regions = arena.regions;
  std::sort(regions.begin(), regions.end(), [](const ArenaRegion& a, const ArenaRegion& b) { return a.begin < b.begin; });
  uint64_t at = 0;
  size_t longest = 0;
  for (const ArenaRegion& reg : regions) {
    if (reg.begin > at) guards_.push_back({at, reg.begin});
    at = std::max(at, reg.end);
  }
  if (arena.size > at) guards_.push_back({at, arena.size});
  for (const Range& g : guards_) longest = std::max<size_t>(longest, g.end - g.begin);
  guard_image_.resize(longest);
  for (size_t k = 0; k < longest; k += 4) {
    unsigned word = kGuardPattern;
    std::memcpy(guard_image_.data() + k, &word, std::min<size_t>(4, longest - k));
  }
  fill_guards();
}

void CudaExecutor::attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("attach: slot " + std::to_string(slot) + " is empty");
  if (args.size() + 1 > kMaxKernelArgs) throw ExecutorError("more than 64 kernel arguments");
  mirror(arena);
  Slot& s = it->second;
  s.args.clear();
  for (const KernelArg& a : args) {
    if (a.is_pointer && a.value >= arena.size) throw ExecutorError("attach: pointer outside the arena");
    s.args.push_back(a.is_pointer ? arena_device_ + a.value : a.value);
  }
  // The ABI puts the stream after the params, before the scratch pointer (the last argument).
  const bool has_scratch = s.library.scratch_bytes >= 0;
  if (has_scratch && s.args.empty()) throw ExecutorError("attach: no scratch argument");
  s.args.insert(has_scratch ? s.args.end() - 1 : s.args.end(), reinterpret_cast<uint64_t>(stream_));
}

int64_t CudaExecutor::first_device_difference(uint64_t begin, uint64_t end, const uint8_t* expected) {
  const size_t n = end - begin;
  staging_.resize(std::max(staging_.size(), n));
  checked(api_->cuMemcpyDtoHAsync(staging_.data(), arena_device_ + begin, n, stream_), "cuMemcpyDtoHAsync");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
  if (std::memcmp(staging_.data(), expected, n) == 0) return -1;
  for (size_t k = 0; k < n; ++k)
    if (staging_[k] != expected[k]) return static_cast<int64_t>(begin + k);
  return -1;
}

int64_t CudaExecutor::run(int slot, bool flush, size_t /*scrub_bytes*/) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) throw ExecutorError("run: slot " + std::to_string(slot) + " is empty");
  if (!arena_device_) throw ExecutorError("run before attach");
  Slot& s = it->second;
  checked(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");

  for (const ArenaRegion& r : arena_.regions)
    checked(api_->cuMemcpyHtoDAsync(arena_device_ + r.begin, arena_.base + r.begin, r.end - r.begin, stream_),
            "cuMemcpyHtoDAsync");
  if (flush) {
    if (api_->cuCtxResetPersistingL2Cache) api_->cuCtxResetPersistingL2Cache();
    // A different value each time, so that no cache can treat the writes as a no-op.
    checked(api_->cuMemsetD8Async(flush_buffer_, static_cast<unsigned char>(++flush_round_), flush_bytes_, stream_),
            "cuMemsetD8Async (L2 flush)");
  }

  checked(api_->cuEventRecord(start_, stream_), "cuEventRecord");
  call_void_u64(s.library.entry, s.args.data(), s.args.size());
  checked(api_->cuEventRecord(end_, stream_), "cuEventRecord", " after ekb_main returned");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize", " during the call");
  float ms = 0;
  checked(api_->cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");

  for (const ArenaRegion& r : arena_.regions)
    if (r.writable)
      checked(api_->cuMemcpyDtoHAsync(arena_.base + r.begin, arena_device_ + r.begin, r.end - r.begin, stream_),
              "cuMemcpyDtoHAsync");
  checked(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
  checked(api_->cuCtxSynchronize(), "cuCtxSynchronize", " in work ekb_main left on another stream");

  // Now nothing runs on the device: what changed since the stream finished was written by work
  // the call left behind, and what differs from the copies sent was written out of place.
  for (const ArenaRegion& r : arena_.regions) {
    int64_t at = first_device_difference(r.begin, r.end, arena_.base + r.begin);
    if (at < 0) continue;
    if (r.writable)
      throw KernelFault(ErrorKind::AsyncWrite,
                        "device memory changed after the work on the harness's stream had finished "
                        "(ekb_main left work on another stream)",
                        at);
    throw KernelFault(ErrorKind::OutOfBounds, "an input region changed on the device", at);
  }
  for (const Range& g : guards_) {
    int64_t at = first_device_difference(g.begin, g.end, guard_image_.data());
    if (at < 0) continue;
    fill_guards();
    throw KernelFault(ErrorKind::OutOfBounds, "a guard gap changed on the device", at);
  }
  return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
}

void CudaExecutor::unload(int slot) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  close_kernel_library(it->second.library);
  slots_.erase(it);
}

}  // namespace ekb::runtime
