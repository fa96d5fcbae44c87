#include "suite/suite.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/diagnostics.h"
#include "ir/parser.h"
#include "suite/embedded.h"

namespace ekb::suite {

namespace fs = std::filesystem;

std::string Suite::default_dir() {
  const char* env = std::getenv("EKB_SUITE");
  return env ? std::string(env) : std::string();
}

Suite Suite::load(const std::string& dir) {
  Suite s;
  std::string errors;
  auto add_checked = [&](std::string path, std::string_view text) {
    try {
      s.add(std::move(path), text);
    } catch (const ir::ParseError& e) {
      errors += e.diagnostic().format() + "\n";
    }
  };
  if (dir.empty()) {
    for (const auto& f : embedded_suite_files())
      add_checked("suite/" + std::string(f.path), std::string_view(f.data, f.size));
  } else {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw SuiteError("suite directory '" + dir + "' does not exist");
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_regular_file() && e.path().extension() == ".ekb") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      add_checked(p.string(), ss.str());
    }
  }
  if (!errors.empty()) throw SuiteError("the suite has files that do not parse:\n" + errors);
  s.finish();
  return s;
}

void Suite::add(std::string path, std::string_view text) {
  auto e = std::make_unique<PatternEntry>();
  e->module = ir::parse_module(text, path);
  e->path = std::move(path);
  patterns_.push_back(std::move(e));
}

void Suite::finish() {
  std::sort(patterns_.begin(), patterns_.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  for (size_t i = 1; i < patterns_.size(); ++i)
    if (patterns_[i]->name() == patterns_[i - 1]->name())
      throw SuiteError("pattern '" + patterns_[i]->name() + "' is defined in both " +
                       patterns_[i - 1]->path + " and " + patterns_[i]->path);
}

std::vector<WorkloadEntry> Suite::workloads() const {
  std::vector<WorkloadEntry> out;
  for (const auto& p : patterns_)
    for (const auto& w : p->module.workloads) out.push_back(WorkloadEntry{p.get(), &w});
  return out;
}

const PatternEntry* Suite::find_pattern(std::string_view name) const {
  for (const auto& p : patterns_)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::optional<WorkloadEntry> Suite::find_workload(std::string_view full_name) const {
  size_t slash = full_name.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const PatternEntry* p = find_pattern(full_name.substr(0, slash));
  if (!p) return std::nullopt;
  const ir::Workload* w = p->module.find_workload(std::string(full_name.substr(slash + 1)));
  if (!w) return std::nullopt;
  return WorkloadEntry{p, w};
}

std::string Suite::unknown_workload_message(std::string_view full_name) const {
  std::vector<std::string> names;
  for (const auto& w : workloads()) names.push_back(w.full_name());
  std::string msg = "unknown workload '" + std::string(full_name) + "'";
  std::string hint = ir::did_you_mean(full_name, names);
  if (hint.empty() && full_name.find('/') == std::string_view::npos) {
    if (const PatternEntry* p = find_pattern(full_name); p && !p->module.workloads.empty())
      hint = "'" + p->name() + "' is a pattern; its workloads are named like '" + p->name() + "/" +
             p->module.workloads.front().name + "'";
  }
  if (hint.empty()) hint = "`ekb list` shows every workload";
  return msg + "\n  hint: " + hint;
}

std::string workload_dtype(const WorkloadEntry& w) {
  const ir::Pattern& p = w.pattern->module.pattern;
  for (const auto& t : p.tensors) {
    if (t.role != ir::TensorRole::Input) continue;
    if (const ir::Binding* b = w.workload->find_binding(t.type.name); b && b->is_type) return b->type_name;
    return t.type.name;
  }
  return "";
}

ir::Instance bind_workload(const WorkloadEntry& w) {
  ir::Diagnostics diags(w.pattern->path);
  auto inst = ir::instantiate(w.pattern->module, *w.workload, diags);
  if (!inst) throw SuiteError("workload '" + w.full_name() + "' is invalid:\n" + diags.format());
  return std::move(*inst);
}

std::string workload_size_class(const WorkloadEntry& w) {
  if (w.workload->has_tag("micro")) return "micro";
  if (w.workload->has_tag("mobile")) return "mobile";
  return "";
}

}  // namespace ekb::suite
