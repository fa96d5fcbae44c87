// A disk cache of reference outputs. The interpreter computes them in f64 and can take seconds on
// a large workload, which would dominate a re-run; the inputs themselves are cheap to regenerate
// from their seed, so only the reference's answer is stored.
//
// A trial's key hashes everything that determines its answer: the pattern's canonical text, the
// workload's bindings, the trial kind and seed, and the contents of the running executable (so a
// rebuilt interpreter never sees answers of an older one). Files are published by rename, as in
// the compile cache, so concurrent runs sharing a cache never read a half-written file. The cache
// is bounded: past `max_bytes`, the least recently used files go.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"
#include "runtime/compile_cache.h"

namespace ekb::eval {

struct StoredReference {
  std::vector<ir::TensorData> expected;  // each output, ABI order
  std::vector<double> rms;
  std::string reference_error;           // non-empty: the reference failed on these inputs
};

class ReferenceCache {
 public:
  // Files live in <cache_root>/reference, created on first store.
  ReferenceCache(const std::string& cache_root, uint64_t max_bytes);

  // The cache ekb eval uses: <default cache dir>/reference, bounded by $EKB_REFERENCE_CACHE_MB
  // (default 4096; 0 turns the cache off, giving nullopt).
  static std::optional<ReferenceCache> default_cache();

  // `kind`: "random", "edge", or a branch trial's label (which says how its inputs are made).
  static std::string key(const ir::Instance& inst, uint64_t seed, const std::string& kind);

  // nullopt when absent or unreadable (a damaged file is treated as absent and removed).
  std::optional<StoredReference> load(const std::string& key, const ir::Instance& inst) const;
  // Best effort: a full disk or an unwritable directory only means the next run recomputes.
  void store(const std::string& key, const StoredReference& ref) const;

  const std::string& directory() const { return files_.directory(); }

 private:
  void evict_if_over_budget() const;

  runtime::CompileCache files_;  // its atomic publishing, for files of another kind
  uint64_t max_bytes_;
};

}  // namespace ekb::eval
