// LEKA's first look at a workload (docs/AGENT.md, "The loop"): its cost facts, its roofline bound
// on this machine where a calibration exists, the default lowering's loop IR and the stages of its
// compute layer with their loops, which the policies read to choose what to try.
#pragma once
#include <optional>
#include <vector>

#include "agent/policy.h"
#include "ir/instance.h"
#include "ir/target.h"
#include "runtime/calibration.h"
#include "suite/suite.h"

namespace ekb::agent {

// The compute layer's pure definitions in program order, each with its loops (pure, then
// reduction) and the tensors it reads.
std::vector<StageFacts> stage_facts(const ir::Instance& inst);

// Everything but the baseline's time, which the loop's first evaluation measures
// (baseline_ms stays 0 here; roofline_ms is 0 without a calibration).
WorkloadAnalysis analyse_workload(const suite::WorkloadEntry& w, const ir::Instance& inst, ir::Target target,
                                  const std::optional<runtime::Calibration>& calibration);

}  // namespace ekb::agent
