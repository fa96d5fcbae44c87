#include "codegen/simd_loop.h"

#include "lir/mutator.h"
#include "lir/simplify.h"

namespace ekb::codegen {

using lir::BinOp;
using lir::Expr;
using lir::ExprKind;
using lir::Stmt;
using lir::StmtKind;

bool SimdLoop::varies(const Expr& e) const {
  bool found = false;
  lir::for_each_expr(e, [&](const Expr& x) {
    found |= x.kind == ExprKind::Var && (x.name == lane || varying_lets.count(x.name));
  });
  return found;
}

std::optional<LaneLimit> SimdLoop::lane_limit(const Expr& c) const {
  if (c.kind != ExprKind::Binary || c.args.size() != 2) return std::nullopt;
  if (c.bin_op == BinOp::And) {  // `uniform && limit` (either way round): the limit under a plain test
    for (int k = 0; k < 2; ++k) {
      const lir::ExprP& other = c.args[1 - k];
      if (varies(*other)) continue;
      std::optional<LaneLimit> l = lane_limit(*c.args[k]);
      if (!l) return std::nullopt;
      l->uniform = l->uniform ? lir::binary(BinOp::And, other, l->uniform) : other;
      return l;
    }
    return std::nullopt;
  }
  // index < end, index <= end (end + 1), and the same written the other way round.
  bool flipped = c.bin_op == BinOp::Gt || c.bin_op == BinOp::Ge;
  bool inclusive = c.bin_op == BinOp::Le || c.bin_op == BinOp::Ge;
  if (c.bin_op != BinOp::Lt && c.bin_op != BinOp::Le && !flipped) return std::nullopt;
  const lir::ExprP& index = c.args[flipped ? 1 : 0];
  const lir::ExprP& end = c.args[flipped ? 0 : 1];
  if (varies(*end) || !ir::is_integer(index->type)) return std::nullopt;
  std::optional<int64_t> step = lir::coefficient_of(*index, lane);
  bool through_lets = false;  // a varying let has no scalar value at the first lane
  lir::for_each_expr(*index, [&](const Expr& x) { through_lets |= x.kind == ExprKind::Var && varying_lets.count(x.name); });
  if (!step || *step != 1 || through_lets) return std::nullopt;
  return LaneLimit{index, inclusive ? lir::simplify(lir::binary(BinOp::Add, end, lir::index_imm(1))) : end, nullptr};
}

namespace {

class Checker {
 public:
  explicit Checker(SimdLoop& loop) : l_(loop) {}

  std::string stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Block:
        for (const lir::StmtP& x : s.stmts)
          if (std::string why = stmt(*x); !why.empty()) return why;
        return "";
      case StmtKind::IfThenElse:
        if (l_.varies(*s.value) && (s.else_body || !l_.lane_limit(*s.value)))
          return "a condition differs between lanes (other than a masked tail's index < end)";
        if (std::string why = stmt(*s.body); !why.empty()) return why;
        return s.else_body ? stmt(*s.else_body) : "";
      case StmtKind::LetStmt:
        if (l_.varies(*s.value)) {
          if (s.type != l_.element) return "'" + s.name + "' is a lane-dependent " + std::string(ir::scalar_type_name(s.type));
          if (std::string why = value(*s.value); !why.empty()) return why;
          l_.varying_lets.insert(s.name);
        }
        return stmt(*s.body);
      case StmtKind::For:
        // A loop inside a lane (a stencil's taps, a small reduction): the same iterations in every
        // lane, printed as a loop over vector values.
        if (l_.varies(*s.min) || l_.varies(*s.extent)) return "an inner loop's bounds differ between lanes";
        return stmt(*s.body);
      case StmtKind::DeclareVar:
        // A variable of the body (an accumulator): one vector, a value per lane.
        if (s.type != l_.element) return "a mutable variable of type " + std::string(ir::scalar_type_name(s.type));
        if (std::string why = value(*s.value); !why.empty()) return why;
        l_.varying_lets.insert(s.name);
        return stmt(*s.body);
      case StmtKind::Assign:
        // Only to the body's own variables: every lane assigning one outer variable is a reduction.
        if (!l_.varying_lets.count(s.name)) return "the body assigns '" + s.name + "', declared outside it";
        return value(*s.value);
      case StmtKind::Store: {
        if (s.indices.size() != 1) return "a store is not flat";
        auto stride = lir::coefficient_of(*s.indices[0], l_.lane);
        if (!stride || *stride != 1)
          return "the store to " + s.name + " is not to consecutive elements, one per lane";
        return value(*s.value);
      }
      case StmtKind::Prefetch:
        return "";  // printed at the first lane
      default:
        return s.kind == StmtKind::Allocate ? "the body allocates a buffer" : "the body has a barrier";
    }
  }

 private:
  // A lane-dependent value of the element type, or a uniform one (broadcast).
  std::string value(const Expr& e) {
    if (e.type != l_.element) return "a value of type " + std::string(ir::scalar_type_name(e.type));
    if (!l_.varies(e)) return "";
    switch (e.kind) {
      case ExprKind::Var:
        return "";  // a varying let
      case ExprKind::Load: {
        if (e.args.size() != 1 || e.boundary != ir::Boundary::None) return "a load is not flat";
        auto stride = lir::coefficient_of(*e.args[0], l_.lane);
        if (!stride || *stride != 1) return "the load of " + e.name + " is not of consecutive elements (a gather)";
        return "";
      }
      case ExprKind::Unary:
        return e.un_op == lir::UnOp::Neg ? value(*e.args[0]) : "a logical not";
      case ExprKind::Binary:
        // Min and max: the scalar code's NaN-propagating ekb_fmin/ekb_fmax, lane by lane (a compare
        // and a blend).
        if (e.bin_op != BinOp::Add && e.bin_op != BinOp::Sub && e.bin_op != BinOp::Mul && e.bin_op != BinOp::Div &&
            e.bin_op != BinOp::Min && e.bin_op != BinOp::Max)
          return "the operation " + std::string(lir::bin_op_text(e.bin_op));
        if (std::string why = value(*e.args[0]); !why.empty()) return why;
        return value(*e.args[1]);
      case ExprKind::Select:
        if (l_.varies(*e.args[0])) return "a select's condition differs between lanes";
        if (std::string why = value(*e.args[1]); !why.empty()) return why;
        return value(*e.args[2]);
      case ExprKind::Call:
        if (!has_vector_call(e, l_)) return "a call without a vector form at this width";
        return value(*e.args[0]);
      default:
        return "a call or conversion";
    }
  }

  SimdLoop& l_;
};

}  // namespace

bool has_vector_call(const Expr& call, const SimdLoop& lanes) {
  return call.kind == ExprKind::Call && call.intrinsic == lir::Intrinsic::Exp && call.args.size() == 1 &&
         lanes.element == ir::ScalarType::F32 && lanes.width == 16;
}

std::optional<SimdLoop> simd_loop(const Stmt& loop, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<SimdLoop> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (loop.kind != StmtKind::For || loop.for_kind != lir::ForKind::Vectorized) return refuse("not a vectorized loop");
  lir::ExprP extent = lir::simplify(loop.extent);
  if (extent->kind != ExprKind::IntImm) return refuse("the width is not a constant");
  SimdLoop l;
  l.lane = loop.name;
  l.width = extent->int_value;
  // The element type: that of the first value stored (every lane-dependent value must have it).
  const Stmt* store = nullptr;
  lir::for_each_stmt(*loop.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Store && !store) store = &s;
  });
  if (!store) return refuse("the body stores nothing");
  l.element = store->value->type;
  if (l.element != ir::ScalarType::F32 && l.element != ir::ScalarType::F64)
    return refuse("the stored type is not f32 or f64");
  int64_t bytes = l.width * ir::byte_size(l.element);
  if (l.width < 2 || (l.width & (l.width - 1)) != 0 || bytes > 64)
    return refuse("the width is not a power of two of at most 64 bytes");
  Checker c(l);
  if (std::string reason = c.stmt(*loop.body); !reason.empty()) return refuse(reason);
  return l;
}

}  // namespace ekb::codegen
