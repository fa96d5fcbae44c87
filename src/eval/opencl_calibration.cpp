#include "eval/opencl_calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "eval/launch_floor.h"
#include "runtime/opencl_backend.h"
#include "runtime/opencl_program.h"

namespace ekb::eval {

namespace {

namespace cl = runtime::opencl;

constexpr int kChains = 8;   // independent float4 FMA chains per work-item (see cuda_calibration.cpp)
constexpr int kUnroll = 16;  // chain steps per loop iteration
constexpr size_t kGroup = 256;

const std::string kSource = R"(
#define CHAINS )" + std::to_string(kChains) + R"(
#define UNROLL )" + std::to_string(kUnroll) + R"(

__kernel void ekb_copy(__global const float4* restrict src, __global float4* restrict dst, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[i];
}

__kernel void ekb_triad(__global float4* restrict a, __global const float4* restrict b,
                        __global const float4* restrict c, float s, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = b[i] + s * c[i];
}

// Nothing to do: the fixed cost of one timed call (the launch floor).
__kernel void ekb_empty(__global float* out) {
  if (get_group_id(0) == 0xffffffffu) out[get_local_id(0)] = 0.0f;
}

// float4 chains: explicit SIMD for CPU devices (PoCL does not vectorize this loop across
// work-items), four independent scalar FMAs on GPUs.
__kernel void ekb_fma_f32(__global float* out, float m, float c, int iterations) {
  float4 x[CHAINS];
  const float4 m4 = (float4)(m), c4 = (float4)(c);
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) x[j] = 1.0f + 0.001f * (float4)(j, j + 1, j + 2, j + 3) + 0.001f * (get_local_id(0) & 3);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int j = 0; j < CHAINS; ++j) x[j] = fma(x[j], m4, c4);
    }
  }
  float4 sum = (float4)(0.0f);
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) sum += x[j];
  out[get_global_id(0)] = (sum.x + sum.y + sum.z + sum.w) * 0.25f;
}
)";

const std::vector<std::string> kKernelNames = {"ekb_copy", "ekb_triad", "ekb_empty", "ekb_fma_f32"};

// A context, a profiling in-order queue and the built program on one device, released in reverse.
class ClSession {
 public:
  explicit ClSession(const cl::Device& device) : api_(cl::api()), device_(device) {
    cl_int err = CL_SUCCESS;
    context_ = api_->clCreateContext(nullptr, 1, &device_.id, nullptr, nullptr, &err);
    cl::check(err, "clCreateContext");
    queue_ = api_->clCreateCommandQueue(context_, device_.id, CL_QUEUE_PROFILING_ENABLE, &err);
    cl::check(err, "clCreateCommandQueue");
    const char* text = kSource.c_str();
    const size_t length = kSource.size();
    program_ = api_->clCreateProgramWithSource(context_, 1, &text, &length, &err);
    cl::check(err, "clCreateProgramWithSource");
    if (api_->clBuildProgram(program_, 1, &device_.id, cl::default_build_options().c_str(), nullptr, nullptr) != CL_SUCCESS)
      throw std::runtime_error("opencl calibration: the calibration kernels did not build on " + device_.name + ":\n" +
                               cl::build_log(program_, device_.id));
  }
  ~ClSession() {
    for (cl_kernel k : kernels_) api_->clReleaseKernel(k);
    for (cl_mem m : buffers_) api_->clReleaseMemObject(m);
    if (program_) api_->clReleaseProgram(program_);
    if (queue_) api_->clReleaseCommandQueue(queue_);
    if (context_) api_->clReleaseContext(context_);
  }
  ClSession(const ClSession&) = delete;
  ClSession& operator=(const ClSession&) = delete;

  const cl::Api& api() const { return *api_; }
  cl_command_queue queue() const { return queue_; }

  cl_mem allocate(size_t bytes) {
    cl_int err = CL_SUCCESS;
    cl_mem m = api_->clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    cl::check(err, "clCreateBuffer");
    buffers_.push_back(m);
    return m;
  }
  void fill(cl_mem m, float value, size_t bytes) {
    cl::check(api_->clEnqueueFillBuffer(queue_, m, &value, sizeof value, 0, bytes, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
  }
  // The kernel with its arguments set, in order (each a pointer to the value and its size).
  cl_kernel kernel(const char* name, std::initializer_list<std::pair<const void*, size_t>> args) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = api_->clCreateKernel(program_, name, &err);
    cl::check(err, "clCreateKernel");
    kernels_.push_back(k);
    cl_uint i = 0;
    for (const auto& [value, size] : args) cl::check(api_->clSetKernelArg(k, i++, size, value), "clSetKernelArg");
    return k;
  }
  // Milliseconds between the start and the end of the one command `enqueue` puts on the queue.
  template <typename Enqueue>
  double time_ms(Enqueue&& enqueue) {
    cl_event event = nullptr;
    enqueue(&event);
    return span_ms({event});
  }
  // Milliseconds from the first command's start to the last one's end; releases the events.
  double span_ms(const std::vector<cl_event>& events) {
    cl::check(api_->clWaitForEvents(static_cast<cl_uint>(events.size()), events.data()), "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    cl::check(api_->clGetEventProfilingInfo(events.front(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
              "clGetEventProfilingInfo");
    cl::check(api_->clGetEventProfilingInfo(events.back(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
              "clGetEventProfilingInfo");
    for (cl_event e : events) api_->clReleaseEvent(e);
    return static_cast<double>(end - start) * 1e-6;
  }
  void launch(cl_kernel k, size_t global, cl_event* event) {
    cl::check(api_->clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &kGroup, 0, nullptr, event),
              "clEnqueueNDRangeKernel");
  }
  template <typename T>
  T read(cl_mem m, size_t offset) {
    T value{};
    cl::check(api_->clEnqueueReadBuffer(queue_, m, CL_TRUE, offset, sizeof value, &value, 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
    return value;
  }

 private:
  const cl::Api* api_;
  cl::Device device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> buffers_;
};

// The rates of the command `enqueue` puts on the queue (runtime::measure_rate); a run is at least a
// nanosecond, so that a profiling clock coarser than the run gives no infinite rate.
template <typename Enqueue>
runtime::Measurement measure_rate(ClSession& s, int runs, double amount, Enqueue&& enqueue) {
  return runtime::measure_rate(runs, amount, [&] { return std::max(s.time_ms(enqueue), 1e-6); });
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("opencl calibration: " + what + " (the measurement would not be trustworthy)");
}

// GPUs: 8x the L2 as on cuda, within an eighth of the device's memory (3 arrays). CPUs (PoCL): the
// cpu calibration's rule (4x the last-level cache within [128 MiB, 512 MiB], a 24th of memory),
// since their memory is the host's.
size_t default_array_bytes(const cl::Device& d) {
  if (d.is_cpu())
    return std::min<size_t>(std::clamp<size_t>(4 * d.global_cache_bytes, size_t{128} << 20, size_t{512} << 20),
                            d.global_memory_bytes / 24);
  size_t bytes = std::clamp<size_t>(8 * d.global_cache_bytes, size_t{256} << 20, size_t{2} << 30);
  return std::min<size_t>(bytes, d.global_memory_bytes / 8);
}

}  // namespace

const std::string& opencl_calibration_source() { return kSource; }
const std::vector<std::string>& opencl_calibration_kernel_names() { return kKernelNames; }

runtime::Calibration calibrate_opencl(const OpenCLCalibrationOptions& options) {
  // The backend chooses the device and names it exactly as runs on it are recorded.
  runtime::OpenCLBackendOptions backend_options;
  backend_options.device = options.device;
  runtime::OpenCLBackend backend(backend_options);
  const cl::Device& device = backend.device();
  ClSession session(device);
  const int runs = options.quick ? 2 : std::max(1, options.runs);
  const double seconds = options.quick ? 0.002 : options.seconds_per_run;
  size_t array_bytes = options.array_bytes ? options.array_bytes
                       : options.quick     ? size_t{16} << 20
                                           : default_array_bytes(device);
  array_bytes = array_bytes / 16 * 16;
  const auto t0 = std::chrono::steady_clock::now();

  // Bandwidth: a = b (copy), a = b + s*c (triad).
  cl_ulong n4 = array_bytes / 16;
  cl_mem a = session.allocate(array_bytes), b = session.allocate(array_bytes), c = session.allocate(array_bytes);
  session.fill(a, 0.0f, array_bytes);
  session.fill(b, 1.0f, array_bytes);
  session.fill(c, 2.0f, array_bytes);
  // One float4 per work-item: coalesced on GPUs, and on CPUs (PoCL runs a group's work-items as
  // the vectorized inner loop) contiguous; a grid-stride loop there would stride each work-item.
  const size_t stream_items = (n4 + kGroup - 1) / kGroup * kGroup;
  float scalar = 3.0f;
  cl_kernel copy = session.kernel("ekb_copy", {{&b, sizeof b}, {&a, sizeof a}, {&n4, sizeof n4}});
  cl_kernel triad = session.kernel("ekb_triad", {{&a, sizeof a}, {&b, sizeof b}, {&c, sizeof c}, {&scalar, sizeof scalar}, {&n4, sizeof n4}});
  const double bytes = static_cast<double>(array_bytes);
  const size_t last = array_bytes - sizeof(float);
  runtime::Measurement copy_gbs = measure_rate(session, runs, 2 * bytes, [&](cl_event* e) { session.launch(copy, stream_items, e); });
  expect(session.read<float>(a, last) == 1.0f, "the copy kernel did not copy");
  runtime::Measurement triad_gbs = measure_rate(session, runs, 3 * bytes, [&](cl_event* e) { session.launch(triad, stream_items, e); });
  expect(session.read<float>(a, last) == 7.0f, "the triad kernel computed a wrong value");
  // The launch floor: an empty kernel timed as the executor times a call, queued behind a 64 MiB
  // fill (its cache flush), and on an idle queue.
  cl_kernel empty = session.kernel("ekb_empty", {{&a, sizeof a}});
  const size_t flush_bytes = std::min<size_t>(array_bytes, size_t{64} << 20);
  auto run_empty = [&](cl_event* e) { session.launch(empty, kGroup, e); };
  const nlohmann::json launch = launch_floor_json(
      options.quick ? 5 : 101,
      {{"idle", [&] {
          cl::check(session.api().clFinish(session.queue()), "clFinish");
          return session.time_ms(run_empty);
        }},
       {"after_flush", [&] {
          session.fill(c, 2.0f, flush_bytes);
          return session.time_ms(run_empty);
        }},
       {"two_after_flush", [&] {  // from the first one's start to the second one's end
          session.fill(c, 2.0f, flush_bytes);
          cl_event first = nullptr, second = nullptr;
          run_empty(&first);
          run_empty(&second);
          return session.span_ms({first, second});
        }}});
  const auto t1 = std::chrono::steady_clock::now();

  // Peak FP32: 2048 work-items per compute unit on GPUs; on CPUs (PoCL) a group per unit is plenty.
  const size_t fma_items = std::max<size_t>(1, device.compute_units) * (device.is_cpu() ? 4 * kGroup : 2048);
  cl_mem sink = session.allocate(fma_items * sizeof(float));
  float m = 0.999f, addend = 0.001f;
  cl_int iterations = 64;
  cl_kernel fma = session.kernel("ekb_fma_f32", {{&sink, sizeof sink}, {&m, sizeof m}, {&addend, sizeof addend},
                                                 {&iterations, sizeof iterations}});
  auto run_fma = [&](cl_event* e) { session.launch(fma, fma_items, e); };
  // Iterations chosen from a short probe so that one timed run lasts about `seconds`.
  const double probe_ms = std::max(1e-3, session.time_ms(run_fma));
  iterations = static_cast<cl_int>(std::clamp(64 * seconds * 1e3 / probe_ms, 64.0, double{1 << 24}));
  cl::check(session.api().clSetKernelArg(fma, 3, sizeof iterations, &iterations), "clSetKernelArg");
  const double flops = 2.0 * 4 * kUnroll * kChains * iterations * static_cast<double>(fma_items);
  runtime::Measurement fp32 = measure_rate(session, runs, flops, run_fma);
  const float chain_sum = session.read<float>(sink, 0);
  expect(std::isfinite(chain_sum) && chain_sum > 0.99f * kChains && chain_sum < 1.02f * kChains,
         "the FP32 FMA chains ended at " + std::to_string(chain_sum));
  const auto t2 = std::chrono::steady_clock::now();

  runtime::Calibration cal;
  cal.backend = "opencl";
  cal.device = backend.device_info().name;
  cal.created = runtime::utc_timestamp_now();
  cal.bandwidth_gbs = copy_gbs;
  if (triad_gbs.best > cal.bandwidth_gbs.best) cal.bandwidth_gbs = triad_gbs;
  cal.peak_gflops = fp32;
  cal.details = {{"quick", options.quick},
                 {"platform", device.platform_name},
                 {"device_version", device.version},
                 {"driver", device.driver_version},
                 {"compute_units", device.compute_units},
                 {"global_cache_bytes", device.global_cache_bytes},
                 {"bandwidth",
                  {{"array_bytes", array_bytes},
                   {"copy_kernel_gbs", to_json(copy_gbs)},
                   {"triad_kernel_gbs", to_json(triad_gbs)}}},
                 {"launch", launch},
                 {"fp32_fma_gflops", to_json(fp32)},
                 {"seconds",
                  {{"bandwidth", std::chrono::duration<double>(t1 - t0).count()},
                   {"fma", std::chrono::duration<double>(t2 - t1).count()}}}};
  return cal;
}

}  // namespace ekb::eval
