#include "runtime/kernel_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "runtime/abi_call.h"
#include "runtime/crash_report.h"
#include "runtime/kernel_executor.h"

namespace ekb::runtime {

KernelLibrary open_kernel_library(int artifact_fd, const std::vector<int64_t>& params) {
  KernelLibrary l;
  l.fd = artifact_fd;
  // Through the descriptor: the worker may run as a user that cannot reach the cache directory.
  std::string path = "/proc/self/fd/" + std::to_string(artifact_fd);
  clear_errno();
  l.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle) {
    ::close(artifact_fd);
    const char* e = ::dlerror();
    throw ExecutorError(std::string("cannot load the shared object: ") + (e ? e : "unknown error"));
  }
  l.entry = ::dlsym(l.handle, "ekb_main");
  if (!l.entry) {
    close_kernel_library(l);
    throw ExecutorError("the solution defines no ekb_main with C linkage (in C++, declare it extern \"C\")");
  }
  if (void* sb = ::dlsym(l.handle, "ekb_scratch_bytes")) {
    std::vector<uint64_t> a(params.begin(), params.end());
    l.scratch_bytes = call_i64_u64(sb, a.data(), a.size());
    if (l.scratch_bytes < 0) {
      int64_t bad = l.scratch_bytes;
      close_kernel_library(l);
      throw ExecutorError("ekb_scratch_bytes returned a negative size (" + std::to_string(bad) + ")");
    }
  }
  return l;
}

void close_kernel_library(KernelLibrary& l) {
  if (l.handle) ::dlclose(l.handle);
  if (l.fd >= 0) ::close(l.fd);
  l = {};
}

}  // namespace ekb::runtime
