#include "suite/schedule_examples.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ekb::suite {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string domain_of(const std::string& pattern) { return pattern.substr(0, pattern.find('.')); }
std::string operator_of(const std::string& pattern) { return pattern.substr(pattern.find('.') + 1); }

// "dwconv3x3_relu6" -> {"dwconv3x3", "relu6"}
std::vector<std::string> name_parts(const std::string& op) {
  std::vector<std::string> parts;
  std::stringstream s(op);
  for (std::string part; std::getline(s, part, '_');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// How alike two patterns are, for choosing an example when the workload's own pattern has none.
int similarity(const Suite& suite, const std::string& a, const std::string& b) {
  int score = 0;
  if (operator_of(a) == operator_of(b)) score += 8;  // the same operator in another domain
  for (const auto& pa : name_parts(operator_of(a)))
    for (const auto& pb : name_parts(operator_of(b)))
      if (pa == pb) score += 4;
  if (domain_of(a) == domain_of(b)) score += 2;
  const PatternEntry *pa = suite.find_pattern(a), *pb = suite.find_pattern(b);
  if (pa && pb && pa->module.pattern.level == pb->module.pattern.level) score += 1;
  return score;
}

}  // namespace

std::string default_schedule_examples_dir(ir::Target target) {
  return std::string(EKB_SOURCE_DIR) + (ir::is_gpu(target) ? "/examples/schedules-cuda" : "/examples/schedules-cpu");
}

std::optional<ScheduleExample> find_schedule_example(const Suite& suite, const std::string& workload,
                                                     const std::string& dir) {
  const std::string pattern = workload.substr(0, workload.find('/'));
  const std::string workload_name = workload.substr(workload.find('/') + 1);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  for (const fs::path& own : {fs::path(dir) / pattern / (workload_name + ".ekb"), fs::path(dir) / pattern / "all.ekb"})
    if (fs::is_regular_file(own, ec)) return ScheduleExample{pattern, own.string(), read_file(own)};

  std::optional<ScheduleExample> best;
  int best_score = -1;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory() && fs::is_regular_file(entry.path() / "all.ekb")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());  // ties go to the first name, whatever the directory order
  for (const fs::path& d : dirs) {
    const std::string candidate = d.filename().string();
    const int score = similarity(suite, pattern, candidate);
    if (score > best_score) {
      best_score = score;
      best = ScheduleExample{candidate, (d / "all.ekb").string(), read_file(d / "all.ekb")};
    }
  }
  return best;
}

std::string schedule_example_section(const ScheduleExample& example, const std::string& pattern) {
  std::string intro =
      example.pattern == pattern
          ? "A hand-written IR solution for this pattern, for reference"
          : "A hand-written IR solution for the similar pattern `" + example.pattern + "`, for reference";
  const bool gpu = example.text.find("schedule gpu") != std::string::npos;
  const std::string directives =
      gpu ? "followed by `schedule gpu { ... }` and `memory gpu { ... }` directives, one per line, applied in\n"
            "order: split/tile (tail=guard|shift_inwards|round_up|peel), reorder, fuse, unroll, rfactor,\n"
            "bind(stage, loop, block.x|y|z or thread.x|y|z) (a stage with bound loops is one kernel, its\n"
            "grid and block from the bound loops' extents), cache_read(tensor, stage, loop, shared, name)\n"
            "(the block's threads copy the tile into shared memory together, between barriers),\n"
            "cache_write(stage, loop, local, name) (a register tile), layout(cache, order(...)).\n"
            "The native compiler lowers it to CUDA or OpenCL, and it is checked and timed like a source solution.\n\n"
          : "followed by `schedule cpu { ... }` directives, one per line, applied in order:\n"
            "split/tile (tail=guard|shift_inwards|round_up|peel|mask: mask runs a ragged last block of\n"
            "vectorized lanes as one masked vector), reorder (a reduction loop moved out accumulates in\n"
            "place), fuse, parallel, vectorize(stage, loop, width[, tail=mask]), unroll, rfactor.\n"
            "The native compiler lowers it to C, and it is checked and timed like a source solution.\n\n";
  return "## Example: an IR solution with a schedule\n\n" + intro +
         ".\nAn IR solution (`.ekb`) holds the pattern's compute layer (the original, or an equivalent\n"
         "rewrite that keeps the tensors' names, roles, types and shapes and the params; temps may\n"
         "change) " + directives +
         "```ekb\n" + example.text + (example.text.empty() || example.text.back() == '\n' ? "" : "\n") + "```\n\n";
}

}  // namespace ekb::suite
