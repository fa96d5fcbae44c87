// The benchmark suite: every pattern file, parsed, and its workloads by full name.
#pragma once
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ast.h"
#include "ir/instance.h"

namespace ekb::suite {

struct PatternEntry {
  std::string path;  // relative to the suite root, e.g. "nn/softmax.ekb"
  ir::Module module;
  const std::string& name() const { return module.pattern.name; }
};

struct WorkloadEntry {
  const PatternEntry* pattern = nullptr;
  const ir::Workload* workload = nullptr;
  std::string full_name() const { return pattern->name() + "/" + workload->name; }
};

class SuiteError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Suite {
 public:
  // Loads every .ekb file under `dir` (recursively), or the copy embedded in the binary when `dir`
  // is empty. Throws SuiteError listing every file that fails to parse, or a duplicate name.
  static Suite load(const std::string& dir = {});
  // The directory named by $EKB_SUITE, or "" for the embedded suite.
  static std::string default_dir();

  const std::vector<std::unique_ptr<PatternEntry>>& patterns() const { return patterns_; }
  std::vector<WorkloadEntry> workloads() const;  // in pattern-name order, then file order
  const PatternEntry* find_pattern(std::string_view name) const;
  std::optional<WorkloadEntry> find_workload(std::string_view full_name) const;
  // "unknown workload 'x'" plus the nearest known name as a hint, for messages.
  std::string unknown_workload_message(std::string_view full_name) const;

 private:
  void add(std::string path, std::string_view text);
  void finish();
  std::vector<std::unique_ptr<PatternEntry>> patterns_;
};

// The element type a workload is filed under: its first input's type, with type parameters
// resolved by the workload's bindings ("f32", "i8", "u8", ...).
std::string workload_dtype(const WorkloadEntry& w);
// Binds and verifies a workload (ir::instantiate); throws SuiteError carrying the diagnostics
// when the workload is invalid. The Instance points into the Suite, which must outlive it.
ir::Instance bind_workload(const WorkloadEntry& w);

// "micro", "mobile" or "" from the workload's tags.
std::string workload_size_class(const WorkloadEntry& w);

}  // namespace ekb::suite
