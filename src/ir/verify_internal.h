// Shared between the verifier's translation units (verifier, layers, instantiate, typecheck,
// const_eval, bounds); not a public API. The public entry points are in ir/instance.h.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ast.h"
#include "ir/diagnostics.h"
#include "ir/instance.h"
#include "ir/real_interval.h"

namespace ekb::ir::detail {

// ---- intrinsics (docs/IR.md), with `select` ----
enum class IntrinsicClass : uint8_t {
  FloatMath,  // float -> same float: exp, log, ..., floor, round (arity 1); atan2, pow (arity 2)
  MinMax,     // min, max: numbers of one type
  Abs,
  Clamp,
  Fma,        // float
  Quant,      // rdmulh, rshift, requant: i32
  Select,
};
struct IntrinsicInfo {
  std::string_view name;
  int arity;
  IntrinsicClass cls;
};
const IntrinsicInfo* find_intrinsic(std::string_view name);
std::vector<std::string> intrinsic_names();

// ---- facts verify_pattern gathers for the layer checks ----
struct StageLoops {
  std::vector<std::string> loops;  // index variables, then reduction variables
  SourceLoc loc;                   // the defining statement
};
struct PatternFacts {
  std::map<std::string, StageLoops> pure;                  // output/temp -> its pure definition
  std::map<std::string, std::vector<StageLoops>> updates;  // output/temp -> updates in order
};
void verify_layers(const Module& m, const PatternFacts& facts, Diagnostics& diags);

// ---- per-workload diagnostics: errors at pattern locations name the workload in the hint ----
class WorkloadDiags {
 public:
  WorkloadDiags(Diagnostics& d, const Workload& w);
  void error(SourceLoc loc, std::string message, std::string hint = {});
  // For errors located in the workload itself (bindings): no suffix needed.
  void error_here(SourceLoc loc, std::string message, std::string hint = {});
  bool has_errors() const { return count_ > 0; }

 private:
  Diagnostics& diags_;
  std::string suffix_;
  int count_ = 0;
};

// ---- typing (typecheck.cpp): fills inst.expr_types; literals adopt their context's type ----
// A let's type (index for integer lets, the float type otherwise); needs the earlier lets in
// inst.lets, so the caller evaluates each let before typing the next.
std::optional<ScalarType> type_let(Instance& inst, const LetDecl& let, WorkloadDiags& diags);
// A tensor's shape and input domain; its element type must already be in inst.tensors.
bool type_tensor_decl(Instance& inst, const TensorInstance& t, WorkloadDiags& diags);
bool type_statements(Instance& inst, WorkloadDiags& diags);

// ---- constant evaluation (const_eval.cpp): lets, shapes, domains; expressions already typed ----
std::optional<LetValue> eval_const(const Expr& e, const Instance& inst, WorkloadDiags& diags,
                                   std::string_view context);

// ---- index bounds (bounds.cpp) ----
void check_bounds(const Instance& inst, const std::map<std::string, RealInterval>& input_ranges,
                  WorkloadDiags& diags);

// ---- instantiate.cpp: the parts verify_module drives directly ----
// instantiate() without re-running verify_pattern (the caller has, without errors).
std::optional<Instance> instantiate_verified(const Module& m, const Workload& w, Diagnostics& diags);
// Only the bindings' names and kinds: what can still be checked when the pattern has errors.
void check_bindings(const Module& m, const Workload& w, Diagnostics& diags);

// ---- small helpers ----
std::string type_text(ScalarType t);  // "f32", "index"
std::vector<std::string> scalar_type_names();
// Where an expression starts in the text (a binary node's location is its operator).
SourceLoc start_loc(const Expr& e);

}  // namespace ekb::ir::detail
