#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace ekb::runtime::cuda {

namespace {

// dlopen of the first library that loads; `tried` lists the failures for the message.
void* open_first(const std::vector<std::string>& names, std::string* tried) {
  for (const std::string& n : names) {
    if (void* h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = ::dlerror();
    *tried += (tried->empty() ? "" : "; ") + std::string(e ? e : n);
  }
  return nullptr;
}

// Resolves every symbol into the struct's function pointers, in declaration order.
template <typename Api>
bool resolve(void* lib, Api& api, std::initializer_list<const char*> names, std::string* missing) {
  static_assert(sizeof(Api) % sizeof(void*) == 0);
  auto* slots = reinterpret_cast<void**>(&api);
  size_t i = 0;
  for (const char* n : names) {
    const bool is_optional = *n == '?';  // a leading '?': may be missing (left nullptr)
    void* sym = ::dlsym(lib, is_optional ? n + 1 : n);
    if (!sym && !is_optional) {
      *missing = n;
      return false;
    }
    slots[i++] = sym;
  }
  return i * sizeof(void*) == sizeof(Api);
}

struct Loaded {
  std::once_flag once;
  bool ok = false;
  std::string why;
};

std::vector<std::string> cuda_home_libraries(const std::string& base) {
  std::vector<std::string> dirs;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  std::vector<std::string> out;
  for (const std::string& d : dirs) out.push_back(d + base);
  return out;
}

}  // namespace

const DriverApi* driver(std::string* why) {
  static Loaded state;
  static DriverApi api{};
  std::call_once(state.once, [] {
    std::string tried;
    void* lib = open_first({"libcuda.so.1", "libcuda.so"}, &tried);
    if (!lib) {
      state.why = "the CUDA driver library (libcuda.so.1) is not installed: no NVIDIA driver on this machine (" +
                  tried + ")";
      return;
    }
    std::string missing;
    // The order of DriverApi's members; versioned names where the driver has several.
    state.ok = resolve(lib, api,
                       {"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString", "cuDeviceGetCount",
                        "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
                        "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent",
                        "cuCtxSynchronize", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoDAsync_v2",
                        "cuMemcpyDtoHAsync_v2", "cuMemsetD8Async", "cuMemsetD32Async", "cuStreamCreate", "cuStreamDestroy_v2",
                        "cuStreamSynchronize", "cuEventCreate", "cuEventDestroy_v2", "cuEventRecord",
                        "cuEventSynchronize", "cuEventElapsedTime", "cuMemcpyDtoDAsync_v2", "cuModuleLoadData",
                        "cuModuleUnload", "cuModuleGetFunction", "cuLaunchKernel", "cuMemAddressReserve",
                        "cuMemAddressFree", "cuMemCreate", "cuMemRelease", "cuMemMap", "cuMemUnmap", "cuMemSetAccess",
                        "cuMemGetAllocationGranularity", "cuDevicePrimaryCtxGetState", "cuCtxGetCurrent",
                        "cuPointerGetAttribute", "?cuCtxResetPersistingL2Cache", "?cuCtxGetId"},
                       &missing);
    if (!state.ok) state.why = "the CUDA driver library lacks " + missing + " (driver too old?)";
  });
  if (!state.ok && why) *why = state.why;
  return state.ok ? &api : nullptr;
}

const NvrtcApi* nvrtc(std::string* why) {
  static Loaded state;
  static NvrtcApi api{};
  std::call_once(state.once, [] {
    std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (const std::string& p : cuda_home_libraries("libnvrtc.so")) names.push_back(p);
    std::string tried;
    void* lib = open_first(names, &tried);
    if (!lib) {
      state.why = "NVRTC (libnvrtc.so) is not installed (" + tried + ")";
      return;
    }
    std::string missing;
    state.ok = resolve(lib, api,
                       {"nvrtcGetErrorString", "nvrtcVersion", "nvrtcCreateProgram", "nvrtcDestroyProgram",
                        "nvrtcCompileProgram", "nvrtcGetProgramLogSize", "nvrtcGetProgramLog", "nvrtcGetCUBINSize",
                        "nvrtcGetCUBIN"},
                       &missing);
    if (!state.ok) state.why = "NVRTC lacks " + missing + " (older than CUDA 11.1?)";
  });
  if (!state.ok && why) *why = state.why;
  return state.ok ? &api : nullptr;
}

std::string error_text(CUresult r) {
  const DriverApi* d = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw CudaError(r, std::string(what) + ": " + error_text(r));
}

bool is_sticky_error(CUresult r) {
  switch (r) {
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 710:  // CUDA_ERROR_ASSERT (a trap or device-side assert)
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
    case 999:  // CUDA_ERROR_UNKNOWN
      return true;
    default:
      return false;
  }
}

DeviceProperties query_device(int ordinal) {
  std::string why;
  const DriverApi* d = driver(&why);
  if (!d) throw std::runtime_error(why);
  CUresult r = d->cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) throw std::runtime_error("no CUDA device: the driver found no NVIDIA GPU");
  if (r != CUDA_SUCCESS) throw std::runtime_error("no CUDA device: cuInit failed with " + error_text(r));
  int count = 0;
  check(d->cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count <= ordinal)
    throw std::runtime_error("no CUDA device " + std::to_string(ordinal) + " (the driver sees " +
                             std::to_string(count) + ")");
  DeviceProperties p;
  p.ordinal = ordinal;
  CUdevice dev = 0;
  check(d->cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(d->cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  p.name = name;
  int l2 = 0;
  check(d->cuDeviceGetAttribute(&p.major, kAttrComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
  check(d->cuDeviceGetAttribute(&p.minor, kAttrComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
  check(d->cuDeviceGetAttribute(&p.multiprocessors, kAttrMultiprocessorCount, dev), "cuDeviceGetAttribute");
  check(d->cuDeviceGetAttribute(&l2, kAttrL2CacheSize, dev), "cuDeviceGetAttribute");
  p.l2_bytes = static_cast<size_t>(l2);
  check(d->cuDeviceTotalMem(&p.memory_bytes, dev), "cuDeviceTotalMem");
  check(d->cuDriverGetVersion(&p.driver_version), "cuDriverGetVersion");
  return p;
}

bool nvrtc_compile_cubin(const std::string& source, const std::string& name, const std::string& arch,
                         const std::vector<std::string>& options, std::string* cubin, std::string* log) {
  std::string why;
  const NvrtcApi* n = nvrtc(&why);
  if (!n) throw std::runtime_error(why);
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r = n->nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != 0)
    throw std::runtime_error(std::string("nvrtcCreateProgram: ") + n->nvrtcGetErrorString(r));
  std::vector<std::string> all = {"--gpu-architecture=" + arch};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());
  nvrtcResult compiled = n->nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  n->nvrtcGetProgramLogSize(prog, &log_size);
  log->assign(log_size, '\0');
  if (log_size) n->nvrtcGetProgramLog(prog, log->data());
  while (!log->empty() && (log->back() == '\0' || log->back() == '\n')) log->pop_back();
  bool ok = compiled == 0;
  if (ok) {
    size_t size = 0;
    n->nvrtcGetCUBINSize(prog, &size);
    cubin->assign(size, '\0');
    ok = size > 0 && n->nvrtcGetCUBIN(prog, cubin->data()) == 0;
  } else if (log->empty()) {
    *log = n->nvrtcGetErrorString(compiled);
  }
  n->nvrtcDestroyProgram(&prog);
  return ok;
}

}  // namespace ekb::runtime::cuda
