// GPU tuning's records (docs/TVM.md, "GPU tuning"): the candidates sampled where TVM is installed
// (tvm::gpu_candidates) are evaluated by `ekb eval` on the GPU machine, which has no TVM; `ekb
// tvm-tune select` then keeps each workload's fastest correct candidate as a record, which
// `--baseline tvm-tuned` and `-s tvm-tuned` use on cuda and opencl. A record is one small JSON file
// under <cache>/tvm-records/<key>/, the key a content hash of the workload, the device's name, the
// backend and the candidate count, so the same file serves on any machine with that device: copied
// back from the GPU machine, a tuning is paid for once. Nothing here needs Python or TVM.
#pragma once
#include <optional>
#include <string>

#include "ir/target.h"
#include "runtime/backend.h"
#include "tvm/tvm_compiler.h"

namespace ekb::tvm {

struct GpuTuningRecord {
  std::string workload;     // pattern/workload
  std::string device;       // the device's name as its backend reports it ("NVIDIA H200")
  std::string backend;      // "cuda" | "opencl"
  int candidates = 0;       // K: the sampled candidates asked for (sample 0, TVM's untuned translation, besides)
  int sample = 0;           // the fastest correct sample; 0 when no tuned candidate beat the untuned translation
  std::string trace_hash;   // its MetaSchedule trace's hash (empty for sample 0)
  std::string tvm_version;  // the TVM that generated the candidates
  std::string source;       // what the backend compiles
  double time_ms = 0;       // the chosen sample's median time in the tuning run
  double default_time_ms = 0;  // sample 0's, in the same run (0 when it was not timed)
  std::string run;          // the evaluation run the times come from

  // The content hash of the record's source (16 hex digits): a result's `baseline.records`.
  std::string hash() const;
};

// The file name of a record inside its key's directory.
inline constexpr std::string_view kGpuRecordFile = "gpu_tuned.json";

std::string gpu_record_key(const std::string& workload, const std::string& device, ir::Target backend, int candidates);

// <root>/<key>/gpu_tuned.json.
std::string gpu_record_path(const std::string& root, const std::string& workload, const std::string& device,
                            ir::Target backend, int candidates);

// The record, or nullopt when there is none. Throws std::runtime_error naming the file when it is malformed.
std::optional<GpuTuningRecord> read_gpu_record(const std::string& root, const std::string& workload,
                                               const std::string& device, ir::Target backend, int candidates);

// Writes it (beside and renamed into place); returns its path.
std::string write_gpu_record(const std::string& root, const GpuTuningRecord& record);

// The record's source as the backend compiles it (origin "tvm:tuned").
runtime::Source gpu_record_source(const GpuTuningRecord& record);

// The script that makes records, for the message of a run that needs one and finds none.
inline constexpr std::string_view kGpuTuneScript = "bench/tvm_gpu_tune.sh";

}  // namespace ekb::tvm
