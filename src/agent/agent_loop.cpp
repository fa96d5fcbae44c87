#include "agent/agent_loop.h"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/budget.h"
#include "agent/layered_program.h"
#include "agent/workload_analysis.h"
#include "eval/baseline.h"
#include "eval/candidate_evaluation.h"
#include "eval/solution_meta.h"
#include "eval/solution_set.h"
#include "ir/directives.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "lower/schedule_error.h"
#include "runtime/paths.h"

namespace ekb::agent {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The directive table's rows of `layer` that have a meaning on `target`, as their syntax and doc.
std::vector<std::string> legal_directives(Layer layer, ir::Target target) {
  std::vector<std::string> out;
  if (layer != Layer::Schedule && layer != Layer::Memory) return out;
  const ir::LayerKind kind = layer == Layer::Schedule ? ir::LayerKind::Schedule : ir::LayerKind::Memory;
  for (const auto& d : ir::directive_table())
    if (d.layer == kind && d.targets.contains(target))
      out.push_back(ir::directive_signature(d) + "  -- " + std::string(d.doc));
  return out;
}

// The stage a failed evaluation stopped at (policy.h's Step::outcome).
std::string failed_stage(const eval::CandidateResult& r) {
  if (!r.compiled || r.error == eval::ErrorKind::Compile || r.error == eval::ErrorKind::Load) return "compile";
  if (r.error == eval::ErrorKind::Nondeterministic || r.error == eval::ErrorKind::Internal) return "timing";
  return "correctness";
}

// Parses, checks and lowers an IR candidate as the evaluation will: the first error's diagnostic
// (file:line:col), or empty when it lowers.
std::string verify_ir(const std::string& path, const ir::Instance& inst, ir::Target target) {
  try {
    eval::IrSolution sol = eval::load_ir_solution(path, inst);
    lower::lower(sol.inst, lower::lower_options_for(target));
  } catch (const eval::CandidateError& e) {
    return e.what();
  } catch (const lower::ScheduleError& e) {
    return e.hint().empty() ? e.what() : std::string(e.what()) + "\n  hint: " + e.hint();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// The solution files an earlier run may have left for this workload, of any extension.
void remove_old_solution(const fs::path& dir, const std::string& workload) {
  for (const char* ext : {".ekb", ".c", ".cpp", ".cc", ".cu", ".cl"}) fs::remove(dir / (workload + ext));
}

class Loop {
 public:
  Loop(Policy& policy, runtime::Backend& backend, const suite::WorkloadEntry& w, const AgentOptions& o)
      : policy_(policy), backend_(backend), w_(w), o_(o), inst_(suite::bind_workload(w)),
        reference_(inst_, eval::kDefaultBaseSeed, o.reference_cache),
        baseline_(eval::make_baseline(inst_, backend.target())),
        pattern_dir_(fs::path(o.out_dir) / w.pattern->name()),
        steps_dir_(pattern_dir_ / (w.workload->name + ".steps")),
        trajectory_(trajectory_path(o.out_dir, w)) {}

  AgentRun run() {
    start_ = Clock::now();
    fs::remove_all(steps_dir_);  // an earlier run's candidates
    AgentRun out;
    out.analysis = analyse_workload(w_, inst_, backend_.target(), o_.calibration);
    analysis_ = &out.analysis;
    best_.compute = ir::print_pattern(inst_.pattern());
    // Step 0: the default lowering, which measures the baseline's time on this machine.
    Step start = evaluate_step(0, Layer::Compute, "the default lowering", best_, {});
    out.analysis.baseline_ms = baseline_ms_;
    trajectory_.write(out.analysis);
    record(start, out);

    Layer suggested = Layer::Compute;
    int misses_in_layer = 0, unusable_in_row = 0;
    while (!budget_exhausted(tick(), o_.budget) && unusable_in_row < kMaxUnusableInARow) {
      AgentState state;
      state.analysis = analysis_;
      state.program = best_.ir_text();
      state.source = best_.source;
      state.best_speedup = best_speedup_;
      state.layer = suggested;
      state.legal_directives = legal_directives(suggested, backend_.target());
      state.history = out.steps;
      state.spent = spent_;
      state.budget = o_.budget;
      Proposal p = policy_.propose(state);
      spent_ += p.cost;
      if (p.stop) break;
      const int index = static_cast<int>(out.steps.size());
      Step step;
      if (p.unusable || (p.text.empty() && p.layer != Layer::Schedule && p.layer != Layer::Memory)) {
        step.index = index;
        step.layer = p.layer;
        step.action = p.action;
        step.outcome = "unusable";
        step.message = p.rationale.empty() ? "the proposal had no text" : p.rationale;
        step.cost = p.cost;
        ++unusable_in_row;
      } else {
        step = evaluate_step(index, p.layer, p.action, best_.with(p.layer, p.text), p.cost);
        unusable_in_row = 0;
      }
      if (p.layer != suggested) {
        suggested = p.layer;
        misses_in_layer = 0;
      }
      if (step.outcome == "kept") {
        misses_in_layer = 0;
      } else if (++misses_in_layer >= kLayerPatience) {
        suggested = suggested == Layer::Compute || suggested == Layer::Memory ? Layer::Schedule : Layer::Memory;
        misses_in_layer = 0;
      }
      record(step, out);
    }
    out.final = finish();
    trajectory_.write(out.final);
    out.trajectory = trajectory_.path();
    return out;
  }

 private:
  const eval::Ledger& tick() {
    spent_.wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    return spent_;
  }

  void record(const Step& step, AgentRun& out) {
    trajectory_.write(step);
    out.steps.push_back(step);
  }

  // A file under the out directory as a candidate of the workload, its id the relative path.
  eval::CandidateRef candidate_ref(const fs::path& file) const {
    eval::CandidateRef ref;
    ref.workload = w_;
    ref.solution = fs::relative(file, o_.out_dir).string();
    ref.path = file.string();
    return ref;
  }

  // Writes the candidate, verifies it, evaluates it with the step options; keeps it when it is
  // correct and faster than the best.
  Step evaluate_step(int index, Layer layer, const std::string& action, const LayeredProgram& candidate,
                     const eval::Ledger& proposal_cost) {
    Step step;
    step.index = index;
    step.layer = layer;
    step.action = action;
    step.cost = proposal_cost;
    const bool is_source = !candidate.source.empty();
    const std::string text = is_source ? candidate.source : candidate.ir_text();
    step.diff = unified_diff(best_.source.empty() ? best_.ir_text() : best_.source, text);
    const fs::path file =
        steps_dir_ / (std::to_string(index) + (is_source ? eval::source_solution_extension(backend_.target()) : ".ekb"));
    runtime::write_file_atomically(file.string(), text);
    if (!is_source) {
      step.message = verify_ir(file.string(), inst_, backend_.target());
      if (!step.message.empty()) {
        step.outcome = "verify";
        return step;
      }
    }
    eval::CandidateResult r = eval::evaluate_candidate(backend_, reference_, baseline_, candidate_ref(file), o_.step_eval);
    ++spent_.evaluations;
    ++step.cost.evaluations;
    if (r.baseline) baseline_ms_ = r.baseline->median_ms;
    if (r.time) step.ms = r.time->median_ms;
    step.speedup = r.speedup;
    if (step.ms && analysis_ && analysis_->roofline_ms > 0) step.roofline_fraction = analysis_->roofline_ms / *step.ms;
    if (!r.correct) {
      step.outcome = failed_stage(r);
      step.message = r.message;
      return step;
    }
    if (!r.speedup) {
      step.outcome = "timing";
      step.message = r.message.empty() ? "no speedup was measured" : r.message;
      return step;
    }
    // Step 0 is the default itself: kept as the starting point whatever its measured ratio.
    if (index == 0 || o_.min_gain <= -1 || *r.speedup > best_speedup_ * (1 + o_.min_gain)) {
      step.outcome = "kept";
      best_ = candidate;
      best_step_ = index;
      if (index > 0) best_speedup_ = *r.speedup;
    } else {
      step.outcome = "slower";
      step.message = fmt::format("{:.3f}x, not above the best {:.3f}x by {:.0f}%", *r.speedup, best_speedup_,
                                 o_.min_gain * 100);
    }
    return step;
  }

  // Writes the best candidate as the workload's solution, re-evaluates it with the full protocol
  // and writes its metadata with the whole ledger.
  FinalRecord finish() {
    const bool is_source = !best_.source.empty();
    remove_old_solution(pattern_dir_, w_.workload->name);
    const fs::path file =
        pattern_dir_ / (w_.workload->name + (is_source ? eval::source_solution_extension(backend_.target()) : ".ekb"));
    runtime::write_file_atomically(file.string(), is_source ? best_.source : best_.ir_text());
    eval::CandidateResult r = eval::evaluate_candidate(backend_, reference_, baseline_, candidate_ref(file), o_.final_eval);
    ++spent_.evaluations;
    FinalRecord f;
    f.solution = file.string();
    f.best_step = best_step_;
    f.correct = r.correct;
    if (!r.correct) f.error = std::string(eval::error_kind_name(r.error));
    f.message = r.message;
    if (r.time) f.ms = r.time->median_ms;
    f.speedup = r.speedup;
    if (f.ms && analysis_ && analysis_->roofline_ms > 0) f.roofline_fraction = analysis_->roofline_ms / *f.ms;
    f.spent = tick();

    eval::SolutionMeta meta;
    meta.method = "leka:" + policy_.name();
    meta.model = policy_.model();
    meta.backend = std::string(ir::target_name(backend_.target()));
    meta.ledger = f.spent;
    meta.latency_s = f.spent.wall_s;
    meta.transcript = fs::path(trajectory_path(o_.out_dir, w_)).filename().string();  // beside the metadata
    runtime::write_file_atomically((pattern_dir_ / eval::meta_file_name(w_.workload->name, 0)).string(),
                                   eval::to_json(meta).dump(2) + "\n");
    return f;
  }

  Policy& policy_;
  runtime::Backend& backend_;
  const suite::WorkloadEntry& w_;
  const AgentOptions& o_;
  ir::Instance inst_;
  eval::WorkloadReference reference_;
  eval::Baseline baseline_;
  fs::path pattern_dir_, steps_dir_;
  TrajectoryWriter trajectory_;
  const WorkloadAnalysis* analysis_ = nullptr;
  LayeredProgram best_;
  double best_speedup_ = 1;
  double baseline_ms_ = 0;  // the baseline's median in the latest timed step
  int best_step_ = 0;
  eval::Ledger spent_;
  Clock::time_point start_;
};

}  // namespace

eval::EvalOptions quick_step_options() {
  eval::EvalOptions o;
  o.trials = 1;
  o.recheck_trials = 0;
  o.timing.min_time_s = 0.02;
  o.timing.min_runs = 3;
  o.timing.max_runs = 100;
  o.timing.target_precision = 0.05;
  o.timing.speedup_precision = 0.1;
  o.timing.max_time_s = 1;
  return o;
}

std::string trajectory_path(const std::string& out_dir, const suite::WorkloadEntry& w) {
  return (fs::path(out_dir) / w.pattern->name() / (w.workload->name + ".trajectory.jsonl")).string();
}

AgentRun run_agent(Policy& policy, runtime::Backend& backend, const suite::WorkloadEntry& w,
                   const AgentOptions& options) {
  return Loop(policy, backend, w, options).run();
}

}  // namespace ekb::agent
