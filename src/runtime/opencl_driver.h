// The OpenCL platform layer (the ICD loader libOpenCL.so.1), loaded with dlopen on first use and
// never linked: `ekb` builds and starts on machines without OpenCL, and binaries built here run on
// machines that have a vendor's driver but no OpenCL headers (the NVIDIA GPU machine). <CL/cl.h>
// supplies the types, constants and exact signatures (decltype of its declarations) only.
//
// Devices are chosen by a platform-name substring and a device index within that platform
// (`ekb eval --backend opencl --platform nvidia --device 0`); the default is the first platform
// that has a device, device 0.
#pragma once
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device_selection.h"

namespace ekb::runtime::opencl {

// The OpenCL 1.2 entry points the runtime uses, with the ICD loader's own signatures.
struct Api {
#define EKB_CL_ENTRY(name) decltype(&::name) name
  EKB_CL_ENTRY(clGetPlatformIDs);
  EKB_CL_ENTRY(clGetPlatformInfo);
  EKB_CL_ENTRY(clGetDeviceIDs);
  EKB_CL_ENTRY(clGetDeviceInfo);
  EKB_CL_ENTRY(clCreateContext);
  EKB_CL_ENTRY(clReleaseContext);
  EKB_CL_ENTRY(clCreateCommandQueue);
  EKB_CL_ENTRY(clReleaseCommandQueue);
  EKB_CL_ENTRY(clCreateBuffer);
  EKB_CL_ENTRY(clCreateSubBuffer);
  EKB_CL_ENTRY(clReleaseMemObject);
  EKB_CL_ENTRY(clCreateProgramWithSource);
  EKB_CL_ENTRY(clCreateProgramWithBinary);
  EKB_CL_ENTRY(clBuildProgram);
  EKB_CL_ENTRY(clGetProgramInfo);
  EKB_CL_ENTRY(clGetProgramBuildInfo);
  EKB_CL_ENTRY(clReleaseProgram);
  EKB_CL_ENTRY(clCreateKernel);
  EKB_CL_ENTRY(clGetKernelInfo);
  EKB_CL_ENTRY(clReleaseKernel);
  EKB_CL_ENTRY(clSetKernelArg);
  EKB_CL_ENTRY(clEnqueueNDRangeKernel);
  EKB_CL_ENTRY(clEnqueueWriteBuffer);
  EKB_CL_ENTRY(clEnqueueReadBuffer);
  EKB_CL_ENTRY(clEnqueueFillBuffer);
  EKB_CL_ENTRY(clEnqueueMarkerWithWaitList);
  EKB_CL_ENTRY(clEnqueueMapBuffer);
  EKB_CL_ENTRY(clEnqueueUnmapMemObject);
  EKB_CL_ENTRY(clFinish);
  EKB_CL_ENTRY(clWaitForEvents);
  EKB_CL_ENTRY(clGetEventProfilingInfo);
  EKB_CL_ENTRY(clReleaseEvent);
#undef EKB_CL_ENTRY
};

// The loaded API, or nullptr with the reason in *why ("libOpenCL.so.1 not found: ..."). Loaded once
// per process; thread-safe. $EKB_OPENCL_LIBRARY names another ICD loader to try first (one carried
// to a machine that has a driver but no loader). Where no ICD file registers a driver, NVIDIA's
// (libnvidia-opencl.so.1) is handed to the loader directly when it is installed.
const Api* api(std::string* why = nullptr);

// "CL_OUT_OF_RESOURCES (-5)".
std::string error_name(cl_int code);

// A failed OpenCL call: "clCreateBuffer: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)".
class Error : public std::runtime_error {
 public:
  Error(cl_int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};
// Throws Error naming `what` unless code is CL_SUCCESS.
void check(cl_int code, const char* what);

// The user's default device: $EKB_OPENCL_PLATFORM and $EKB_OPENCL_DEVICE (docs/ABI.md). Read, never
// set: the backend hands its choice to the compile step and the workers on their command lines.
DeviceSelection device_from_environment();

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  int index = 0;                  // within the platform
  std::string platform_name;      // "Portable Computing Language", "NVIDIA CUDA"
  std::string platform_version;   // "OpenCL 3.0 PoCL 3.1 ..."
  std::string name;               // "NVIDIA H200"
  std::string version;            // CL_DEVICE_VERSION
  std::string driver_version;     // CL_DRIVER_VERSION
  std::string extensions;
  cl_device_type type = 0;
  uint32_t compute_units = 0;
  uint64_t global_memory_bytes = 0;
  uint64_t global_cache_bytes = 0;
  size_t base_address_alignment = 0;  // bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits)
  bool is_cpu() const { return (type & CL_DEVICE_TYPE_CPU) != 0; }
  bool is_pocl() const;
  // What a compiled program depends on: platform, device and driver version.
  std::string identity() const;
};

// Every platform and its devices, one per line ("platform 0 'NVIDIA CUDA': device 0 'NVIDIA H200'"),
// for messages; "no OpenCL platform is installed" when there is none.
std::string describe_platforms();

// The selected device. Throws std::runtime_error saying plainly why there is none: no ICD loader,
// no platform, no platform matching the selection, no such device (listing what exists).
Device select_device(const DeviceSelection& selection);

// The program's build log for `device`, trimmed of trailing blank lines.
std::string build_log(cl_program program, cl_device_id device);

}  // namespace ekb::runtime::opencl
