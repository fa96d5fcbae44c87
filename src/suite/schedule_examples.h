// Hand-written IR solutions with schedules (examples/schedules-cpu, laid out as docs/SOLUTIONS.md
// says) shown to people and models writing IR solutions: `ekb prompt WORKLOAD --ir-example` appends
// the example for the workload's pattern or, when it has none, for the most similar pattern.
#pragma once
#include <optional>
#include <string>

#include "ir/target.h"
#include "suite/suite.h"

namespace ekb::suite {

struct ScheduleExample {
  std::string pattern;  // the pattern the example solves, e.g. "nn.conv2d"
  std::string path;     // the file, e.g. ".../nn.conv2d/all.ekb"
  std::string text;     // its contents
};

// The examples in the source tree: <repository>/examples/schedules-cpu, or for a gpu backend
// (cuda, opencl) examples/schedules-cuda.
std::string default_schedule_examples_dir(ir::Target target = ir::Target::Cpu);

// The example for `workload` (PATTERN/WORKLOAD) in `dir`: its pattern's WORKLOAD.ekb, else its
// all.ekb; without either, the example of the most similar pattern (same operator name in another
// domain, e.g. qnn.conv2d -> nn.conv2d, then a shared name part, then the same domain and level).
// nullopt when `dir` holds no example at all.
std::optional<ScheduleExample> find_schedule_example(const Suite& suite, const std::string& workload,
                                                     const std::string& dir);

// The prompt section presenting `example` for `workload`'s pattern.
std::string schedule_example_section(const ScheduleExample& example, const std::string& pattern);

}  // namespace ekb::suite
