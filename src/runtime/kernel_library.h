// A solution's shared object as a worker loads it (cpu and cuda alike): opened through its
// descriptor, `ekb_main` resolved, the scratch memory its `ekb_scratch_bytes(params)` declares.
#pragma once
#include <cstdint>
#include <vector>

namespace ekb::runtime {

struct KernelLibrary {
  void* handle = nullptr;
  int fd = -1;
  void* entry = nullptr;  // ekb_main
  int64_t scratch_bytes = -1;  // -1: declares none
};

// Takes `artifact_fd` (closed on failure). Throws ExecutorError: not loadable, no ekb_main with C
// linkage, a negative scratch size.
KernelLibrary open_kernel_library(int artifact_fd, const std::vector<int64_t>& params);
void close_kernel_library(KernelLibrary& library);

}  // namespace ekb::runtime
