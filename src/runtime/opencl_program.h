// What the opencl backend compiles a `.cl` solution into, and the compile step itself.
//
// "Compiling" an OpenCL solution is clBuildProgram on the chosen device. It runs in a child process
// (`ekb opencl-compile`, under the compile step's time and memory limits, like nvcc for cuda): a
// source can crash or hang the platform's compiler, and PoCL runs the system linker while building.
// The child checks the launch description against the workload's names and the built program
// (every kernel exists and takes as many arguments as `args` lists), and writes the artifact: a
// CBOR document with the source, the build options, the device it was built for and the program
// binary where the platform gives one (CL_PROGRAM_BINARIES: PoCL's includes its work-group
// functions compiled for any local size; NVIDIA's is PTX), so that a worker only loads it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/opencl_launch.h"

namespace ekb::runtime::opencl {

struct ProgramArtifact {
  std::string source;           // the whole .cl text; the worker re-parses the launch description
  std::string build_options;
  std::string device_identity;  // Device::identity() of the device it was built for
  LaunchNames names;
  std::vector<uint8_t> binary;  // empty: the worker builds `source`
};

std::vector<uint8_t> serialize(const ProgramArtifact& a);
// Throws std::runtime_error for a document that is not an artifact of this format.
ProgramArtifact deserialize(const std::vector<uint8_t>& bytes);

// The options every program is built with.
std::string default_build_options();

struct CompileRequest {
  std::string source_path, output_path;
  std::string platform;  // DeviceSelection
  int device = 0;
  std::string build_options;
  LaunchNames names;
};

// `ekb opencl-compile`: builds the request's source and writes the artifact. Diagnostics go to
// stderr as "PATH:LINE:COL: error: ..." (launch description) or the platform's build log.
// Returns the process exit code (0: artifact written).
int compile_main(const CompileRequest& request);

}  // namespace ekb::runtime::opencl
