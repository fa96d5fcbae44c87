// Compiling CUDA device code for sm_90 without a GPU, for the emitter tests: NVRTC where it is
// installed, else nvcc -cubin; a "skip: " answer where neither is.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/subprocess.h"

namespace ekb::codegen::testing {

// The toolkit's include directory (cuda_fp16.h), next to nvcc's bin/.
inline std::string cuda_include_dir() {
  std::string nvcc = runtime::find_nvcc();
  if (nvcc.empty()) return "/usr/local/cuda/include";
  return (std::filesystem::path(nvcc).parent_path().parent_path() / "include").string();
}

// Compiles the device code into an sm_90 cubin; "" on success, else the compiler's log. Sets *tool
// to what compiled it, or skips.
inline std::string compile_cubin(const std::string& source, const std::string& name, std::string* tool) {
  std::string why;
  if (runtime::cuda::nvrtc(&why)) {
    *tool = "nvrtc";
    std::string cubin, log;
    bool ok = runtime::cuda::nvrtc_compile_cubin(source, name, "sm_90", {"--std=c++17", "-I" + cuda_include_dir()},
                                                 &cubin, &log);
    if (ok && cubin.size() < 64) return "NVRTC returned a " + std::to_string(cubin.size()) + "-byte cubin";
    return ok ? "" : log;
  }
  std::string nvcc = runtime::find_nvcc();
  if (nvcc.empty()) return "skip: " + why + "; nvcc is not installed either";
  *tool = "nvcc";
  auto dir = std::filesystem::temp_directory_path() / ("ekb-cubin-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string cu = (dir / "k.cu").string(), out = (dir / "k.cubin").string();
  std::ofstream(cu) << source;
  runtime::CommandResult r = runtime::run_command({nvcc, "-cubin", "-arch=sm_90", "-std=c++17", "-o", out, cu});
  std::filesystem::remove_all(dir);
  return r.ok() ? "" : r.output;
}

// Compiles OpenCL C as NVIDIA's compiler would see it (cl_nv_pragma_unroll defined, so its inline
// PTX is in) to PTX with clang's nvptx target, which checks the syntax and the inline assembly but
// has no OpenCL builtins to link. Returns the PTX, or "error: LOG", or "skip: " without clang.
inline std::string opencl_nvidia_ptx(const std::string& source) {
  auto dir = std::filesystem::temp_directory_path() / ("ekb-clptx-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cl = (dir / "k.cl").string(), out = (dir / "k.ptx").string();
  std::ofstream(cl) << source;
  runtime::CommandResult r = runtime::run_command(
      {"clang", "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-Xclang", "-target-cpu", "-Xclang",
       "sm_80", "-Xclang", "-target-feature", "-Xclang", "+ptx70", "-Xclang", "-finclude-default-header",
       "-Dcl_nv_pragma_unroll", "-Wno-ignored-pragmas", "-O2", "-S", "-o", out, cl});
  std::ifstream in(out);
  std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  if (!r.ok() && r.output.find("No such file") != std::string::npos) return "skip: clang is not installed";
  return r.ok() ? ptx : "error: " + r.output;
}

}  // namespace ekb::codegen::testing
