// The vendor column of bench/cpu_schedules.sh: OpenBLAS on suite workloads, measured the way
// `ekb eval` measures kernels (src/eval/timing.h), so that its times sit beside the default
// lowering's and the scheduled IR's:
//  - inputs: the workload's first correctness trial (seed eval::kDefaultBaseSeed), read from the
//    reference cache that `ekb eval` fills, so the result is also checked against the f64
//    reference with the harness's own tolerance (eval::check_output);
//  - one warm-up call, then timed calls, each starting cold: every buffer the call touches
//    (inputs, outputs, im2col workspace) evicted with runtime::flush_cache_lines outside the
//    timed interval;
//  - the same stopping rule as eval::TimingOptions (at least min_runs runs and min_time_s of
//    measured time, medians known to target_precision; at most max_runs or max_time_s);
//  - median and quartiles by eval::summarize_times; roofline fraction by eval::roofline_fraction
//    against the calibration `ekb calibrate` stored for this CPU.
// Supported: linalg.gemm (cblas_sgemm), nn.pwconv (one sgemm over pixels), nn.conv2d (im2col, then
// one sgemm), nn.fc (one sgemm), transformer.gemv_decode (cblas_sgemv). Prints one JSON object per
// workload, one per line; the first line says which kernel OpenBLAS chose.
// Every memory-bound workload also gets a same-size copy ("copy"): a kernel that reads as many bytes as the
// workload's inputs and writes as many as its outputs (streaming stores, all cores, OpenMP), compiled
// by the cpu backend exactly as candidates are (clang, the same flags, libomp) and timed cold the
// same way. It is the rate a kernel of that size can reach, as `bench/gpu.sh` prints for GPUs: the
// calibrated bandwidth is a long stream's, and a kernel of a few hundred KB cannot amortize the
// thread start and the first cold misses as one of hundreds of MB does.
//
// Usage: ekb_cpu_vendor WORKLOAD...   (--core: only the line saying which kernel OpenBLAS chose)
#include <cblas.h>
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "eval/output_check.h"
#include "eval/reference_cache.h"
#include "eval/roofline.h"
#include "eval/timing.h"
#include "eval/workload_reference.h"
#include "ir/cost.h"
#include "results/calibration_cache.h"
#include "runtime/cache_flush.h"
#include "runtime/cpu_backend.h"
#include "suite/suite.h"

extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);
extern "C" int openblas_get_num_threads(void);

namespace {

using namespace ekb;

struct Buffer {
  const void* data;
  size_t bytes;
};

// One vendor implementation bound to a workload's buffers: `call` computes the output, `touched`
// lists everything it reads or writes (evicted before each timed call).
struct VendorKernel {
  std::string name;
  std::function<void()> call;
  std::vector<Buffer> touched;
};

const float* input_floats(const eval::Trial& t, size_t k) { return reinterpret_cast<const float*>(t.inputs[k].data()); }

int64_t param(const ir::Instance& inst, const char* name) { return inst.params.at(name); }

// C = beta * C_in + alpha * A B, as copy-then-sgemm (beta scales C in place).
VendorKernel gemm(const ir::Instance& inst, const eval::Trial& t, std::vector<float>& out,
                  std::vector<float>&) {
  const int64_t ni = param(inst, "NI"), nj = param(inst, "NJ"), nk = param(inst, "NK");
  const float *c_in = input_floats(t, 0), *a = input_floats(t, 1), *b = input_floats(t, 2);
  out.resize(static_cast<size_t>(ni * nj));
  float* c = out.data();
  VendorKernel v{"OpenBLAS cblas_sgemm", nullptr, {}};
  v.call = [=] {
    std::memcpy(c, c_in, sizeof(float) * static_cast<size_t>(ni * nj));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(ni), static_cast<int>(nj),
                static_cast<int>(nk), 1.5f, a, static_cast<int>(nk), b, static_cast<int>(nj), 1.2f, c,
                static_cast<int>(nj));
  };
  return v;
}

// y[r, o] = b[o] + sum_i x[r, i] w[o, i] over `rows` rows: bias broadcast, then one sgemm.
VendorKernel biased_rows_times_weights(std::string name, int64_t rows, int64_t in, int64_t outs, const eval::Trial& t,
                                       std::vector<float>& out) {
  const float *x = input_floats(t, 0), *w = input_floats(t, 1), *bias = input_floats(t, 2);
  out.resize(static_cast<size_t>(rows * outs));
  float* y = out.data();
  VendorKernel v{std::move(name), nullptr, {}};
  v.call = [=] {
    for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * outs, bias, sizeof(float) * static_cast<size_t>(outs));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(outs),
                static_cast<int>(in), 1.0f, x, static_cast<int>(in), w, static_cast<int>(in), 1.0f, y,
                static_cast<int>(outs));
  };
  return v;
}

// Pointwise convolution: the N*H*W pixels are the rows, channels in and out.
VendorKernel pwconv(const ir::Instance& inst, const eval::Trial& t, std::vector<float>& out,
                    std::vector<float>&) {
  return biased_rows_times_weights("OpenBLAS cblas_sgemm (pixels x channels)",
                                   param(inst, "N") * param(inst, "H") * param(inst, "W"), param(inst, "C"),
                                   param(inst, "K"), t, out);
}

// TFLite FULLY_CONNECTED (weights [out, in]); one row: OpenBLAS takes its GEMV path.
VendorKernel fc(const ir::Instance& inst, const eval::Trial& t, std::vector<float>& out, std::vector<float>&) {
  return biased_rows_times_weights("OpenBLAS cblas_sgemm (rows x outputs)", param(inst, "M"), param(inst, "IN"),
                                   param(inst, "OUT"), t, out);
}

// y[n] = sum_k x[k] w[k, n]: y = w^T x, one sgemv.
VendorKernel gemv_decode(const ir::Instance& inst, const eval::Trial& t, std::vector<float>& out,
                         std::vector<float>&) {
  const int64_t k = param(inst, "K"), n = param(inst, "N");
  const float *x = input_floats(t, 0), *w = input_floats(t, 1);
  out.resize(static_cast<size_t>(n));
  float* y = out.data();
  VendorKernel v{"OpenBLAS cblas_sgemv", nullptr, {}};
  v.call = [=] {
    cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(k), static_cast<int>(n), 1.0f, w, static_cast<int>(n), x, 1,
                0.0f, y, 1);
  };
  return v;
}

// NHWC / OHWI convolution: im2col rows [pixel, (kh, kw, c)] (zero where the window leaves the
// image), then y = cols * w^T + bias with one sgemm (w is [K, KH*KW*C] row-major already).
VendorKernel conv2d(const ir::Instance& inst, const eval::Trial& t, std::vector<float>& out,
                    std::vector<float>& workspace) {
  const int64_t n = param(inst, "N"), h = param(inst, "H"), w = param(inst, "W"), c = param(inst, "C");
  const int64_t k = param(inst, "K"), kh = param(inst, "KH"), kw = param(inst, "KW");
  const int64_t sh = param(inst, "SH"), sw = param(inst, "SW"), pt = param(inst, "PT"), pl = param(inst, "PL");
  const int64_t oh = (h + pt + param(inst, "PB") - kh) / sh + 1, ow = (w + pl + param(inst, "PR") - kw) / sw + 1;
  const int64_t pixels = n * oh * ow, depth = kh * kw * c;
  const float *x = input_floats(t, 0), *wts = input_floats(t, 1), *bias = input_floats(t, 2);
  out.resize(static_cast<size_t>(pixels * k));
  workspace.assign(static_cast<size_t>(pixels * depth), 0.0f);
  float *y = out.data(), *cols = workspace.data();
  VendorKernel v{"im2col + OpenBLAS cblas_sgemm", nullptr, {}};
  v.call = [=] {
    for (int64_t img = 0; img < n; ++img)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          float* row = cols + ((img * oh + oy) * ow + ox) * depth;
          for (int64_t dy = 0; dy < kh; ++dy)
            for (int64_t dx = 0; dx < kw; ++dx) {
              const int64_t iy = oy * sh + dy - pt, ix = ox * sw + dx - pl;
              float* dst = row + (dy * kw + dx) * c;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                std::memset(dst, 0, sizeof(float) * static_cast<size_t>(c));
              else
                std::memcpy(dst, x + ((img * h + iy) * w + ix) * c, sizeof(float) * static_cast<size_t>(c));
            }
          std::memcpy(y + ((img * oh + oy) * ow + ox) * k, bias, sizeof(float) * static_cast<size_t>(k));
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(pixels), static_cast<int>(k),
                static_cast<int>(depth), 1.0f, cols, static_cast<int>(depth), wts, static_cast<int>(depth), 1.0f,
                y, static_cast<int>(k));
  };
  v.touched.push_back({cols, workspace.size() * sizeof(float)});
  return v;
}

using VendorFactory = VendorKernel (*)(const ir::Instance&, const eval::Trial&, std::vector<float>&,
                                       std::vector<float>&);

VendorFactory vendor_for(const std::string& pattern) {
  if (pattern == "linalg.gemm") return gemm;
  if (pattern == "nn.pwconv") return pwconv;
  if (pattern == "nn.conv2d") return conv2d;
  if (pattern == "nn.fc") return fc;
  if (pattern == "transformer.gemv_decode") return gemv_decode;
  return nullptr;
}

// dst[i] = src[i] over the outputs' floats, then a sum over the inputs' floats beyond them (read, not
// written), both split over the threads; streaming stores where the vector is aligned.
constexpr const char* kSameSizeCopySource = R"(
#include <immintrin.h>
void ekb_same_size_copy(const float* src, long n_src, float* dst, long n_dst, float* sink) {
  const long n_copy = n_dst < n_src ? n_dst : n_src;
  float total = 0.0f;
  #pragma omp parallel reduction(+ : total)
  {
    #pragma omp for nowait
    for (long i = 0; i < n_copy / 16 * 16; i += 16) _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
    __m512 acc = _mm512_setzero_ps();
    #pragma omp for nowait
    for (long i = n_copy / 16 * 16; i < n_src / 16 * 16; i += 16) acc = _mm512_add_ps(acc, _mm512_loadu_ps(src + i));
    total += _mm512_reduce_add_ps(acc);
  }
  for (long i = n_copy / 16 * 16; i < n_dst; ++i) dst[i] = src[i < n_src ? i : 0];
  _mm_sfence();
  *sink = total;
}
)";

using SameSizeCopy = void (*)(const float*, long, float*, long, float*);

// The copy kernel, compiled once by the cpu backend (its compile cache) and opened with dlopen.
SameSizeCopy same_size_copy_kernel() {
  static SameSizeCopy kernel = [] {
    runtime::CpuBackend backend;
    runtime::Source source;
    source.language = runtime::Language::C;
    source.text = kSameSizeCopySource;
    source.origin = "bench/cpu_vendor.cpp:same_size_copy";
    runtime::CompileOutcome built = backend.compile(source);
    if (!built.ok) throw std::runtime_error("the same-size copy did not compile: " + built.message);
    void* library = ::dlopen(built.artifact->path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
    return reinterpret_cast<SameSizeCopy>(::dlsym(library, "ekb_same_size_copy"));
  }();
  return kernel;
}

// A TimeStats as the results' "time_ms" object.
nlohmann::json time_json(const eval::TimeStats& t) {
  return {{"median", t.median_ms}, {"p25", t.p25_ms}, {"p75", t.p75_ms}, {"runs", t.runs}};
}

// eval::time_interleaved's loop for a single kernel: same options, same stopping rule.
eval::TimeStats time_cold(const VendorKernel& v, const eval::TimingOptions& o) {
  using Clock = std::chrono::steady_clock;
  auto timed_call = [&] {
    for (const Buffer& b : v.touched) runtime::flush_cache_lines(b.data, b.bytes);
    const auto start = Clock::now();
    v.call();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  for (int w = 0; w < o.warmup_runs; ++w) timed_call();
  std::vector<double> ms;
  double total_ms = 0;
  const auto t0 = Clock::now();
  for (;;) {
    ms.push_back(timed_call());
    total_ms += ms.back();
    const int runs = static_cast<int>(ms.size());
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    if (runs >= o.max_runs) break;
    if (runs >= o.min_runs && total_ms >= o.min_time_s * 1e3 &&
        eval::median_relative_error(ms) <= o.target_precision)
      break;
    if (elapsed >= o.max_time_s && runs >= std::min(o.min_runs, 3)) break;
  }
  return eval::summarize_times(std::move(ms));
}

// The same-size copy of a workload: its input and output bytes, rounded up to whole floats.
nlohmann::json bench_same_size_copy(const ir::CostFacts& cost) {
  const long n_src = static_cast<long>((cost.input_bytes + 3) / 4), n_dst = static_cast<long>((cost.output_bytes + 3) / 4);
  // 64-byte aligned, as the arena aligns a candidate's tensors (streaming stores need it).
  std::vector<float> src_storage(static_cast<size_t>(n_src) + 16), dst_storage(static_cast<size_t>(n_dst) + 16);
  auto aligned = [](std::vector<float>& v) {
    return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t{63});
  };
  float *src = aligned(src_storage), *dst = aligned(dst_storage);
  for (long i = 0; i < n_src; ++i) src[i] = static_cast<float>(i % 1024);
  float sink = 0;
  SameSizeCopy copy = same_size_copy_kernel();
  VendorKernel v{"same-size copy", [&] { copy(src, n_src, dst, n_dst, &sink); },
                 {{src, static_cast<size_t>(n_src) * 4}, {dst, static_cast<size_t>(n_dst) * 4}}};
  v.call();
  for (long i = 0; i < std::min(n_src, n_dst); i += std::max<long>(1, n_dst / 97))
    if (dst[i] != src[i]) throw std::runtime_error("the same-size copy did not copy");
  const eval::TimeStats t = time_cold(v, eval::TimingOptions{});
  return {{"time_ms", time_json(t)}, {"gbs", cost.min_bytes / (t.median_ms * 1e-3) / 1e9}};
}

nlohmann::json bench_workload(const suite::Suite& s, const std::string& name,
                              const std::optional<eval::Roofline>& roof) {
  nlohmann::json j = {{"workload", name}};
  auto w = s.find_workload(name);
  if (!w) return j["error"] = "no such workload", j;
  VendorFactory factory = vendor_for(w->pattern->name());
  ir::Instance inst = suite::bind_workload(*w);
  const ir::CostFacts cost = ir::compute_cost(inst);
  const eval::WorkCost work{cost.ops(), cost.min_bytes, cost.input_bytes};
  // The copy is the yardstick of memory-bound rows only (the table prints it for those).
  if (roof && eval::memory_bound(work, *roof)) j["copy"] = bench_same_size_copy(cost);
  if (!factory || inst.tensors.front().type != ir::ScalarType::F32)
    return j["error"] = "no vendor kernel for this pattern and type", j;

  auto cache = eval::ReferenceCache::default_cache();
  eval::WorkloadReference reference(inst, eval::kDefaultBaseSeed, cache ? &*cache : nullptr);
  const eval::Trial& trial = reference.random_trial(0);
  std::vector<float> out, workspace;
  VendorKernel v = factory(inst, trial, out, workspace);
  for (const auto& in : trial.inputs) v.touched.push_back({in.data(), in.size()});
  v.touched.push_back({out.data(), out.size() * sizeof(float)});
  j["vendor"] = v.name;

  v.call();
  const auto& output_decl = *reference.interface().outputs.front()->decl;
  eval::OutputVerdict verdict = eval::check_output(output_decl.name, reinterpret_cast<const uint8_t*>(out.data()),
                                                   trial.expected.front(), trial.rms.front(), -1);
  j["correct"] = verdict.error == eval::ErrorKind::None;
  if (verdict.error != eval::ErrorKind::None) return j["error"] = verdict.message, j;

  eval::TimeStats t = time_cold(v, eval::TimingOptions{});
  j["time_ms"] = time_json(t);
  if (roof) {
    auto fraction = eval::roofline_fraction(work, *roof, t.median_ms);
    j["roofline_fraction"] = fraction ? nlohmann::json(*fraction) : nlohmann::json(nullptr);
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  const bool core_only = argc == 2 && std::string(argv[1]) == "--core";
  if (argc < 2) {
    std::cerr << "usage: ekb_cpu_vendor WORKLOAD... | --core\n";
    return 2;
  }
  std::cout << nlohmann::json{{"openblas_core", openblas_get_corename()},
                              {"openblas_config", openblas_get_config()},
                              {"openblas_threads", openblas_get_num_threads()}}
                   .dump()
            << "\n";
  if (core_only) return 0;
  const suite::Suite s = suite::Suite::load();
  auto calibration = results::find_calibration(nullptr, "cpu", runtime::cpu_model_name());
  std::optional<eval::Roofline> roof;
  if (calibration) roof = eval::Roofline::from(*calibration);
  for (int a = 1; a < argc; ++a) std::cout << bench_workload(s, argv[a], roof).dump() << std::endl;
  return 0;
}
