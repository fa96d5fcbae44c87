#include "tvm/gpu_tuning.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "runtime/compile_cache.h"
#include "runtime/paths.h"

namespace ekb::tvm {

namespace fs = std::filesystem;
using nlohmann::json;

std::string GpuTuningRecord::hash() const { return runtime::content_key({source}).substr(0, 16); }

std::string gpu_record_key(const std::string& workload, const std::string& device, ir::Target backend, int candidates) {
  return runtime::content_key(
      {"tvm-gpu-tuned", workload, device, ir::target_name(backend), std::to_string(candidates)});
}

std::string gpu_record_path(const std::string& root, const std::string& workload, const std::string& device,
                            ir::Target backend, int candidates) {
  return (fs::path(root) / gpu_record_key(workload, device, backend, candidates) / kGpuRecordFile).string();
}

std::optional<GpuTuningRecord> read_gpu_record(const std::string& root, const std::string& workload,
                                               const std::string& device, ir::Target backend, int candidates) {
  const std::string path = gpu_record_path(root, workload, device, backend, candidates);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("source"))
    throw std::runtime_error(path + ": not a GPU tuning record");
  GpuTuningRecord r;
  r.workload = j.value("workload", "");
  r.device = j.value("device", "");
  r.backend = j.value("backend", "");
  r.candidates = j.value("candidates", 0);
  r.sample = j.value("sample", 0);
  r.trace_hash = j.value("trace_hash", "");
  r.tvm_version = j.value("tvm_version", "");
  r.source = j.value("source", "");
  r.time_ms = j.value("time_ms", 0.0);
  r.default_time_ms = j.value("default_time_ms", 0.0);
  r.run = j.value("run", "");
  // The key covers these; a file copied into the wrong directory is not this workload's.
  if (r.workload != workload || r.device != device || r.backend != ir::target_name(backend) ||
      r.candidates != candidates)
    throw std::runtime_error(path + ": the record is for " + r.workload + " on " + r.device + " (" + r.backend + ", " +
                             std::to_string(r.candidates) + " candidates), not the directory's key");
  return r;
}

std::string write_gpu_record(const std::string& root, const GpuTuningRecord& r) {
  auto target = ir::parse_target(r.backend);
  if (!target || !ir::is_gpu(*target)) throw std::invalid_argument("a GPU tuning record's backend is cuda or opencl");
  const fs::path path = gpu_record_path(root, r.workload, r.device, *target, r.candidates);
  fs::create_directories(path.parent_path());
  json j = {{"workload", r.workload}, {"device", r.device},         {"backend", r.backend},
            {"candidates", r.candidates}, {"sample", r.sample},     {"trace_hash", r.trace_hash},
            {"tvm_version", r.tvm_version}, {"time_ms", r.time_ms}, {"default_time_ms", r.default_time_ms},
            {"run", r.run},               {"source", r.source}};
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << j.dump(1) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
  return path.string();
}

runtime::Source gpu_record_source(const GpuTuningRecord& r) {
  runtime::Source s;
  s.language = r.backend == "cuda" ? runtime::Language::Cuda : runtime::Language::OpenCL;
  s.text = r.source;
  s.origin = std::string(kTvmTuned);
  return s;
}

}  // namespace ekb::tvm
