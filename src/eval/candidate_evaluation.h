// One candidate of a solution set (eval/solution_set.h) evaluated and recorded: the rule that
// `ekb eval` and a workspace's `./check` share.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "eval/baseline.h"
#include "eval/evaluator.h"
#include "eval/solution_set.h"

namespace ekb::eval {

// The result of a candidate with no code to run: a missing solution (`missing_message` says where
// none was found) or a failed generation (its metadata says why). nullopt for one with code.
std::optional<CandidateResult> result_without_code(const CandidateRef& c, std::string_view backend,
                                                   const std::string& missing_message);

// A candidate with code, evaluated against `baseline` on the workload of `reference`: its source
// (candidate_source; one that cannot become source is a compile failure), then evaluate() under
// the candidate's solution id and sample. Never throws for anything the candidate does. Every
// result carries the candidate's provenance when it has metadata, and the baseline's description;
// a baseline its compiler could not build makes the result an `internal` failure.
CandidateResult evaluate_candidate(runtime::Backend& backend, WorkloadReference& reference,
                                   const Baseline& baseline, const CandidateRef& c, EvalOptions options);

}  // namespace ekb::eval
