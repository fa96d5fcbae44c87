// LEKA, the layered kernel agent (docs/AGENT.md): per workload, a loop proposes candidates one IR
// layer at a time (compute, then schedule, then memory, optionally the emitted source), checks each
// (verify -> compile -> a quick correctness trial -> interleaved timing), keeps it or drops it, and
// records every step. What to try next is a Policy's choice; the loop owns everything else: the
// checks, the budget, the trajectory and the solution written at the end. Two policies share this
// contract: `search` (no model: sketches and a measured search) and `llm` (a model profile of
// docs/GENERATION.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/result.h"

namespace ekb::agent {

// The layers a proposal may change, in the order the loop visits them.
enum class Layer : uint8_t { Compute, Schedule, Memory, Source };
std::string_view layer_name(Layer layer);  // "compute", "schedule", "memory", "source"
std::optional<Layer> parse_layer(std::string_view name);

// One loop of a stage as the default lowering names it (the stage's index or reduction variable).
struct LoopFacts {
  std::string name;
  int64_t extent = 0;      // 0 when not a constant of the workload
  bool reduction = false;  // a reduction variable of the stage's right-hand side
};

// One read of a tensor by a stage: for each of its indices, the name it is when the index is a
// plain name (a loop variable, a param), else empty.
struct TensorRead {
  std::string tensor;
  std::vector<std::string> index_names;
  std::vector<std::string> names_used;  // every name its indices use (`oh * SH + kh`: oh, SH, kh)
  std::vector<std::vector<std::string>> index_uses;  // the same, per index
  // Per index, the names it adds with a coefficient of 1 (`n + k - 1`: n, k; `m * D + k`: k): the
  // loops along which the read is contiguous in that dimension.
  std::vector<std::vector<std::string>> index_steps;
  std::vector<int64_t> shape;  // the tensor's extents (0 where not a constant of the workload)
  int element_bytes = 4;
  bool in_reduction = false;  // read inside a reduction
};

// One stage of the compute layer: a tensor's pure definition, its loops outermost first (the
// pure loops in index order, then the reduction loops in the order they are written).
struct StageFacts {
  std::string name;
  bool output = false;  // an output tensor (else a temp)
  std::vector<LoopFacts> loops;
  std::vector<std::string> reads;  // the tensors its right-hand side reads, in first-read order
  std::vector<std::string> reduction_reads;  // those of them read inside a reduction
  std::vector<TensorRead> accesses;  // every read, in the order written
};

// What the loop knows of the workload before the first step; the policy's prompt or the search's
// sketch choice starts from it.
struct WorkloadAnalysis {
  std::string workload;        // PATTERN/WORKLOAD
  std::string backend;         // cpu | cuda | opencl
  std::string task_statement;  // what `ekb prompt` prints for it
  double flops = 0;            // per call
  double bytes = 0;            // compulsory traffic per call
  double arithmetic_intensity = 0;
  double baseline_ms = 0;      // the chosen baseline's time on this machine
  std::string baseline;        // "native", "tvm" or "tvm-tuned"
  double roofline_ms = 0;      // the calibrated roofline's bound for it; 0 when not calibrated
  std::string default_loop_ir; // the native default lowering's loop IR, printed
  std::vector<StageFacts> stages;  // the compute layer's pure definitions, in program order
};

// One proposal: the whole new text of one layer of the current best candidate.
struct Proposal {
  Layer layer = Layer::Schedule;
  // Compute: the pattern block (an equivalent rewrite, the same interface); Schedule and Memory:
  // the block `schedule TARGET { ... }` / `memory TARGET { ... }` (empty text: no such block);
  // Source: a complete source file in the backend's language obeying docs/ABI.md.
  std::string text;
  std::string action;     // one line for the trajectory: "split(C, i, 32, io, ii)", "revert to step 3"
  std::string rationale;  // the policy's reason, when it gives one
  bool stop = false;      // nothing more to try: the loop ends for this workload (text ignored)
  // Nothing could be read from the policy's answer (the reason in `rationale`): recorded and charged,
  // never evaluated. An empty schedule or memory text is otherwise a proposal: "no such block".
  bool unusable = false;
  eval::Ledger cost;      // what producing it cost (LLM calls, tokens, USD, wall); evaluations are the loop's
};

// What became of one proposal: the feedback the next proposal is made with, and one trajectory row.
struct Step {
  int index = 0;             // 0: the starting point (the default lowering), then 1, 2, ...
  Layer layer = Layer::Schedule;
  std::string action;
  std::string diff;          // unified diff of the candidate's text against the best before it
  // "verify", "compile", "correctness", "timing" (the stage it failed at), "slower" (correct, not
  // faster than the best), "kept", or "unusable" (the policy's reply had no proposal in it).
  std::string outcome;
  std::string message;       // the diagnostic with line:col, or the first and worst mismatching elements
  std::optional<double> ms;                 // the candidate's median time, when timed
  std::optional<double> speedup;            // over the baseline, when timed
  std::optional<double> roofline_fraction;  // roofline_ms / ms, when both are known
  eval::Ledger cost;         // the proposal's cost plus the loop's evaluation
};

// Everything a policy sees when asked for the next proposal.
struct AgentState {
  const WorkloadAnalysis* analysis = nullptr;
  std::string program;        // the best candidate so far: the .ekb text (compute + schedule + memory)
  std::string source;         // the best candidate's source when a Source step was kept; else empty
  double best_speedup = 1;
  Layer layer = Layer::Compute;  // the layer the loop suggests working on; a policy may go back
  std::vector<std::string> legal_directives;  // the directive table's rows for this layer and target, with syntax
  std::vector<Step> history;  // every step so far, in order
  eval::Ledger spent;         // so far, this workload
  eval::Ledger budget;        // the limits (0: no limit on that field)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;  // "search", "llm": the solution's method is "leka:" + name()
  virtual std::string model() const { return {}; }  // the model profile's model, when there is one
  // The next proposal; never throws for a model's or a server's failure (that is a proposal with
  // an empty text and the reason in `rationale`, recorded as "unusable" and charged to the budget).
  virtual Proposal propose(const AgentState& state) = 0;
};

}  // namespace ekb::agent
