// Helpers for tests that run the native compiler's output: compile C with clang into a shared
// object, load it with dlopen, call ekb_main on typed buffers (through runtime::call_void_u64, as
// the harness does), and compare outputs with the reference under the correctness tolerance.
#pragma once
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"
#include "runtime/abi_call.h"
#include "suite/tolerance.h"

namespace ekb::codegen::testing {

// A compiled shared object, unloaded and deleted on destruction.
class NativeKernel {
 public:
  // Compiles `source` as C with the cpu backend's ABI header ($EKB_CC, default clang); throws with
  // the compiler's output.
  explicit NativeKernel(const std::string& source, const std::string& flags = "-O2 -march=native")
      : NativeKernel(std::vector<std::string>{source}, flags) {}
  // Several translation units in one shared object (one compiler run): give their entry points
  // different names (codegen::CEmitOptions).
  explicit NativeKernel(const std::vector<std::string>& sources, const std::string& flags = "-O2 -march=native") {
    char tmpl[] = "/tmp/ekb_native_XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    std::string files;
    for (size_t i = 0; i < sources.size(); ++i) {
      std::string file = dir_ + "/k" + std::to_string(i) + ".c";
      std::ofstream(file) << sources[i];
      files += " " + file;
    }
    const char* cc = std::getenv("EKB_CC");  // the cpu backend's compiler choice
    std::string cmd = std::string(cc && *cc ? cc : "clang") + " " + flags +
                      " -fPIC -shared -include " EKB_SOURCE_DIR "/include/ekb/ekb_abi.h" + files + " -o " + dir_ +
                      "/k.so -lm > " + dir_ + "/log.txt 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir_ + "/log.txt");
      std::stringstream ss;
      ss << log.rdbuf();
      std::filesystem::remove_all(dir_);
      throw std::runtime_error("clang failed:\n" + ss.str());
    }
    handle_ = dlopen((dir_ + "/k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~NativeKernel() {
    if (handle_) dlclose(handle_);
    std::filesystem::remove_all(dir_);
  }
  NativeKernel(const NativeKernel&) = delete;
  NativeKernel& operator=(const NativeKernel&) = delete;

  void* symbol(const char* name) const { return dlsym(handle_, name); }

 private:
  std::string dir_;
  void* handle_ = nullptr;
};

// 64-byte aligned bytes (the ABI's buffer alignment).
struct AlignedBytes {
  explicit AlignedBytes(size_t n)
      : size(n), data(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))) {}
  ~AlignedBytes() { std::free(data); }
  AlignedBytes(const AlignedBytes&) = delete;
  size_t size;
  uint8_t* data;
};

// Runs ekb_main (and ekb_scratch_bytes, when declared) on `inputs`; outputs are poisoned first
// (NaN bytes for floats, 0xA5 for integers). Checks that the inputs are unmodified.
inline std::vector<ir::TensorData> run_native(const NativeKernel& k, const ir::Instance& inst,
                                              const std::vector<ir::TensorData>& inputs,
                                              const std::string& entry_name = "ekb_main",
                                              const std::string& scratch_function = "ekb_scratch_bytes") {
  void* entry = k.symbol(entry_name.c_str());
  if (!entry) throw std::runtime_error("no " + entry_name);
  std::vector<std::unique_ptr<AlignedBytes>> bufs;
  std::vector<std::vector<uint8_t>> input_bytes;
  std::vector<uint64_t> args;
  for (const ir::TensorData& t : inputs) {
    input_bytes.push_back(ir::to_bytes(t));
    bufs.push_back(std::make_unique<AlignedBytes>(input_bytes.back().size()));
    std::memcpy(bufs.back()->data, input_bytes.back().data(), input_bytes.back().size());
    args.push_back(reinterpret_cast<uint64_t>(bufs.back()->data));
  }
  std::vector<const ir::TensorInstance*> outs;
  for (const ir::TensorInstance& t : inst.tensors)
    if (t.decl->role == ir::TensorRole::Output) outs.push_back(&t);
  size_t first_out = bufs.size();
  for (const ir::TensorInstance* t : outs) {
    bufs.push_back(std::make_unique<AlignedBytes>(static_cast<size_t>(t->num_bytes())));
    std::memset(bufs.back()->data, ir::is_float(t->type) ? 0xFF : 0xA5, bufs.back()->size);
    args.push_back(reinterpret_cast<uint64_t>(bufs.back()->data));
  }
  std::vector<uint64_t> params;
  for (const ir::Ident& p : inst.pattern().params)
    params.push_back(static_cast<uint64_t>(inst.params.at(p.name)));
  args.insert(args.end(), params.begin(), params.end());
  std::unique_ptr<AlignedBytes> scratch;
  if (void* sfn = k.symbol(scratch_function.c_str())) {
    int64_t n = runtime::call_i64_u64(sfn, params.data(), params.size());
    if (n < 0) throw std::runtime_error("negative scratch size");
    scratch = std::make_unique<AlignedBytes>(static_cast<size_t>(n));
    args.push_back(reinterpret_cast<uint64_t>(scratch->data));
  }
  runtime::call_void_u64(entry, args.data(), args.size());
  for (size_t i = 0; i < input_bytes.size(); ++i)
    if (std::memcmp(bufs[i]->data, input_bytes[i].data(), input_bytes[i].size()) != 0)
      throw std::runtime_error("input " + std::to_string(i) + " was modified");
  std::vector<ir::TensorData> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    const AlignedBytes& b = *bufs[first_out + i];
    result.push_back(ir::from_bytes(outs[i]->type, outs[i]->shape, b.data, b.size));
  }
  return result;
}

// The correctness check of docs/EVALUATION.md §4 (suite/tolerance.h): "" when every output element passes,
// else a description of the first failure.
inline std::string compare_outputs(const ir::Instance& inst, const std::vector<ir::TensorData>& got,
                                   const std::vector<ir::TensorData>& want) {
  if (got.size() != want.size()) return "wrong number of outputs";
  std::vector<std::string> names;
  for (const ir::TensorInstance& t : inst.tensors)
    if (t.decl->role == ir::TensorRole::Output) names.push_back(t.decl->name);
  for (size_t k = 0; k < want.size(); ++k) {
    const ir::TensorData& g = got[k];
    const ir::TensorData& w = want[k];
    int64_t n = w.num_elements();
    suite::Tolerance tol = suite::tolerance_for(w.type);
    double ss = 0;
    int64_t finite = 0;
    for (int64_t e = 0; e < n; ++e)
      if (std::isfinite(w.as_double(e))) ss += w.as_double(e) * w.as_double(e), ++finite;
    double rms = finite ? std::sqrt(ss / static_cast<double>(finite)) : 0;
    int64_t bad = 0;
    std::string first;
    for (int64_t e = 0; e < n; ++e) {
      double o = g.as_double(e), r = w.as_double(e);
      bool ok;
      if (!w.is_float())
        ok = g.i[e] == w.i[e];
      else if (std::isnan(r) || std::isnan(o))
        ok = std::isnan(r) && std::isnan(o);
      else if (std::isinf(r) || std::isinf(o))
        ok = o == r;
      else
        ok = std::fabs(o - r) <= tol.rtol * std::fabs(r) + tol.atol_rms * rms;
      if (!ok && bad++ == 0) {
        std::ostringstream ss;
        ss.precision(17);
        ss << names[k] << "[" << e << "]: got " << o << ", want " << r << " (rms " << rms << ")";
        first = ss.str();
      }
    }
    if (bad) return first + "; " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ";
  }
  return "";
}

}  // namespace ekb::codegen::testing
