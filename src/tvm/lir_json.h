// The loop IR as JSON: what the TVM bridge (python/ekb_tvm) translates to TensorIR. A faithful dump
// of a lowered lir::Func (docs/TVM.md, "The input"): buffers, params, and the body's statements and
// expressions with their kinds, types and attributes spelled as names, so that the bridge reads the
// IR's meaning without knowing this program's enumerators.
#pragma once
#include <nlohmann/json.hpp>

#include "lir/loop_ir.h"

namespace ekb::tvm {

// Every statement and expression kind a cpu function can hold after the default lowering's last
// pass; a gpu-only node (Kernel, ThreadAllReduce, Barrier) throws std::invalid_argument.
nlohmann::json func_to_json(const lir::Func& f);
nlohmann::json expr_to_json(const lir::Expr& e);
nlohmann::json stmt_to_json(const lir::Stmt& s);

}  // namespace ekb::tvm
