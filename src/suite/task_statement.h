// The task statement for one workload and backend: everything a model or a person needs to write
// a source solution (`ekb prompt`). Generation (LLM clients, workspaces) reuses it verbatim.
#pragma once
#include <string>

#include "ir/target.h"
#include "ir/instance.h"
#include "suite/suite.h"

namespace ekb::suite {

std::string task_statement(const WorkloadEntry& w, const ir::Instance& inst, ir::Target target);

}  // namespace ekb::suite
