// A workload bound to its pattern: concrete parameter values, element types, shapes, and the type
// of every expression. Produced only by the verifier (instantiate), so a consumer (interpreter,
// cost model, code generators) may assume the program is well-typed and in bounds.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ast.h"
#include "ir/diagnostics.h"

namespace ekb::ir {

struct LetValue {
  bool is_float = false;
  int64_t int_value = 0;
  double float_value = 0;
  double as_double() const { return is_float ? float_value : static_cast<double>(int_value); }
};

struct TensorInstance {
  const TensorDecl* decl = nullptr;
  ScalarType type = ScalarType::F32;
  std::vector<int64_t> shape;
  int64_t num_elements() const;
  int64_t num_bytes() const { return num_elements() * byte_size(type); }
};

struct Instance {
  const Module* module = nullptr;
  const Workload* workload = nullptr;
  std::map<std::string, int64_t> params;         // every `params` name, bound by the workload
  std::map<std::string, LetValue> lets;          // every `let`, evaluated
  std::map<std::string, ScalarType> type_params; // every `types` name, bound by the workload
  std::vector<TensorInstance> tensors;           // same order as pattern().tensors
  // The type of every expression node reachable from the pattern's statements, lets, shapes and
  // domains. Literals carry the type they adopted from context (a lone float literal is F64; a lone
  // integer literal and every index expression is Index).
  std::unordered_map<const Expr*, ScalarType> expr_types;

  const Pattern& pattern() const { return module->pattern; }
  const TensorInstance* tensor(const std::string& name) const;
  std::string full_name() const;  // "pattern/workload"
  ScalarType type_of(const Expr& e) const { return expr_types.at(&e); }
};

// Which of `stmts` (a pattern's top-level statements, in program order) are pure definitions
// (docs/IR.md, "Statements: pure definitions and ordered updates"): the first assignment to a
// tensor, indexed by distinct plain variables that are neither params nor lets. Such a statement
// runs over its tensor's full extent; every other write is an update run in program order. The
// interpreter, the cost model and the native lowering all ask here.
std::vector<bool> pure_definitions(const Instance& inst, const std::vector<Stmt>& stmts);

// Pattern-level checks that need no workload: structure, names (with nearest-name hints),
// definition order (pure definition before updates, no read before definition, inputs never
// written), reduction and recurrence forms, the schedule and memory layers' names and arguments.
void verify_pattern(const Module& m, Diagnostics& diags);

// Binds workload `w` and checks everything that needs concrete values: every param and type bound
// exactly once, positive extents, expression types, index bounds (interval arithmetic), input
// domains. Returns nullopt when any error was reported.
std::optional<Instance> instantiate(const Module& m, const Workload& w, Diagnostics& diags);

// Everything `ekb validate` checks: verify_pattern plus instantiate for every workload.
bool verify_module(const Module& m, Diagnostics& diags);

}  // namespace ekb::ir
