// `ekb package` (docs/DEVICES.md, "Deployable packages"): chosen solutions, verified again under the
// full correctness protocol on the target, turned into a C library an application links: a header
// with one function per workload (the kernel ABI of docs/ABI.md under the workload's name), a
// static library built for the target, a manifest of what was verified, and an example program
// that runs one workload on inputs drawn by ekb and checks it against ekb's reference.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "suite/suite.h"

namespace ekb::package {

struct PackageOptions {
  std::string solutions_dir;      // docs/SOLUTIONS.md layout: source or IR solutions for the cpu backend
  std::string out_dir;            // the package; created, and replaced where it exists
  std::string target;             // a cpu target triple (runtime/cpu_target.h); empty: this machine
  std::string example_workload;   // the example program's workload; empty: the first packaged one
  bool time = false;              // also time each solution against the native default (not when emulated)
  bool run_example = true;        // build and run the example (under qemu-user for a cross target)
};

// One workload's outcome.
struct PackagedKernel {
  std::string workload;   // PATTERN/WORKLOAD
  std::string solution;   // its solution id in the solutions directory
  std::string function;   // the C function, ekb_PATTERN_WORKLOAD with every other character '_'
  bool packaged = false;  // verified correct and in the library
  std::string message;    // why not, when not
};

struct PackageResult {
  std::vector<PackagedKernel> kernels;  // every selected workload that has a solution, in selection order
  std::string example_workload;         // empty: no example (nothing packaged)
  bool example_ran = false;             // built and run (a cross target needs qemu-user)
  bool example_passed = false;
  std::string example_output;
  int packaged() const;
};

// The function a workload's kernel has in a package: "ekb_" + PATTERN_WORKLOAD, lower case, each
// character that is not a letter or digit an underscore (nn.pwconv/mbv1_56x56x128:
// ekb_nn_pwconv_mbv1_56x56x128).
std::string function_name(const std::string& workload);

// Verifies every selected workload's solutions on the cpu backend for options.target, keeps the
// first correct sample of each (the fastest when timed), and writes the package. Progress lines
// (one per workload) go to `progress`. Throws std::runtime_error when the package cannot be
// written (a tool missing, the library not linking); a solution that fails is reported, not thrown.
PackageResult build_package(const std::vector<suite::WorkloadEntry>& selected, const PackageOptions& options,
                            const std::function<void(const std::string&)>& progress);

}  // namespace ekb::package
