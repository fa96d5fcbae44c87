// The CUDA driver API (libcuda.so.1) and NVRTC (libnvrtc.so.*), loaded with dlopen on first use and
// never linked: `ekb` builds without the CUDA toolkit and runs on machines without a GPU, where the
// cuda backend says plainly why it cannot run instead of failing to start.
//
// The few types and entry points the runtime uses are declared here, with the driver's own
// signatures (cuda.h, nvrtc.h) and its versioned symbol names (cuMemAlloc_v2, ...), so that the
// build never needs cuda.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ekb::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUmemGenericAllocationHandle = unsigned long long;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;

// cuDeviceGetAttribute's attributes (CUdevice_attribute) that the runtime reads.
enum DeviceAttribute : int {
  kAttrMultiprocessorCount = 16,
  kAttrL2CacheSize = 38,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
  kAttrVirtualMemoryManagementSupported = 102,
};

// cuPointerGetAttribute's CU_POINTER_ATTRIBUTE_MAPPED: 1 where the address has memory behind it.
constexpr int kPointerAttributeMapped = 13;

// The virtual memory management API's structures (cuda.h's CUmemLocation, CUmemAllocationProp,
// CUmemAccessDesc), laid out as the driver reads them, and the few enumerators the runtime uses.
struct CUmemLocation {
  int type;  // CUmemLocationType
  int id;
};
struct CUmemAllocationProp {
  int type;                  // CUmemAllocationType
  int requestedHandleTypes;  // CUmemAllocationHandleType
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};
struct CUmemAccessDesc {
  CUmemLocation location;
  int flags;  // CUmemAccess_flags
};
static_assert(sizeof(CUmemAllocationProp) == 32 && sizeof(CUmemAccessDesc) == 12);
constexpr int kMemAllocationTypePinned = 1;   // CU_MEM_ALLOCATION_TYPE_PINNED
constexpr int kMemLocationTypeDevice = 1;     // CU_MEM_LOCATION_TYPE_DEVICE
constexpr int kMemAccessReadWrite = 3;        // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
constexpr int kMemGranularityMinimum = 0;     // CU_MEM_ALLOC_GRANULARITY_MINIMUM

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  // Kernels the harness compiles itself with NVRTC (the calibration's, eval/cuda_calibration.h).
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  // Virtual memory management: the cuda executor maps each buffer on its own between unmapped gaps.
  CUresult (*cuMemAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
  CUresult (*cuMemCreate)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long);
  CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
  CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
  CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
  CUresult (*cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*cuMemGetAllocationGranularity)(size_t*, const CUmemAllocationProp*, int);
  // What a kernel may have done to the context it was given (the cuda executor checks after it ran).
  CUresult (*cuDevicePrimaryCtxGetState)(CUdevice, unsigned*, int*);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  // Optional (nullptr where the driver lacks it): undoes persisting-L2 access windows.
  CUresult (*cuCtxResetPersistingL2Cache)();
  // Optional (CUDA 12.0 on): a context's unique id, which a destroyed and re-created one does not keep.
  CUresult (*cuCtxGetId)(CUcontext, unsigned long long*);
};

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct NvrtcApi {
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
};

// The loaded APIs, or nullptr with the reason in *why ("libcuda.so.1 not found: no NVIDIA driver
// on this machine"). Loaded once per process; thread-safe.
const DriverApi* driver(std::string* why = nullptr);
const NvrtcApi* nvrtc(std::string* why = nullptr);

// A failed driver call: its result code and "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string& message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string error_text(CUresult r);
// Throws CudaError naming `what` unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);
// Errors after which the context is unusable (illegal address, trap, misaligned access, ...):
// only a new process can use the device again.
bool is_sticky_error(CUresult r);

struct DeviceProperties {
  int ordinal = 0;
  std::string name;          // "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t l2_bytes = 0;
  size_t memory_bytes = 0;
  int driver_version = 0;    // 13000 for CUDA 13.0
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// Initializes the driver and describes device `ordinal` (no context is created). Throws
// std::runtime_error saying plainly why there is none: no driver library, no device, init failure.
DeviceProperties query_device(int ordinal = 0);

// NVRTC: `source` compiled for `arch` ("sm_90") into a cubin. Returns false with the compiler's
// log in *log when the source is rejected; throws std::runtime_error when NVRTC is unavailable.
bool nvrtc_compile_cubin(const std::string& source, const std::string& name, const std::string& arch,
                         const std::vector<std::string>& options, std::string* cubin, std::string* log);

}  // namespace ekb::runtime::cuda
