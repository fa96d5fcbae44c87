#include "eval/candidate_evaluation.h"

#include <fmt/core.h>

#include <chrono>
#include <utility>

namespace ekb::eval {

namespace {

// A result for `c` that records why it was not run.
CandidateResult not_run(const CandidateRef& c, std::string_view backend, ErrorKind kind, std::string message) {
  CandidateResult r;
  r.task = c.workload.pattern->name();
  r.workload = c.workload.full_name();
  r.backend = std::string(backend);
  r.solution = c.solution.empty() ? "(none)" : c.solution;
  r.sample = c.sample;
  r.error = kind;
  r.message = std::move(message);
  return r;
}

// The ledger travels with the result.
CandidateResult with_provenance(CandidateResult r, const CandidateRef& c) {
  if (c.meta) r.provenance = c.meta->provenance();
  return r;
}

}  // namespace

std::optional<CandidateResult> result_without_code(const CandidateRef& c, std::string_view backend,
                                                   const std::string& missing_message) {
  if (c.missing()) return not_run(c, backend, ErrorKind::Missing, missing_message);
  if (!c.failed_generation()) return std::nullopt;
  const SolutionMeta& meta = *c.meta;
  return with_provenance(
      not_run(c, backend, meta.failure_kind(),
              meta.ok() ? "the metadata says status ok, but there is no code file"
                        : fmt::format("{}: {}", meta.status, meta.error.empty() ? "(no message)" : meta.error)),
      c);
}

CandidateResult evaluate_candidate(runtime::Backend& backend, WorkloadReference& reference,
                                   const Baseline& baseline, const CandidateRef& c, EvalOptions options) {
  if (!baseline.error.empty()) {
    CandidateResult r = not_run(c, backend.name(), ErrorKind::Internal,
                                fmt::format("the {} baseline does not compile: {}", baseline.info.compiler, baseline.error));
    r.baseline_info = baseline.info;
    return with_provenance(std::move(r), c);
  }
  std::optional<runtime::Source> source;
  // Making the source is part of compiling where another compiler makes it (TVM's bridge).
  const auto start = std::chrono::steady_clock::now();
  auto source_seconds = [&] {
    return c.tvm ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() : 0.0;
  };
  try {
    source = candidate_source(c, reference.instance(), backend.target());
  } catch (const CandidateError& e) {
    CandidateResult r = not_run(c, backend.name(), ErrorKind::Compile, e.what());
    r.cost.compile_s = source_seconds();
    r.baseline_info = baseline.info;
    return with_provenance(std::move(r), c);
  }
  const double made_in = source_seconds();
  options.solution = c.solution;
  options.sample = c.sample;
  CandidateResult r = evaluate(backend, reference, *source, baseline.source, options);
  r.cost.compile_s += made_in;
  r.baseline_info = baseline.info;
  return with_provenance(std::move(r), c);
}

}  // namespace ekb::eval
