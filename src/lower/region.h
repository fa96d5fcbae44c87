// What compute_at and the memory layer share: the box of a buffer's elements that a loop body
// accesses (bounds inference), accesses moved to another buffer, loop nests over a box, and the
// kernel's top-level statements (its stages, in program order, under the root allocations).
//
// Bounds inference is interval arithmetic on affine indices: an index that is affine in the loops
// inside the scope (coefficients constant, anything free of those loops an opaque term) is bounded
// by putting each loop's first or last value in, innermost loop first. Two bounds with the same
// opaque terms differ by a constant, which sizes a buffer for the box; any other index covers the
// whole dimension (correct, only larger).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lir/int_interval.h"
#include "lir/loop_ir.h"

namespace ekb::lower {

// A buffer allocated inside a parallel loop is private to each thread, so it lives on the thread's
// stack: at most this large (thread stacks are a few MiB).
inline constexpr int64_t kMaxPrivateBytes = 256 << 10;

enum class AccessKind { Loads, Stores, Both };

// The elements of a buffer that a scope accesses, per dimension: the first index `min` and the
// count `extent` (expressions in variables bound outside the scope, clamped into the buffer; an
// extent may be <= 0 for an execution that accesses nothing), and `size`, a constant bound of the
// extent over every execution: the shape of a buffer that holds the box.
struct Box {
  std::vector<lir::ExprP> min, extent;
  std::vector<int64_t> size;
  int64_t num_elements() const;
};

// The values each loop variable under `root` takes: the hull over the loops of one name, a name
// with a non-constant loop somewhere left out. For simplifying with (lir/simplify.h): a box's
// clamps into its buffer (max(i, 0)) vanish where the loops keep the index inside.
std::map<std::string, lir::IntInterval> loop_ranges(const lir::Stmt& root);

// nullopt when `scope` does not access `buffer` that way.
std::optional<Box> footprint(const lir::Func& f, const lir::Stmt& scope, const std::string& buffer, AccessKind kind);
bool same_box(const Box& a, const Box& b);

// Whether different iterations of `loop` store to different elements of `buffer`: in some
// dimension every store's index is c * v + r, v the loop's variable, where r takes fewer than |c|
// values within one iteration (B[i, j] in a loop over i; C[4 * io + ii] around a loop ii < 4).
// Scalars that the body assigns are not looked at (independence_problem refuses those).
bool iterations_store_apart(const lir::Func& f, const lir::Stmt& loop, const std::string& buffer);

// Whether `scope`'s stores to `buffer` write every element of their box (footprint): one store,
// each of whose indices steps through consecutive elements, loops of strides 1, e1, e1 * e2, ...
// (4 * io + ii with ii < 4; not 2 * i, which leaves every other element alone).
bool stores_cover_box(const lir::Stmt& scope, const std::string& buffer);

// pad/edge/mirror reads of `buffer` under s as plain loads (lower_boundary), so that they can be
// moved to a buffer of another shape.
lir::StmtP lower_boundary_reads(const lir::Func& f, const lir::StmtP& s, const std::string& buffer);

// s with every load and store of `from` made an access of `to` at index(original indices).
using IndexMap = std::function<std::vector<lir::ExprP>(const std::vector<lir::ExprP>&)>;
lir::StmtP redirect_accesses(const lir::StmtP& s, const std::string& from, const std::string& to,
                             const IndexMap& index);
// Indices relative to an origin: i_d - origin_d.
IndexMap relative_to(std::vector<lir::ExprP> origin);

// `for v0 in [min0, +extent0): for v1 ...: body(v0, v1, ...)` with fresh variables named after
// `base`, outermost dimension first (the innermost loop walks contiguous memory).
lir::StmtP nest_over(lir::Func& f, const std::vector<lir::ExprP>& min, const std::vector<lir::ExprP>& extent,
                     const std::string& base, const std::function<lir::StmtP(const std::vector<lir::ExprP>&)>& body);

// The box's min and extent bound to fresh variables by lets around `body` (so that a nest reads
// them once per execution), and the box rewritten to use those variables.
lir::StmtP bind_box(lir::Func& f, Box& box, const std::string& base, const std::function<lir::StmtP()>& body);

// Every For of these variables under root. A loop name's copies are usually distinct variables,
// but loops below a copied nest keep their names, so one variable may have several Fors.
std::vector<const lir::Stmt*> loops_of(const lir::Stmt& root, const std::vector<std::string>& vars);
// Whether a For of `var`, or a loop enclosing one, runs its iterations in parallel threads.
bool in_parallel_loop(const lir::Stmt& root, const std::string& var);

// Loads (and stores) of `buffer` under s.
int count_accesses(const lir::Stmt& s, const std::string& buffer, AccessKind kind);
// The buffers s stores to, and those it loads from.
std::vector<std::string> buffers_written(const lir::Stmt& s);
std::vector<std::string> buffers_read(const lir::Stmt& s);

// The kernel's root allocations (outermost first) and the statements under them.
struct TopLevel {
  std::vector<lir::StmtP> allocations;
  std::vector<lir::StmtP> stmts;

  lir::StmtP build() const;
  int index_of_loop(const std::string& var) const;  // the statement holding that For, or -1
  // The only statement that stores to `buffer`; throws ScheduleError when there are none or several.
  int producer_of(const std::string& buffer, const std::string& directive) const;
  void drop_allocation(const std::string& buffer);
};
TopLevel top_level(const lir::Func& f);

}  // namespace ekb::lower
