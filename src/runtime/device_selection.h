// Which device of which platform a backend runs kernels on: chosen by the opencl backend when it is
// made, handed to its compile step and its workers on their command lines.
#pragma once
#include <string>

namespace ekb::runtime {

// A case-insensitive substring of the platform's name or version (empty: the first platform with a
// device) and the device's index within that platform.
struct DeviceSelection {
  std::string platform;
  int device = 0;
};

}  // namespace ekb::runtime
