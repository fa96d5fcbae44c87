// Internal to the reference interpreter: compiles a verified Instance's expressions and statements
// into node trees (interp_nodes.h, interp_ops.h).
#pragma once
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/instance.h"
#include "ir/interp_nodes.h"

namespace ekb::ir::interp {

class Compiler {
 public:
  // `bufs` and `slots` must outlive the compiled nodes and keep their addresses.
  Compiler(const Instance& inst, std::vector<Buf>& bufs, std::deque<int64_t>& slots,
           const ErrCtx* err);

  FP as_f(const Expr& e);  // any expression as a float value
  IP as_i(const Expr& e);  // an integer or bool expression
  // Compiles the pattern's statements (pure definitions and updates) in program order.
  std::vector<SP> statements(const std::vector<Stmt>& stmts);

  std::vector<std::pair<std::string, int64_t*>> scope;  // index variables, innermost last
  int64_t* new_slot();

 private:
  ScalarType ty(const Expr& e) const;
  [[noreturn]] void fail(SourceLoc loc, const std::string& msg) const;
  int64_t* find_var(const std::string& name) const;
  const Buf& buf(const std::string& name, SourceLoc loc) const;
  bool is_const(const Expr& e);
  bool const_int(const Expr& e, int64_t& v);
  bool affine(const Expr& e, uint64_t scale, uint64_t& c0, std::vector<Term>& terms);
  Addr make_addr(const Buf& b, const std::vector<ExprP>& idx, SourceLoc loc);

  FP cf(const Expr& e);
  IP ci(const Expr& e);
  FP cf_raw(const Expr& e);
  IP ci_raw(const Expr& e);
  FP load_f(const Expr& e);
  IP load_i(const Expr& e);
  FP call_f(const Expr& e);
  IP call_i(const Expr& e);
  IP binary_i(const Expr& e);
  FP reduce_f(const Expr& e);
  IP reduce_i(const Expr& e);
  std::vector<RangeC> ranges(const std::vector<Range>& rs);  // pushes their variables
  FP try_prodsum(const Expr& e);

  SP stmt(const Stmt& s, bool pure);

  const Instance& inst_;
  std::vector<Buf>& bufs_;
  std::deque<int64_t>& slots_;
  const ErrCtx* err_;
  std::unordered_map<const Expr*, bool> const_memo_;
};

}  // namespace ekb::ir::interp
