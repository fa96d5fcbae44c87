// The loop-level IR ("lir"): what the native compiler lowers a verified workload into, and what
// the C-like emitters print. Passes (src/lower/*.h, listed in lower.cpp) rewrite it step by step:
//
//   typed expressions   IntImm, FloatImm, Var, Load, Unary, Binary, Select, Call, Cast, Reduce
//   statements          For, Store, Assign, LetStmt, DeclareVar, Block, IfThenElse, Allocate, Barrier,
//                       Prefetch (cpu), Kernel and ThreadAllReduce (gpu)
//
// Nodes are immutable and shared (like ir::Expr); a pass builds new nodes where it changes
// something. No variable is bound again inside its own binding's scope (verify_lir checks it), so an
// emitter may declare each one where it is bound without shadowing another; the same name may be
// bound in sibling scopes (the copies of a loop that a peeled split or a moved reduction leaves).
//
// Semantics are those of docs/IR.md, with these loop-level conventions:
//  - Integer arithmetic wraps at the expression's type width; `no_wrap` on an integer
//    Unary/Binary records that the exact result provably fits (simplify sets it), so an emitter
//    may use plain arithmetic. Div/Mod on integers are floor division/modulo; TruncDiv/TruncMod are
//    C's truncating forms (simplify introduces them only where both agree).
//  - Float Min/Max propagate NaN (as the reference does); integer Min/Max compare values.
//  - Select, And and Or evaluate only the operand they need.
//  - A Load has one index per buffer dimension and may carry a boundary (pad/edge/mirror) until
//    lower_boundaries; after flatten_storage every Load and Store has exactly one flat index.
//  - Reduce exists only between lower_definitions and lower_reductions.
//  - f16/bf16 values are only loaded and stored; widen_half_precision makes arithmetic f32.
//  - The last passes make what a target runs explicit: insert_prefetches (cpu) turns the prefetch
//    directive into Prefetch statements; on gpu, map_grid_stride, outline_kernels and
//    lower_thread_reductions leave a Block of Kernels, each with its launch, whose loops are bound
//    to the launch's blocks and threads. An emitter only prints what they decided.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/types.h"

namespace ekb::ir {
struct Instance;
}

namespace ekb::lir {

using ir::ScalarType;

// ------------------------------------------------------------------------------- expressions
struct Expr;
using ExprP = std::shared_ptr<const Expr>;

enum class ExprKind : uint8_t { IntImm, FloatImm, Var, Load, Unary, Binary, Select, Call, Cast, Reduce };
enum class UnOp : uint8_t { Neg, Not };
enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,  // float division; integer floor division / floor modulo (IR semantics)
  TruncDiv,
  TruncMod,  // C's integer / and %: only where the operands make them equal to floor
  Min,
  Max,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,  // on bools, short-circuit
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,  // arithmetic shifts of the exact value, then wrapped
};
enum class Intrinsic : uint8_t {
  // float -> same float type
  Exp,
  Log,
  Log2,
  Exp2,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Sin,
  Cos,
  Tan,
  Atan,
  Atan2,
  Sigmoid,
  Pow,
  Floor,
  Ceil,
  Round,
  RoundEven,
  Trunc,
  Fma,
  Abs,  // int (wrapping) or float
  Rdmulh,
  Rshift,
  Requant,      // gemmlowp / TFLite, on i32 (ir/quant.h)
  MirrorIndex,  // (x, extent): reflect x into [0, extent) without repeating the edge (index type)
  ThreadRank,   // (): the calling thread's rank in its block, x fastest (index type; in a Grid Kernel)
};

struct Range {
  std::string var;  // index type
  ExprP min, extent;
};

struct Expr {
  ExprKind kind = ExprKind::IntImm;
  ScalarType type = ScalarType::Index;
  int64_t int_value = 0;   // IntImm (bool: 0 or 1)
  double float_value = 0;  // FloatImm
  std::string name;        // Var: variable; Load: buffer
  UnOp un_op = UnOp::Neg;
  BinOp bin_op = BinOp::Add;
  Intrinsic intrinsic = Intrinsic::Exp;
  ir::ReduceOp reduce_op = ir::ReduceOp::Sum;
  ir::Boundary boundary = ir::Boundary::None;  // Load, until lower_boundaries
  bool saturate = false;                       // Cast: int->int saturates instead of wrapping
  bool no_wrap = false;                        // integer Unary/Binary: the exact result fits in `type`
  // Operands. Unary: [a]; Binary: [a, b]; Select: [cond, a, b]; Call: its arguments;
  // Cast: [value]; Load: indices (one per dimension, or one flat index); Reduce: [body].
  std::vector<ExprP> args;
  ExprP pad;                               // Load with boundary Pad: the value outside the buffer
  std::vector<Range> ranges;               // Reduce: nested ranges, first outermost
  ScalarType body_type = ScalarType::F32;  // Reduce: the body's type (argmax/argmin give index)
};

// Constructors. `binary` gives comparisons and And/Or the type bool, others a's type.
ExprP int_imm(ScalarType t, int64_t v);
ExprP index_imm(int64_t v);
ExprP bool_imm(bool v);
ExprP float_imm(ScalarType t, double v);
ExprP var(std::string name, ScalarType t);
ExprP load(std::string buffer, ScalarType t, std::vector<ExprP> indices);
ExprP unary(UnOp op, ExprP a);
ExprP binary(BinOp op, ExprP a, ExprP b);
ExprP select(ExprP cond, ExprP a, ExprP b);
ExprP call(Intrinsic f, ScalarType t, std::vector<ExprP> args);
ExprP cast(ScalarType t, ExprP v, bool saturate = false);
// A copy of `e` with other operands (same kind, type and attributes).
ExprP with_args(const Expr& e, std::vector<ExprP> args);

bool is_const(const Expr& e);  // IntImm or FloatImm
bool is_int_const(const Expr& e, int64_t v);
bool is_comparison(BinOp op);
// The value the combine `op` (Add, Mul, Max, Min) leaves unchanged: 0, 1, -inf / the type's
// minimum, +inf / its maximum. Reductions' accumulators start there (lower_reductions), and so do
// the GPU threads' partial results of a ThreadAllReduce.
ExprP combine_identity(BinOp op, ScalarType t);
// Structural equality (names, types, attributes, operands).
bool equal(const Expr& a, const Expr& b);
bool equal(const ExprP& a, const ExprP& b);

// ------------------------------------------------------------------------------- statements
struct Stmt;
using StmtP = std::shared_ptr<const Stmt>;

enum class StmtKind : uint8_t {
  For,         // name: variable (index type); min, extent; for_kind; body
  Store,       // name: buffer; indices; value
  Assign,      // name: a DeclareVar variable; value
  LetStmt,     // name: immutable variable of `type` = value, visible in body
  DeclareVar,  // name: mutable scalar of `type` initialized to value, visible in body (accumulators)
  Block,       // stmts, in order
  IfThenElse,  // value: condition; body; else_body (may be null)
  Allocate,    // name: temp buffer of `type` elements, `extent` of them, in `scope`; body
  Barrier,     // gpu: every thread of the block waits here until all arrive, and their writes to
               // shared memory are visible (__syncthreads / barrier(CLK_LOCAL_MEM_FENCE))
  Prefetch,    // cpu: name: buffer; indices: [flat index]; byte_offset: a software prefetch of the
               // cache line holding the byte that far past the element (harmless past the end)
  Kernel,      // gpu: name: the kernel; launch: how the host starts its threads; body: what each
               // thread runs. A gpu function's body is a Block of Kernels, launched in order.
  ThreadAllReduce,  // gpu: every thread's `combines[i].var` combined (op) over the threads of its
                    // block along gpu_axis; afterwards each of them holds the total. `form` says how.
};

// GpuBlock / GpuThread: one iteration per block / thread along Stmt::gpu_axis (bind). A
// GpuCooperative nest (the copy into a shared cache) is one iteration space spread over all the
// threads of the block (Stmt::CooperativeCopy says how many elements a turn takes). Consecutive
// GpuGridStride loops (map_grid_stride) are one iteration space spread over all the threads of
// their Kernel's launch: thread t takes the flat iterations t, t + threads, t + 2 * threads, ...
// (innermost loop fastest).
enum class ForKind : uint8_t {
  Serial,
  Parallel,
  Vectorized,
  Unrolled,
  GpuBlock,
  GpuThread,
  GpuCooperative,
  GpuGridStride
};

// A kernel's launch geometry: blocks and threads per axis (x, y, z), and its shared memory.
struct KernelGeometry {
  std::array<int64_t, 3> grid = {1, 1, 1};  // a 0 when a block loop has no iterations
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_bytes = 0;
  bool has_thread_loops = false;
  int64_t threads() const { return block[0] * block[1] * block[2]; }
  bool empty() const { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

// How the host launches a Kernel (outline_kernels decides).
enum class LaunchKind : uint8_t {
  Single,      // one thread
  GridStride,  // blocks of geometry.block[0] threads, one thread per iteration of the kernel's
               // GpuGridStride loops (the product of `extents`, each counted from 0), at most
               // max_blocks blocks: the grid-stride loop covers the rest
  Grid,        // exactly `geometry` (a stage with loops bound to blocks and threads, schedule_bind.h)
};

struct Launch {
  LaunchKind kind = LaunchKind::Single;
  KernelGeometry geometry;
  std::vector<ExprP> extents;      // GridStride: its loops' extents, outermost first
  std::vector<std::string> loops;  // GridStride: its loops' variables
  int64_t max_blocks = 0;          // GridStride
};

// How a ThreadAllReduce combines: a tree in shared memory (barrier between steps), warp shuffles
// (axis x, a multiple of 32 threads; the warps' totals through shared memory), or both, the
// shuffles where the device compiler has them (OpenCL: NVIDIA's) and the tree elsewhere.
enum class AllReduceForm : uint8_t { Tree, Shuffles, ShufflesOrTree };

// Where an Allocate's storage lives. Global: not yet placed (plan_storage decides); Stack: a local
// array; Scratch: the harness-provided workspace (ABI "Scratch memory") at scratch_offset;
// Shared / Local: GPU shared memory / a thread's registers (cache_read/cache_write on gpu).
enum class MemoryScope : uint8_t { Global, Stack, Scratch, Shared, Local };

struct Stmt {
  StmtKind kind = StmtKind::Block;
  std::string name;
  ScalarType type = ScalarType::F32;
  ExprP value;
  std::vector<ExprP> indices;
  ExprP min, extent;
  ForKind for_kind = ForKind::Serial;
  int gpu_axis = 0;  // For of kind GpuBlock/GpuThread, ThreadAllReduce: 0, 1, 2 for x, y, z
  MemoryScope scope = MemoryScope::Global;
  int64_t scratch_offset = 0;  // Allocate in Scratch: byte offset (64-byte aligned)
  int64_t alignment = 0;       // Allocate: byte alignment an align directive asked for (0: default)
  // For: software prefetches at the start of each iteration (prefetch directive): of every element
  // of `tensor` the body reads, `distance` elements further on; `lines` consecutive cache lines
  // from each read's first element (0: the lines the iteration's reads span, when few).
  // insert_prefetches turns them into Prefetch statements.
  struct Prefetch {
    std::string tensor;
    int64_t distance = 0;
    int64_t lines = 0;
  };
  std::vector<Prefetch> prefetches;
  int64_t byte_offset = 0;  // Prefetch
  Launch launch;            // Kernel
  // ThreadAllReduce: each accumulator, its combining operation and the shared buffer of its
  // partial results (an Allocate in Shared scope around the kernel's code).
  struct Combine {
    std::string var;
    ScalarType type = ScalarType::F32;
    BinOp op = BinOp::Add;
    std::string slots;
  };
  std::vector<Combine> combines;
  AllReduceForm form = AllReduceForm::Tree;
  // For of kind GpuCooperative, the outermost of a copy nest (vectorize_cooperative_copies): the
  // nest's name (its printed variables' prefix), and how many consecutive f32 elements of the
  // innermost loop a thread copies at once: 4 as one float4 load (stored as one too with
  // vector_store, else element by element at lane_indices), or 1.
  struct CooperativeCopy {
    std::string name;
    int64_t lanes = 1;
    bool vector_store = false;
    std::vector<ExprP> lane_indices;
  };
  CooperativeCopy cooperative;
  StmtP body, else_body;
  std::vector<StmtP> stmts;
};

StmtP make_for(std::string var, ExprP min, ExprP extent, StmtP body, ForKind kind = ForKind::Serial);
StmtP make_store(std::string buffer, std::vector<ExprP> indices, ExprP value);
StmtP make_assign(std::string var, ExprP value);
StmtP make_let(std::string var, ExprP value, StmtP body);
StmtP make_declare(std::string var, ScalarType t, ExprP init, StmtP body);
StmtP make_block(std::vector<StmtP> stmts);  // flattens nested blocks, drops empty ones
StmtP make_if(ExprP cond, StmtP then_body, StmtP else_body = nullptr);
StmtP make_allocate(std::string buffer, ScalarType t, int64_t extent, MemoryScope scope, StmtP body);
StmtP make_barrier();
StmtP make_prefetch(std::string buffer, ExprP index, int64_t byte_offset);
StmtP make_kernel(std::string name, Launch launch, StmtP body);
StmtP make_thread_all_reduce(std::vector<Stmt::Combine> combines, int axis, AllReduceForm form);
bool is_no_op(const Stmt& s);  // an empty block

// ------------------------------------------------------------------------------- functions
enum class BufferRole : uint8_t { Input, Output, Temp };

struct Buffer {
  std::string name;
  ScalarType type = ScalarType::F32;  // element type in memory
  std::vector<int64_t> shape;         // row-major, concrete
  BufferRole role = BufferRole::Input;
  int64_t alignment = 0;  // inputs/outputs: alignment the kernel may assume (align directive)
  bool nontemporal = false;  // outputs: vector stores bypass the caches (nontemporal directive)
  int64_t num_elements() const;
};

struct Param {
  std::string name;
  int64_t value = 0;  // the workload's value: the default lowering specializes to it
};

// ------------------------------------------------------------------------------- stages
// What the schedule layer names (docs/IR.md, "Schedule and memory layers"): a stage is a tensor's
// pure definition ("C"), one of its updates ("C.update(0)"), or a partial-result stage that rfactor
// creates; its loops carry the IR's names ("i", "k") and the names directives give them ("io").
// lower_definitions records every stage; the schedule passes keep the table up to date, so that a
// later pass (compute_at, cache_read, a GPU binder) finds a stage's loops by name.
//
// One loop name may stand for several For loops, its copies: a reduction moved out of its
// statement leaves initialization, accumulation and finalization nests, each with a copy of the
// pure loops, and a peeled split leaves a main and a tail loop. A directive applies to every copy.
enum class LoopRole : uint8_t {
  Pure,       // an index of a pure definition: iterations are independent
  Reduction,  // a reduction variable: iterations accumulate into one value
  Ordered,    // an update's `for` range: iterations run in program order
  Free,       // an update's free left-hand-side variable: independent if the statement reads its
              // tensor only at the element it writes (checked where it matters)
};

struct StageLoop {
  std::string name;               // as directives name it
  LoopRole role = LoopRole::Pure;
  std::vector<std::string> vars;  // the For variables of its copies
  // Some iterations run twice (split with tail=shift_inwards): fine for an idempotent body, wrong
  // for one that accumulates (materialize_reduction refuses such a stage).
  bool recomputes = false;
  // Split with tail=mask: its last block waits for a vectorize of this loop (or of a loop split
  // from it) to run as one masked vector; apply_schedule refuses a cpu schedule that leaves it.
  bool masked_tail = false;
};

struct Stage {
  std::string name;    // "C", "C.update(0)", or an rfactor stage's name
  std::string tensor;  // the buffer it writes
  bool is_update = false;
  std::vector<StageLoop> loops;
  // Where compute_at / compute_inline put it: "" (root, in program order), "C.loop" or "inline".
  std::string placement;

  StageLoop* loop(const std::string& loop_name);
  const StageLoop* loop(const std::string& loop_name) const;
  // The loop whose copies include For variable `var`, or nullptr.
  StageLoop* loop_of_var(const std::string& var);
};

std::string_view loop_role_name(LoopRole r);

// One kernel: its buffers (inputs and outputs are arguments, in ABI order; temps are allocated
// inside body), its int64 parameters, the body, and the scratch workspace it declares.
struct Func {
  std::string name;
  std::vector<Buffer> buffers;  // inputs, outputs, then temps
  std::vector<Param> params;
  StmtP body;
  int64_t scratch_bytes = 0;             // > 0: the kernel takes `void* scratch` (set by plan_storage)
  const ir::Instance* source = nullptr;  // the workload it was lowered from (for emitters)
  std::set<std::string> names;           // every name in use (buffers, params, variables)
  std::vector<Stage> stages;             // in program order (rfactor stages before their consumer)
  // Inputs that a layout directive packed into a temp at kernel entry: input -> that temp.
  std::map<std::string, std::string> packed_inputs;

  const Buffer* buffer(const std::string& name) const;
  Stage* stage(const std::string& name);
  // A new unique variable name starting with `base`, recorded in `names`.
  std::string fresh_name(const std::string& base);
};

// ------------------------------------------------------------------------------- printing
std::string_view bin_op_text(BinOp op);        // "+", "min", "floordiv"...
std::string_view intrinsic_name(Intrinsic f);  // "exp", "mirror_index"...
std::string_view for_kind_name(ForKind k);
std::string_view scope_name(MemoryScope s);
std::string_view launch_kind_name(LaunchKind k);
std::string_view all_reduce_form_name(AllReduceForm f);
std::string to_string(const Expr& e);
std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const Func& f);

}  // namespace ekb::lir
