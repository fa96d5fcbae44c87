// The base of the C-family emitters (C for cpu; CUDA and OpenCL through GpuEmitter): prints a lowered
// loop-IR function (lower/lower.h) as one source file. Everything the C family shares lives here:
// statements, operator precedence (by full parenthesization), the IR's exact integer semantics
// (wrapping through unsigned types, floor division, saturating conversions), NaN-propagating
// min/max, and the prelude of small helper functions, emitted only when used. A subclass supplies
// the language: type spellings, literals, math function names, loop annotations, allocation forms,
// the entry point's signature and the file header.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "lower/loop_ir.h"

namespace ekb::codegen {

using ir::ScalarType;

class CLikeEmitter {
 public:
  explicit CLikeEmitter(const lir::Func& f) : f_(f) {}
  virtual ~CLikeEmitter() = default;

  // The complete source file: header, prelude of helpers, entry point.
  std::string emit();

 protected:
  // ---- language hooks
  // The element type of a buffer in memory (the ABI's spelling).
  virtual std::string storage_type(ScalarType t) const = 0;
  // The type of a computed value (a variable): index is a 64-bit integer, bool an int.
  virtual std::string value_type(ScalarType t) const = 0;
  // The unsigned integer type of the same width, for wrapping arithmetic (32 or 64 bits).
  virtual std::string unsigned_type(int bits) const = 0;
  // The math library function computing `f` in float type t ("expf" / "exp").
  virtual std::string math_function(lir::Intrinsic f, ScalarType t) const = 0;
  // half <-> f32 conversion functions; `to_half` picks the direction.
  virtual std::string half_conversion(ScalarType half, bool to_half) const = 0;
  // Text printed before a loop (e.g. "#pragma omp parallel for"), or empty.
  virtual std::string loop_annotation(const lir::Stmt& loop) const { return ""; }
  // A Prefetch statement (insert_prefetches), without indentation or newline.
  virtual std::string prefetch_statement(const lir::Stmt& prefetch);
  // The calling thread's rank in its block (Intrinsic::ThreadRank) as one operand.
  virtual std::string thread_rank_expression();
  // The declaration(s) that make an Allocate's buffer available, at `indent`.
  virtual std::string allocation(const lir::Stmt& alloc, const std::string& indent) const = 0;
  // Everything before the helpers (comments, includes) and the entry point up to its "{".
  virtual std::string file_header() const = 0;
  virtual std::string entry_begin() const = 0;
  // Declarations placed before the entry point (e.g. the scratch-size function); may be empty.
  virtual std::string before_entry() const { return ""; }
  // What closes the entry point ("}\n"), and the text after it; may be empty.
  virtual std::string entry_end() const { return "}\n"; }
  virtual std::string after_entry() const { return ""; }
  // "static inline" (C), "__device__ static inline" (CUDA), ...
  virtual std::string helper_qualifier() const = 0;
  // The entry point's body. The default prints f_.body as it is; a GPU emitter splits it into
  // kernels (printed by before_entry(), which is called after this) and their launches.
  virtual std::string entry_body();
  // A helper's full definition; the base defines every helper it uses.
  virtual std::string helper_definition(const std::string& name) const;

  // ---- memory access (hooks with C defaults: `name[index]`)
  // A load of the flat `index` of buffer e.name, and a store of `value` there (one statement).
  virtual std::string load_text(const lir::Expr& load, const std::string& index);
  virtual std::string store_text(const lir::Stmt& store, const std::string& index, const std::string& value);

  // ---- literals (hooks with C defaults)
  virtual std::string float_literal(double v, ScalarType t) const;
  virtual std::string int_literal(int64_t v, ScalarType t) const;

  // ---- printing, for subclasses that extend it
  std::string expr(const lir::Expr& e);
  // Virtual so that a GPU emitter prints the loops bound to blocks and threads, barriers and shared
  // allocations its own way and leaves the rest to this one.
  virtual void stmt(const lir::Stmt& s, int indent);
  // A For's annotation and its header up to "{" (the body and "}" are the caller's).
  void open_loop(const lir::Stmt& loop, int indent);
  // Records that the body calls helper `name` (and what it needs); returns the name.
  const std::string& use_helper(const std::string& name);

  const lir::Func& f_;
  std::string out_;  // the entry point's body, as it is printed

 private:
  std::string int_arith(const lir::Expr& e, const std::string& a, const std::string& b);
  std::string binary(const lir::Expr& e);
  std::string call(const lir::Expr& e);
  std::string cast(const lir::Expr& e);
  std::string prelude() const;

  std::vector<std::string> helpers_;  // in first-use order, dependencies first
  std::set<std::string> helper_set_;
};

// The C type suffix of a helper name ("i8", "f32", ...); narrow integers compute as i32.
std::string helper_suffix(ScalarType t);

}  // namespace ekb::codegen
