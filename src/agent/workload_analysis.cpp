#include "agent/workload_analysis.h"

#include <algorithm>

#include "eval/roofline.h"
#include "ir/cost.h"
#include "ir/interpreter.h"
#include "lir/loop_ir.h"
#include "lower/lower.h"
#include "suite/task_statement.h"

namespace ekb::agent {

namespace {

void add_once(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

// Every name `e` uses, added once to `names`.
void names_in(const ir::Expr& e, std::vector<std::string>& names) {
  if (e.kind == ir::ExprKind::Name) add_once(names, e.name);
  for (const auto& a : e.args)
    if (a) names_in(*a, names);
}

// The names `e` adds with a coefficient of 1: its summands through + and the left side of -.
void unit_names_in(const ir::Expr& e, std::vector<std::string>& names) {
  if (e.kind == ir::ExprKind::Name) add_once(names, e.name);
  if (e.kind != ir::ExprKind::Binary || (e.binary_op != ir::BinaryOp::Add && e.binary_op != ir::BinaryOp::Sub)) return;
  if (e.args[0]) unit_names_in(*e.args[0], names);
  if (e.binary_op == ir::BinaryOp::Add && e.args[1]) unit_names_in(*e.args[1], names);
}

// Every reduction's ranges and every tensor read under `e`, in the order they are written
// (`in_reduction`: `e` lies inside a reduction).
void walk_expr(const ir::Instance& inst, const ir::Expr& e, StageFacts& stage, bool in_reduction = false) {
  if (e.kind == ir::ExprKind::Access) {
    add_once(stage.reads, e.name);
    if (in_reduction) add_once(stage.reduction_reads, e.name);
    TensorRead read;
    read.tensor = e.name;
    read.in_reduction = in_reduction;
    for (const auto& index : e.args) {
      read.index_names.push_back(index && index->kind == ir::ExprKind::Name ? index->name : "");
      read.index_uses.emplace_back();
      read.index_steps.emplace_back();
      if (index) {
        names_in(*index, read.names_used);
        names_in(*index, read.index_uses.back());
        unit_names_in(*index, read.index_steps.back());
      }
    }
    if (const ir::TensorInstance* t = inst.tensor(e.name)) {
      read.shape = t->shape;
      read.element_bytes = static_cast<int>(ir::byte_size(t->type));
    }
    stage.accesses.push_back(std::move(read));
  }
  if (e.kind == ir::ExprKind::Reduce) {
    in_reduction = true;
    for (const auto& r : e.ranges) {
      int64_t extent = 0;
      try {
        extent = ir::eval_constant(inst, *r.hi).int_value - ir::eval_constant(inst, *r.lo).int_value;
      } catch (const std::exception&) {
        extent = 0;  // a bound that depends on an enclosing variable: not a constant
      }
      stage.loops.push_back({r.var, std::max<int64_t>(extent, 0), true});
    }
  }
  for (const auto& a : e.args)
    if (a) walk_expr(inst, *a, stage, in_reduction);
  if (e.pad_value) walk_expr(inst, *e.pad_value, stage, in_reduction);
}

}  // namespace

std::vector<StageFacts> stage_facts(const ir::Instance& inst) {
  const ir::Pattern& p = inst.pattern();
  const std::vector<bool> pure = ir::pure_definitions(inst, p.stmts);
  std::vector<StageFacts> out;
  for (size_t s = 0; s < p.stmts.size(); ++s) {
    const ir::Stmt& st = p.stmts[s];
    if (!pure[s] || st.kind != ir::StmtKind::Assign) continue;
    const ir::TensorInstance* t = inst.tensor(st.tensor);
    if (!t) continue;
    StageFacts stage;
    stage.name = st.tensor;
    stage.output = t->decl->role == ir::TensorRole::Output;
    for (size_t d = 0; d < st.indices.size(); ++d)
      stage.loops.push_back({st.indices[d]->name, d < t->shape.size() ? t->shape[d] : 0, false});
    walk_expr(inst, *st.value, stage);
    out.push_back(std::move(stage));
  }
  return out;
}

WorkloadAnalysis analyse_workload(const suite::WorkloadEntry& w, const ir::Instance& inst, ir::Target target,
                                  const std::optional<runtime::Calibration>& calibration) {
  WorkloadAnalysis a;
  a.workload = w.full_name();
  a.backend = std::string(ir::target_name(target));
  a.task_statement = suite::task_statement(w, inst, target);
  ir::CostFacts cost;
  try {
    cost = ir::compute_cost(inst);
  } catch (const std::runtime_error&) {
    // A range bound that reads a computed tensor: no cost facts, nothing else is lost.
  }
  a.flops = cost.ops();
  a.bytes = cost.min_bytes;
  a.arithmetic_intensity = cost.arithmetic_intensity();
  a.baseline = "native";
  if (calibration) {
    const eval::Roofline roof = eval::Roofline::from(*calibration);
    if (roof.valid())
      a.roofline_ms = eval::attainable_seconds({cost.ops(), cost.min_bytes, cost.input_bytes}, roof) * 1e3;
  }
  a.default_loop_ir = lir::to_string(lower::lower(inst, lower::lower_options_for(target)));
  a.stages = stage_facts(inst);
  return a;
}

}  // namespace ekb::agent
