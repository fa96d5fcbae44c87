// The IR's syntax tree: one Module per .ekb file, holding a pattern (the compute layer), the
// workloads that bind it, and any schedule/memory layer blocks. Nodes are plain data; analyses
// (verifier, interpreter, cost) keep their facts in side tables. See docs/IR.md for the grammar.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/types.h"

namespace ekb::ir {

struct SourceLoc {
  int line = 0;
  int col = 0;
};

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t {
  IntLit,    // int_value
  FloatLit,  // float_value (inf and nan included)
  BoolLit,   // bool_value
  Name,      // name: an index variable, param or let
  Access,    // name[args...], through `boundary` (pad value in pad_value)
  Unary,     // unary_op args[0]
  Binary,    // args[0] binary_op args[1]
  Call,      // name(args...): an intrinsic, or `select`
  Cast,      // cast(type, args[0]) or sat(type, args[0])
  Reduce,    // reduce_op(ranges: args[0])
};

enum class UnaryOp : uint8_t { Neg, Not };
enum class BinaryOp : uint8_t {
  Or, And,
  Eq, Ne, Lt, Le, Gt, Ge,
  BitOr, BitXor, BitAnd,
  Shl, Shr,
  Add, Sub,
  Mul, Div, Mod,
};
enum class Boundary : uint8_t { None, Pad, Edge, Mirror };
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Argmax, Argmin };

// A type as written: a scalar type name or the name of a `types` parameter.
struct TypeRef {
  std::string name;
  SourceLoc loc;
};

// `var in lo..hi`: a half-open ascending range.
struct Range {
  std::string var;
  ExprP lo, hi;
  SourceLoc loc;
};

struct Expr {
  ExprKind kind = ExprKind::IntLit;
  SourceLoc loc;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string name;
  std::vector<ExprP> args;
  UnaryOp unary_op = UnaryOp::Neg;
  BinaryOp binary_op = BinaryOp::Add;
  Boundary boundary = Boundary::None;
  ExprP pad_value;
  ReduceOp reduce_op = ReduceOp::Sum;
  TypeRef cast_type;
  bool saturating = false;
  std::vector<Range> ranges;
};

enum class StmtKind : uint8_t { Assign, For };

struct Stmt {
  StmtKind kind = StmtKind::Assign;
  SourceLoc loc;
  // Assign: tensor[indices] = value
  std::string tensor;
  std::vector<ExprP> indices;
  ExprP value;
  // For: ranges, then body; `block` records whether it was written with braces.
  std::vector<Range> ranges;
  std::vector<Stmt> body;
  bool block = false;
};

enum class TensorRole : uint8_t { Input, Output, Temp };

enum class DomainKind : uint8_t { Default, Range, Spd };
struct InputDomain {
  DomainKind kind = DomainKind::Default;
  ExprP lo, hi;  // Range only
};

struct TensorDecl {
  TensorRole role = TensorRole::Input;
  std::string name;
  TypeRef type;
  std::vector<ExprP> shape;
  InputDomain domain;
  SourceLoc loc;
};

struct Ident {
  std::string name;
  SourceLoc loc;
};

struct LetDecl {
  std::string name;
  ExprP value;
  SourceLoc loc;
};

enum class Level : uint8_t { Operator, Fused, Graph };

struct Pattern {
  std::string name;  // "domain.ident"
  SourceLoc loc;
  Level level = Level::Operator;
  bool has_level = false;
  std::string source;   // provenance
  std::string summary;
  std::vector<Ident> type_params;
  std::vector<Ident> params;
  std::vector<LetDecl> lets;
  std::vector<TensorDecl> tensors;  // declaration order = ABI order within each role
  std::vector<Stmt> stmts;

  std::string domain() const { return name.substr(0, name.find('.')); }
  const TensorDecl* find_tensor(const std::string& n) const;
};

struct Binding {
  std::string name;
  bool is_type = false;
  int64_t int_value = 0;
  std::string type_name;  // is_type
  SourceLoc loc;
};

struct Workload {
  std::string name;
  std::vector<std::string> tags;  // micro, mobile, heldout, warm
  std::vector<Binding> bindings;
  SourceLoc loc;

  bool has_tag(const std::string& t) const;
  const Binding* find_binding(const std::string& n) const;
};

// One argument of a schedule/memory directive.
struct DirectiveArg {
  enum class Kind : uint8_t { Name, Int, Call } kind = Kind::Name;
  std::string key;   // `key=value` arguments (e.g. tail=guard); empty if positional
  std::string text;  // Name: possibly dotted (block.x); Call: the function (update, pack, order)
  int64_t int_value = 0;
  std::vector<DirectiveArg> args;  // Call arguments; Name with a `.update(N)` suffix uses Call
  SourceLoc loc;
};

struct Directive {
  std::string verb;
  std::vector<DirectiveArg> args;
  SourceLoc loc;
};

enum class LayerKind : uint8_t { Schedule, Memory };

struct LayerBlock {
  LayerKind kind = LayerKind::Schedule;
  std::string target;  // cpu | gpu
  std::vector<Directive> directives;
  SourceLoc loc;
};

struct Module {
  std::string file;  // for diagnostics
  Pattern pattern;
  std::vector<Workload> workloads;
  std::vector<LayerBlock> layers;

  const Workload* find_workload(const std::string& n) const;
};

// Structural equality, ignoring source locations: parse(print(m)) == m.
bool equal(const Expr& a, const Expr& b);
bool equal(const Stmt& a, const Stmt& b);
bool equal(const Module& a, const Module& b);

// Small constructors used by passes and tests.
ExprP make_int(int64_t v, SourceLoc loc = {});
ExprP make_float(double v, SourceLoc loc = {});
ExprP make_name(std::string n, SourceLoc loc = {});

// The domains a pattern name may start with: "nn", "qnn", "img", ... (docs/ARCHITECTURE.md).
const std::vector<std::string>& pattern_domains();

std::string_view binary_op_text(BinaryOp op);
std::string_view reduce_op_name(ReduceOp op);
std::string_view boundary_name(Boundary b);
std::string_view level_name(Level l);
std::string_view role_name(TensorRole r);

}  // namespace ekb::ir
