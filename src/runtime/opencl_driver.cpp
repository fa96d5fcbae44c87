#include "runtime/opencl_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace ekb::runtime::opencl {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  size_t first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first);
}

// A string property through an OpenCL info query (clGetPlatformInfo, clGetDeviceInfo): its size
// first, then the text; "" when the query fails.
template <typename Query, typename Handle, typename Info>
std::string info_string(Query query, Handle h, Info what) {
  size_t n = 0;
  if (query(h, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  query(h, what, n, s.data(), nullptr);
  return trim(s);
}

std::string platform_string(const Api& cl, cl_platform_id p, cl_platform_info what) {
  return info_string(cl.clGetPlatformInfo, p, what);
}

std::string device_string(const Api& cl, cl_device_id d, cl_device_info what) {
  return info_string(cl.clGetDeviceInfo, d, what);
}

template <typename T>
T device_value(const Api& cl, cl_device_id d, cl_device_info what) {
  T v{};
  cl.clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

// The ICD loader's variables as this process got them. ocl-icd splits OCL_ICD_FILENAMES in place
// (strtok on the environment's own string) when it first loads its drivers, so the processes
// started afterwards inherited "libpocl.so.2" of "libpocl.so.2:libnvidia-opencl.so.1" and found
// no NVIDIA platform (the compile step, on the H200). Put back after every enumeration.
class IcdEnvironment {
 public:
  IcdEnvironment() {
    for (const char* name : kNames)
      if (const char* v = std::getenv(name)) saved_.emplace_back(name, v);
  }
  void restore() const {
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  static constexpr const char* kNames[] = {"OCL_ICD_FILENAMES", "OCL_ICD_VENDORS"};
  std::vector<std::pair<std::string, std::string>> saved_;
};

// Taken once, before the loader is loaded (api()).
const IcdEnvironment& icd_environment_as_started() {
  static const IcdEnvironment env;
  return env;
}

std::vector<cl_platform_id> platforms(const Api& cl) {
  struct Restore {
    ~Restore() { icd_environment_as_started().restore(); }
  } restore;
  cl_uint n = 0;
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR (-1001) when no platform is installed.
  if (cl.clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_platform_id> ps(n);
  if (cl.clGetPlatformIDs(n, ps.data(), nullptr) != CL_SUCCESS) return {};
  return ps;
}

std::vector<cl_device_id> devices(const Api& cl, cl_platform_id p) {
  cl_uint n = 0;
  if (cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> ds(n);
  if (cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ds.data(), nullptr) != CL_SUCCESS) return {};
  return ds;
}

// A container may have NVIDIA's OpenCL driver mounted without its ICD file (/etc/OpenCL/vendors/
// nvidia.icd), and then the ICD loader lists no platform. Where no ICD file exists and nothing says
// otherwise, the loader is pointed at the driver library directly (OCL_ICD_FILENAMES: the ICD
// loader reads its configuration from the environment only, before it first loads).
void point_loader_at_unregistered_drivers() {
  if (std::getenv("OCL_ICD_FILENAMES")) return;
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(vendors ? vendors : "/etc/OpenCL/vendors", ec))
    if (f.path().extension() == ".icd") return;
  for (const char* driver : {"libnvidia-opencl.so.1"}) {
    if (void* h = ::dlopen(driver, RTLD_LAZY | RTLD_LOCAL)) {
      ::dlclose(h);
      ::setenv("OCL_ICD_FILENAMES", driver, 1);
      return;
    }
  }
}

const Api& loaded_api() {
  std::string why;
  const Api* cl = api(&why);
  if (!cl) throw std::runtime_error(why);
  return *cl;
}

}  // namespace

const Api* api(std::string* why) {
  static std::once_flag once;
  static Api table{};
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] {
    point_loader_at_unregistered_drivers();
    (void)icd_environment_as_started();
    void* lib = nullptr;
    std::string tried;
    std::vector<std::string> loaders = {"libOpenCL.so.1", "libOpenCL.so"};
    if (const char* own = std::getenv("EKB_OPENCL_LIBRARY"); own && *own) loaders.insert(loaders.begin(), own);
    for (const std::string& name : loaders) {
      if ((lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      const char* e = ::dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : name);
    }
    if (!lib) {
      reason = "the OpenCL ICD loader (libOpenCL.so.1) is not installed: no OpenCL on this machine (" + tried + ")";
      return;
    }
    // Every member of Api, in declaration order.
    const char* names[] = {
        "clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo", "clCreateContext",
        "clReleaseContext", "clCreateCommandQueue", "clReleaseCommandQueue", "clCreateBuffer", "clCreateSubBuffer",
        "clReleaseMemObject", "clCreateProgramWithSource", "clCreateProgramWithBinary", "clBuildProgram",
        "clGetProgramInfo", "clGetProgramBuildInfo", "clReleaseProgram", "clCreateKernel", "clGetKernelInfo",
        "clReleaseKernel", "clSetKernelArg", "clEnqueueNDRangeKernel", "clEnqueueWriteBuffer", "clEnqueueReadBuffer",
        "clEnqueueFillBuffer", "clEnqueueMarkerWithWaitList", "clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
        "clFinish", "clWaitForEvents", "clGetEventProfilingInfo", "clReleaseEvent"};
    static_assert(sizeof(Api) == sizeof(names) / sizeof(names[0]) * sizeof(void*));
    auto* slots = reinterpret_cast<void**>(&table);
    for (size_t i = 0; i < std::size(names); ++i) {
      slots[i] = ::dlsym(lib, names[i]);
      if (!slots[i]) {
        reason = std::string("the OpenCL ICD loader lacks ") + names[i] + " (older than OpenCL 1.2?)";
        return;
      }
    }
    ok = true;
  });
  if (!ok && why) *why = reason;
  return ok ? &table : nullptr;
}

std::string error_name(cl_int code) {
  static const std::pair<cl_int, const char*> kNames[] = {
      {CL_SUCCESS, "CL_SUCCESS"},
      {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
      {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
      {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
      {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"},
      {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
      {CL_PROFILING_INFO_NOT_AVAILABLE, "CL_PROFILING_INFO_NOT_AVAILABLE"},
      {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
      {CL_MISALIGNED_SUB_BUFFER_OFFSET, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
      {CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
      {CL_INVALID_VALUE, "CL_INVALID_VALUE"},
      {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"},
      {CL_INVALID_BINARY, "CL_INVALID_BINARY"},
      {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS"},
      {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME"},
      {CL_INVALID_KERNEL, "CL_INVALID_KERNEL"},
      {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX"},
      {CL_INVALID_ARG_VALUE, "CL_INVALID_ARG_VALUE"},
      {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE"},
      {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
      {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION"},
      {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
      {CL_INVALID_WORK_ITEM_SIZE, "CL_INVALID_WORK_ITEM_SIZE"},
      {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
      {CL_INVALID_EVENT, "CL_INVALID_EVENT"},
      {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
      {CL_INVALID_MEM_OBJECT, "CL_INVALID_MEM_OBJECT"},
      {CL_INVALID_COMMAND_QUEUE, "CL_INVALID_COMMAND_QUEUE"},
      {CL_INVALID_CONTEXT, "CL_INVALID_CONTEXT"},
      {CL_INVALID_PROGRAM, "CL_INVALID_PROGRAM"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  for (const auto& [c, n] : kNames)
    if (c == code) return std::string(n) + " (" + std::to_string(code) + ")";
  return "OpenCL error " + std::to_string(code);
}

void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw Error(code, std::string(what) + ": " + error_name(code));
}

DeviceSelection device_from_environment() {
  DeviceSelection s;
  if (const char* p = std::getenv("EKB_OPENCL_PLATFORM")) s.platform = p;
  if (const char* d = std::getenv("EKB_OPENCL_DEVICE"); d && *d) s.device = std::atoi(d);
  return s;
}

bool Device::is_pocl() const { return lower(platform_name).find("portable computing language") != std::string::npos; }

std::string Device::identity() const {
  return platform_name + " | " + platform_version + " | " + name + " | " + version + " | " + driver_version;
}

std::string describe_platforms() {
  std::string why;
  const Api* cl = api(&why);
  if (!cl) return why;
  std::vector<cl_platform_id> ps = platforms(*cl);
  if (ps.empty()) return "no OpenCL platform is installed (the ICD loader found no vendor driver in /etc/OpenCL/vendors)";
  std::string s;
  for (size_t i = 0; i < ps.size(); ++i) {
    s += "platform " + std::to_string(i) + " '" + platform_string(*cl, ps[i], CL_PLATFORM_NAME) + "':";
    std::vector<cl_device_id> ds = devices(*cl, ps[i]);
    if (ds.empty()) s += " no devices";
    for (size_t j = 0; j < ds.size(); ++j)
      s += (j ? "," : "") + std::string(" device ") + std::to_string(j) + " '" + device_string(*cl, ds[j], CL_DEVICE_NAME) + "'";
    s += "\n";
  }
  if (!s.empty()) s.pop_back();
  return s;
}

Device select_device(const DeviceSelection& selection) {
  const Api& cl = loaded_api();
  std::vector<cl_platform_id> ps = platforms(cl);
  if (ps.empty())
    throw std::runtime_error("no OpenCL platform: the ICD loader found no vendor driver (see /etc/OpenCL/vendors)");
  const std::string want = lower(selection.platform);
  for (cl_platform_id p : ps) {
    const std::string name = platform_string(cl, p, CL_PLATFORM_NAME);
    // The name or the version string: PoCL's name is "Portable Computing Language", and its
    // version ("OpenCL 3.0 PoCL 3.1 ...") is where `--platform pocl` finds it.
    const std::string known_as = lower(name + " " + platform_string(cl, p, CL_PLATFORM_VERSION));
    if (!want.empty() && known_as.find(want) == std::string::npos) continue;
    std::vector<cl_device_id> ds = devices(cl, p);
    if (ds.empty()) {
      if (want.empty()) continue;  // the default: the first platform with a device
      throw std::runtime_error("OpenCL platform '" + name + "' has no devices");
    }
    if (selection.device < 0 || static_cast<size_t>(selection.device) >= ds.size())
      throw std::runtime_error("OpenCL platform '" + name + "' has no device " + std::to_string(selection.device) +
                               " (it has " + std::to_string(ds.size()) + ")\n" + describe_platforms());
    Device d;
    d.platform = p;
    d.id = ds[static_cast<size_t>(selection.device)];
    d.index = selection.device;
    d.platform_name = name;
    d.platform_version = platform_string(cl, p, CL_PLATFORM_VERSION);
    d.name = device_string(cl, d.id, CL_DEVICE_NAME);
    d.version = device_string(cl, d.id, CL_DEVICE_VERSION);
    d.driver_version = device_string(cl, d.id, CL_DRIVER_VERSION);
    d.extensions = device_string(cl, d.id, CL_DEVICE_EXTENSIONS);
    d.type = device_value<cl_device_type>(cl, d.id, CL_DEVICE_TYPE);
    d.compute_units = device_value<cl_uint>(cl, d.id, CL_DEVICE_MAX_COMPUTE_UNITS);
    d.global_memory_bytes = device_value<cl_ulong>(cl, d.id, CL_DEVICE_GLOBAL_MEM_SIZE);
    d.global_cache_bytes = device_value<cl_ulong>(cl, d.id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    d.base_address_alignment = std::max<size_t>(device_value<cl_uint>(cl, d.id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8, 1);
    return d;
  }
  throw std::runtime_error(want.empty() ? "no OpenCL device: no platform has a device\n" + describe_platforms()
                                        : "no OpenCL platform's name or version contains '" + selection.platform + "'\n" +
                                              describe_platforms());
}

std::string build_log(cl_program program, cl_device_id device) {
  const Api& cl = loaded_api();
  size_t n = 0;
  if (cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr);
  return trim(s);
}

}  // namespace ekb::runtime::opencl
