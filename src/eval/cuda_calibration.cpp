#include "eval/cuda_calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "eval/launch_floor.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"

namespace ekb::eval {

namespace {

using namespace runtime::cuda;

// Independent FMA chains per thread: more than the FMA latency (4 cycles) times what a scheduler
// issues per cycle, with a full SM of warps, so that the units never wait on a result.
constexpr int kChains = 8;
constexpr int kUnroll = 16;  // chain steps per loop iteration (keeps loop overhead out of the rate)
constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kHalf2One = 0x3C003C00u;   // (1.0, 1.0) as two binary16 halves
constexpr unsigned kHalf2Half = 0x38003800u;  // (0.5, 0.5)

// x = x*m + c with m, c kernel arguments (never constant-folded); every chain's value reaches the
// output, so no chain is dead code. The f16x2 FMA is inline PTX, so that no header is needed.
const std::string kSource = R"(
#define CHAINS )" + std::to_string(kChains) + R"(
#define UNROLL )" + std::to_string(kUnroll) + R"(
typedef unsigned long long u64;

extern "C" __global__ void ekb_copy(const float4* __restrict__ src, float4* __restrict__ dst, u64 n) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

extern "C" __global__ void ekb_triad(float4* __restrict__ a, const float4* __restrict__ b,
                                     const float4* __restrict__ c, float s, u64 n) {
  const u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 x = b[i], y = c[i];
    float4 r;
    r.x = x.x + s * y.x;
    r.y = x.y + s * y.y;
    r.z = x.z + s * y.z;
    r.w = x.w + s * y.w;
    a[i] = r;
  }
}

// Nothing to do: the fixed cost of one timed call (the launch floor).
extern "C" __global__ void ekb_empty(float* out) {
  if (out && blockIdx.x == 0xffffffffu) out[threadIdx.x] = 0.0f;
}

extern "C" __global__ void ekb_fma_f32(float* out, float m, float c, int iterations) {
  float x[CHAINS];
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) x[j] = 1.0f + 0.001f * (float)(j + (threadIdx.x & 7));
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int j = 0; j < CHAINS; ++j) x[j] = fmaf(x[j], m, c);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) sum += x[j];
  out[(u64)blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

extern "C" __global__ void ekb_fma_f16x2(unsigned* out, unsigned m, unsigned c, int iterations) {
  unsigned x[CHAINS];
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) x[j] = )" + std::to_string(kHalf2One) + R"(u;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int j = 0; j < CHAINS; ++j) asm("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x[j]) : "r"(m), "r"(c));
    }
  }
  unsigned all = x[0];
#pragma unroll
  for (int j = 1; j < CHAINS; ++j) all &= x[j];
  out[(u64)blockIdx.x * blockDim.x + threadIdx.x] = all;
}
)";

const std::vector<std::string> kKernelNames = {"ekb_copy", "ekb_triad", "ekb_empty", "ekb_fma_f32", "ekb_fma_f16x2"};

// The device's primary context, a stream and two events, released in reverse order.
class GpuSession {
 public:
  explicit GpuSession(int ordinal) : props_(query_device(ordinal)), api_(driver()) {
    check(api_->cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    check(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    check(api_->cuStreamCreate(&stream_, 0), "cuStreamCreate");
    check(api_->cuEventCreate(&start_, 0), "cuEventCreate");
    check(api_->cuEventCreate(&end_, 0), "cuEventCreate");
  }
  ~GpuSession() {
    for (CUdeviceptr p : allocations_) api_->cuMemFree(p);
    if (module_) api_->cuModuleUnload(module_);
    if (start_) api_->cuEventDestroy(start_);
    if (end_) api_->cuEventDestroy(end_);
    if (stream_) api_->cuStreamDestroy(stream_);
    if (context_) api_->cuDevicePrimaryCtxRelease(device_);
  }
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const DeviceProperties& props() const { return props_; }
  const DriverApi& api() const { return *api_; }
  CUstream stream() const { return stream_; }

  void load_module(const std::string& cubin) { check(api_->cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData"); }
  CUfunction function(const std::string& name) const {
    CUfunction f = nullptr;
    check(api_->cuModuleGetFunction(&f, module_, name.c_str()), ("cuModuleGetFunction " + name).c_str());
    return f;
  }
  CUdeviceptr allocate(size_t bytes) {
    CUdeviceptr p = 0;
    check(api_->cuMemAlloc(&p, bytes), "cuMemAlloc");
    allocations_.push_back(p);
    return p;
  }
  // Milliseconds of device time that `enqueue` takes on the stream, between two events.
  template <typename Enqueue>
  double time_ms(Enqueue&& enqueue) {
    check(api_->cuEventRecord(start_, stream_), "cuEventRecord");
    enqueue();
    check(api_->cuEventRecord(end_, stream_), "cuEventRecord");
    check(api_->cuEventSynchronize(end_), "cuEventSynchronize");
    float ms = 0;
    check(api_->cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime");
    return ms;
  }
  void launch(CUfunction f, unsigned blocks, void** args) {
    check(api_->cuLaunchKernel(f, blocks, 1, 1, kThreadsPerBlock, 1, 1, 0, stream_, args, nullptr), "cuLaunchKernel");
  }
  template <typename T>
  T read(CUdeviceptr p) {
    T value{};
    check(api_->cuMemcpyDtoHAsync(&value, p, sizeof value, stream_), "cuMemcpyDtoHAsync");
    check(api_->cuStreamSynchronize(stream_), "cuStreamSynchronize");
    return value;
  }

 private:
  DeviceProperties props_;
  const DriverApi* api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, end_ = nullptr;
  CUmodule module_ = nullptr;
  std::vector<CUdeviceptr> allocations_;
};

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The rates of what `enqueue` puts on the stream (runtime::measure_rate).
template <typename Enqueue>
runtime::Measurement measure_rate(GpuSession& gpu, int runs, double amount, Enqueue&& enqueue) {
  return runtime::measure_rate(runs, amount, [&] { return gpu.time_ms(enqueue); });
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("cuda calibration: " + what + " (the measurement would not be trustworthy)");
}

size_t default_array_bytes(const DeviceProperties& p) {
  size_t bytes = std::clamp<size_t>(8 * p.l2_bytes, size_t{256} << 20, size_t{2} << 30);
  return std::min(bytes, p.memory_bytes / 8);
}

}  // namespace

const std::string& cuda_calibration_source() { return kSource; }
const std::vector<std::string>& cuda_calibration_kernel_names() { return kKernelNames; }

runtime::Calibration calibrate_cuda(const CudaCalibrationOptions& options) {
  GpuSession gpu(options.device);
  const DeviceProperties& props = gpu.props();
  const DriverApi& api = gpu.api();
  const int runs = options.quick ? 2 : std::max(1, options.runs);
  const double seconds = options.quick ? 0.002 : options.seconds_per_run;
  size_t array_bytes = options.array_bytes ? options.array_bytes
                       : options.quick     ? size_t{16} << 20
                                           : default_array_bytes(props);
  array_bytes = array_bytes / 16 * 16;

  std::string cubin, log;
  if (!runtime::cuda::nvrtc_compile_cubin(kSource, "ekb_calibration.cu", props.arch(), {"--std=c++17"}, &cubin, &log))
    throw std::runtime_error("cuda calibration: NVRTC rejected the calibration kernels for " + props.arch() + ":\n" + log);
  gpu.load_module(cubin);
  const auto t0 = std::chrono::steady_clock::now();

  // Bandwidth: a = b (copy kernel and cuMemcpyDtoD), a = b + s*c (triad).
  unsigned long long n4 = array_bytes / 16;
  CUdeviceptr a = gpu.allocate(array_bytes), b = gpu.allocate(array_bytes), c = gpu.allocate(array_bytes);
  check(api.cuMemsetD32Async(b, float_bits(1.0f), array_bytes / 4, gpu.stream()), "cuMemsetD32Async");
  check(api.cuMemsetD32Async(c, float_bits(2.0f), array_bytes / 4, gpu.stream()), "cuMemsetD32Async");
  const unsigned stream_blocks =
      static_cast<unsigned>(std::min<unsigned long long>((n4 + kThreadsPerBlock - 1) / kThreadsPerBlock, 1u << 30));
  CUfunction copy = gpu.function("ekb_copy"), triad = gpu.function("ekb_triad");
  float scalar = 3.0f;
  void* copy_args[] = {&b, &a, &n4};
  void* triad_args[] = {&a, &b, &c, &scalar, &n4};
  const double bytes = static_cast<double>(array_bytes);
  runtime::Measurement copy_gbs = measure_rate(gpu, runs, 2 * bytes, [&] { gpu.launch(copy, stream_blocks, copy_args); });
  expect(gpu.read<float>(a + array_bytes - 4) == 1.0f, "the copy kernel did not copy");
  runtime::Measurement triad_gbs = measure_rate(gpu, runs, 3 * bytes, [&] { gpu.launch(triad, stream_blocks, triad_args); });
  expect(gpu.read<float>(a + array_bytes - 4) == 7.0f, "the triad kernel computed a wrong value");
  runtime::Measurement memcpy_gbs = measure_rate(gpu, runs, 2 * bytes, [&] {
    check(api.cuMemcpyDtoDAsync(a, c, array_bytes, gpu.stream()), "cuMemcpyDtoDAsync");
  });
  expect(gpu.read<float>(a + array_bytes - 4) == 2.0f, "cuMemcpyDtoDAsync did not copy");
  // The launch floor: an empty kernel timed as the executor times a call, queued behind a 64 MiB
  // memset (its cache flush), and on an idle stream.
  CUfunction empty = gpu.function("ekb_empty");
  void* empty_args[] = {&a};
  const size_t flush_bytes = std::min<size_t>(array_bytes, size_t{64} << 20);
  auto flush = [&] { check(api.cuMemsetD8Async(c, 0, flush_bytes, gpu.stream()), "cuMemsetD8Async"); };
  auto launch_empty = [&] { gpu.launch(empty, 1, empty_args); };
  const nlohmann::json launch = launch_floor_json(
      options.quick ? 5 : 101, {{"idle", [&] { return gpu.time_ms(launch_empty); }},
                                {"after_flush", [&] { flush(); return gpu.time_ms(launch_empty); }},
                                {"two_after_flush", [&] {
                                   flush();
                                   return gpu.time_ms([&] { launch_empty(); launch_empty(); });
                                 }}});
  const auto t1 = std::chrono::steady_clock::now();

  // Peak rates: 8 blocks of 256 threads per SM (2048 threads, a full SM on every recent GPU).
  const unsigned fma_blocks = static_cast<unsigned>(std::max(1, props.multiprocessors)) * 8;
  const double threads = static_cast<double>(fma_blocks) * kThreadsPerBlock;
  CUdeviceptr sink = gpu.allocate(static_cast<size_t>(threads) * 4);
  // Iterations chosen from a short probe run so that one timed run lasts about `seconds`.
  auto measure_fma = [&](const char* kernel, void* m, void* addend, double flops_per_step) {
    CUfunction f = gpu.function(kernel);
    int iterations = 64;
    void* args[] = {&sink, m, addend, &iterations};
    const double probe_ms = std::max(1e-3, gpu.time_ms([&] { gpu.launch(f, fma_blocks, args); }));
    iterations = static_cast<int>(std::clamp(64 * seconds * 1e3 / probe_ms, 64.0, double{1 << 24}));
    const double flops = flops_per_step * kUnroll * kChains * iterations * threads;
    return measure_rate(gpu, runs, flops, [&] { gpu.launch(f, fma_blocks, args); });
  };
  float m = 0.999f, addend = 0.001f;
  runtime::Measurement fp32 = measure_fma("ekb_fma_f32", &m, &addend, 2);
  const float chain_sum = gpu.read<float>(sink);
  expect(std::isfinite(chain_sum) && chain_sum > 0.99f * kChains && chain_sum < 1.02f * kChains,
         "the FP32 FMA chains ended at " + std::to_string(chain_sum));
  unsigned half_m = kHalf2Half, half_addend = kHalf2Half;
  runtime::Measurement fp16 = measure_fma("ekb_fma_f16x2", &half_m, &half_addend, 4);
  expect(gpu.read<unsigned>(sink) == kHalf2One, "the f16x2 FMA chains left their fixed point");
  const auto t2 = std::chrono::steady_clock::now();

  runtime::Calibration cal;
  cal.backend = "cuda";
  cal.device = runtime::cuda_device_name(props);
  cal.created = runtime::utc_timestamp_now();
  cal.bandwidth_gbs = copy_gbs;
  for (const runtime::Measurement* m : {&triad_gbs, &memcpy_gbs})
    if (m->best > cal.bandwidth_gbs.best) cal.bandwidth_gbs = *m;
  cal.peak_gflops = fp32;
  int nvrtc_major = 0, nvrtc_minor = 0;
  runtime::cuda::nvrtc()->nvrtcVersion(&nvrtc_major, &nvrtc_minor);
  cal.details = {{"quick", options.quick},
                 {"gpu", props.name},
                 {"arch", props.arch()},
                 {"multiprocessors", props.multiprocessors},
                 {"l2_bytes", props.l2_bytes},
                 {"nvrtc", std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor)},
                 {"bandwidth",
                  {{"array_bytes", array_bytes},
                   {"copy_kernel_gbs", to_json(copy_gbs)},
                   {"triad_kernel_gbs", to_json(triad_gbs)},
                   {"memcpy_gbs", to_json(memcpy_gbs)}}},
                 {"launch", launch},
                 {"fp32_fma_gflops", to_json(fp32)},
                 {"fp16x2_fma_gflops", to_json(fp16)},
                 {"seconds",
                  {{"bandwidth", std::chrono::duration<double>(t1 - t0).count()},
                   {"fma", std::chrono::duration<double>(t2 - t1).count()}}}};
  return cal;
}

}  // namespace ekb::eval
