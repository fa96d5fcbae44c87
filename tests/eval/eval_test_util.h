// Shared set-up of the harness tests: the suite, a compile cache that survives between runs (so a
// re-run compiles nothing), the `ekb` binary as the worker, and evaluation options short enough for
// tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/solution_set.h"
#include "eval/workload_reference.h"
#include "runtime/cpu_backend.h"
#include "runtime/opencl_backend.h"
#include "suite/suite.h"

namespace ekb::testing {

inline std::string test_cache_dir() {
  if (const char* d = std::getenv("EKB_CACHE_DIR"); d && *d) return d;
  return ::testing::TempDir() + "ekb-test-cache";
}

inline runtime::CpuBackend& test_backend() {
  static runtime::CpuBackend backend([] {
    runtime::CpuBackendOptions o;
    o.cache_dir = test_cache_dir();
    return o;
  }());
  return backend;
}

// The OpenCL backend on the device $EKB_OPENCL_PLATFORM/$EKB_OPENCL_DEVICE name (default: the first
// platform with a device), built once for the test program; null with `why` set where there is none.
inline runtime::OpenCLBackend* test_opencl_backend(std::string* why) {
  static std::string reason;
  static std::unique_ptr<runtime::OpenCLBackend> backend = [] {
    try {
      runtime::OpenCLBackendOptions o;
      o.device = runtime::opencl::device_from_environment();
      o.cache_dir = test_cache_dir();
      return std::make_unique<runtime::OpenCLBackend>(o);
    } catch (const std::exception& e) {
      reason = e.what();
      return std::unique_ptr<runtime::OpenCLBackend>();
    }
  }();
  *why = reason;
  return backend.get();
}

inline std::string adversarial_dir() {
  return std::filesystem::path(std::string(EKB_TEST_DATA_DIR) + "/../adversarial").lexically_normal().string();
}

// The value of a corpus file's `// KEY: value` header line ("" when it has none).
inline std::string corpus_header(const std::string& text, const std::string& key) {
  const std::string tag = "// " + key + ":";
  const size_t p = text.find(tag);
  if (p == std::string::npos) return "";
  const size_t b = text.find_first_not_of(' ', p + tag.size());
  return text.substr(b, text.find('\n', b) - b);
}

// The names of the files in adversarial_dir()/SUBDIR ending in EXT, sorted.
inline std::vector<std::string> corpus_files(const std::string& subdir, const std::string& ext) {
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(adversarial_dir() + "/" + subdir))
    if (f.is_regular_file() && f.path().extension() == ext) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A file name as a GoogleTest parameter name.
inline std::string file_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

// Instances and their reference caches, one per workload, for the whole test program.
class TestWorkloads {
 public:
  static TestWorkloads& get() {
    static TestWorkloads w;
    return w;
  }
  eval::WorkloadReference& reference(const std::string& full_name) {
    std::lock_guard lock(mutex_);
    auto it = refs_.find(full_name);
    if (it != refs_.end()) return *it->second.ref;
    auto entry = suite_.find_workload(full_name);
    if (!entry) throw std::runtime_error("no workload " + full_name);
    Entry& e = refs_[full_name];
    e.inst = std::make_unique<ir::Instance>(suite::bind_workload(*entry));
    e.ref = std::make_unique<eval::WorkloadReference>(*e.inst);
    return *e.ref;
  }

 private:
  TestWorkloads() : suite_(suite::Suite::load()) {}
  struct Entry {
    std::unique_ptr<ir::Instance> inst;
    std::unique_ptr<eval::WorkloadReference> ref;
  };
  suite::Suite suite_;
  std::mutex mutex_;
  std::map<std::string, Entry> refs_;
};

// Short limits: a hang costs 2 s, timing stops after a few runs.
inline eval::EvalOptions fast_options() {
  eval::EvalOptions o;
  o.call_timeout_s = 2;
  o.timing.min_time_s = 0.01;
  o.timing.min_runs = 5;
  o.timing.max_runs = 40;
  o.timing.warmup_runs = 1;
  o.memory_limit_bytes = 768ull << 20;  // page faults are slow on small VMs: runaway memory fails fast
  o.worker_executable = EKB_BINARY;
  return o;
}

// The native compiler's C for the workload: what `ekb eval` measures candidates against.
inline runtime::Source baseline_for(const eval::WorkloadReference& ref) {
  return eval::native_baseline_source(ref.instance());
}

}  // namespace ekb::testing
