#include "runtime/opencl_program.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "runtime/opencl_driver.h"

namespace ekb::runtime::opencl {

namespace {

using nlohmann::json;
constexpr const char* kFormat = "ekb.opencl-program/1";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private kernel cache for PoCL while it builds (it writes one; the binary carries what the
// worker needs), removed afterwards. $POCL_CACHE_DIR is PoCL's only setting for it.
class ScopedPoclCache {
 public:
  ScopedPoclCache() {
    std::string templ = (std::filesystem::temp_directory_path() / "ekb-pocl-XXXXXX").string();
    if (::mkdtemp(templ.data())) {
      dir_ = templ;
      ::setenv("POCL_CACHE_DIR", dir_.c_str(), 1);
    }
  }
  ~ScopedPoclCache() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  // PoCL's build log names the copy of the source it compiled (DIR/tempfile_XXXXXX.cl): name `path`.
  std::string with_source_path(const std::string& log, const std::string& path) const {
    if (dir_.empty()) return log;
    std::string escaped;
    for (char c : dir_) {
      if (std::string_view(R"(\^$.|?*+()[]{})").find(c) != std::string_view::npos) escaped += '\\';
      escaped += c;
    }
    std::string replacement;  // '$' is special in a replacement
    for (char c : path) replacement += c == '$' ? std::string("$$") : std::string(1, c);
    return std::regex_replace(log, std::regex(escaped + R"(/tempfile_\w+\.cl)"), replacement);
  }

 private:
  std::string dir_;
};

// Releases what it holds at the end of the compile.
struct Built {
  const Api* cl = nullptr;
  cl_context context = nullptr;
  cl_program program = nullptr;
  std::vector<cl_kernel> kernels;
  ~Built() {
    for (cl_kernel k : kernels) cl->clReleaseKernel(k);
    if (program) cl->clReleaseProgram(program);
    if (context) cl->clReleaseContext(context);
  }
};

}  // namespace

std::vector<uint8_t> serialize(const ProgramArtifact& a) {
  json j = {{"format", kFormat},
            {"source", a.source},
            {"build_options", a.build_options},
            {"device", a.device_identity},
            {"tensors", a.names.tensors},
            {"params", a.names.params},
            {"binary", json::binary(a.binary)}};
  return json::to_cbor(j);
}

ProgramArtifact deserialize(const std::vector<uint8_t>& bytes) {
  json j;
  try {
    j = json::from_cbor(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("not an OpenCL program artifact: ") + e.what());
  }
  if (!j.is_object() || j.value("format", "") != kFormat)
    throw std::runtime_error(std::string("not an OpenCL program artifact of format ") + kFormat);
  ProgramArtifact a;
  a.source = j.at("source").get<std::string>();
  a.build_options = j.at("build_options").get<std::string>();
  a.device_identity = j.at("device").get<std::string>();
  a.names.tensors = j.at("tensors").get<std::vector<std::string>>();
  a.names.params = j.at("params").get<std::vector<std::string>>();
  a.binary = j.at("binary").get_binary();
  return a;
}

std::string default_build_options() {
  // The language version of docs/ABI.md; IEEE results (no fast-math options). NVIDIA's compiler
  // fuses a * b + c into FMAs without -cl-mad-enable, as nvcc does (measured on an H200: the same
  // PTX and times with and without it).
  return "-cl-std=CL1.2";
}

int compile_main(const CompileRequest& request) {
  auto error = [&](int line, int column, const std::string& what) {
    std::fprintf(stderr, "%s:%d:%d: error: %s\n", request.source_path.c_str(), line, column, what.c_str());
    return 1;
  };
  ProgramArtifact a;
  LaunchDescription description;
  try {
    a.source = read_text(request.source_path);
    description = parse_launch_description(a.source, request.names);
  } catch (const LaunchError& e) {
    // The message after "launch description, line L, column C: ".
    std::string what = e.what();
    const size_t colon = what.find(": ");
    return error(e.line(), e.column(), colon == std::string::npos ? what : what.substr(colon + 2));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  a.names = request.names;
  a.build_options = request.build_options;

  ScopedPoclCache pocl_cache;
  try {
    const Device device = select_device({request.platform, request.device});
    a.device_identity = device.identity();
    Built b;
    b.cl = api();
    const Api& cl = *b.cl;
    cl_int err = CL_SUCCESS;
    b.context = cl.clCreateContext(nullptr, 1, &device.id, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    const char* text = a.source.c_str();
    const size_t length = a.source.size();
    b.program = cl.clCreateProgramWithSource(b.context, 1, &text, &length, &err);
    check(err, "clCreateProgramWithSource");
    err = cl.clBuildProgram(b.program, 1, &device.id, a.build_options.c_str(), nullptr, nullptr);
    const std::string log = pocl_cache.with_source_path(build_log(b.program, device.id), request.source_path);
    if (err != CL_SUCCESS) {
      std::fprintf(stderr, "%s\nerror: the OpenCL build failed: %s\n", log.c_str(), error_name(err).c_str());
      return 1;
    }
    for (const KernelLaunch& k : description.launches) {
      cl_kernel kernel = cl.clCreateKernel(b.program, k.kernel.c_str(), &err);
      if (err != CL_SUCCESS) return error(k.line, 1, "the program has no kernel named '" + k.kernel + "' (" + error_name(err) + ")");
      b.kernels.push_back(kernel);
      cl_uint n = 0;
      check(cl.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof n, &n, nullptr), "clGetKernelInfo");
      if (n != k.args.size())
        return error(k.line, 1, "kernel " + k.kernel + " takes " + std::to_string(n) + " arguments, args=[...] lists " +
                                    std::to_string(k.args.size()));
    }
    size_t size = 0;
    if (cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS && size > 0) {
      a.binary.resize(size);
      unsigned char* into = a.binary.data();
      if (cl.clGetProgramInfo(b.program, CL_PROGRAM_BINARIES, sizeof into, &into, nullptr) != CL_SUCCESS) a.binary.clear();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }

  const std::vector<uint8_t> bytes = serialize(a);
  std::ofstream out(request.output_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "error: cannot write %s\n", request.output_path.c_str());
    return 2;
  }
  return 0;
}

}  // namespace ekb::runtime::opencl
