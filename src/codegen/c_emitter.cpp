#include "codegen/c_emitter.h"

#include <algorithm>
#include <stdexcept>

#include "codegen/target.h"
#include "ir/instance.h"
#include "lower/apply_schedule.h"
#include "lower/mutator.h"
#include "lower/simplify.h"
#include "lower/widen_half_precision.h"

namespace ekb::codegen {

std::string CEmitter::storage_type(ScalarType t) const { return element_type_name(t, Target::Cpu); }

std::string CEmitter::value_type(ScalarType t) const {
  switch (t) {
    case ScalarType::Bool:
      return "int";
    case ScalarType::I8:
      return "int8_t";
    case ScalarType::U8:
      return "uint8_t";
    case ScalarType::I16:
      return "int16_t";
    case ScalarType::I32:
      return "int32_t";
    case ScalarType::I64:
    case ScalarType::Index:
      return "int64_t";
    case ScalarType::F32:
      return "float";
    case ScalarType::F64:
      return "double";
    case ScalarType::F16:
    case ScalarType::BF16:
      break;
  }
  throw std::logic_error("C emitter: half-precision arithmetic (lower with widen_half_precision)");
}

std::string CEmitter::unsigned_type(int bits) const { return bits == 64 ? "uint64_t" : "uint32_t"; }

std::string CEmitter::math_function(lir::Intrinsic f, ScalarType t) const {
  std::string n;
  switch (f) {
    case lir::Intrinsic::Abs:
      n = "fabs";
      break;
    case lir::Intrinsic::RoundEven:
      n = "rint";
      break;  // the default rounding mode: half to even
    default:
      n = std::string(lir::intrinsic_name(f));
  }
  return t == ScalarType::F64 ? n : n + "f";
}

std::string CEmitter::half_conversion(ScalarType half, bool to_half) const {
  // ekb_abi.h, included first by the cpu backend.
  if (half == ScalarType::BF16) return to_half ? "ekb_f32_to_bf16" : "ekb_bf16_to_f32";
  return to_half ? "ekb_f32_to_f16" : "ekb_f16_to_f32";
}

std::string CEmitter::loop_annotation(const lir::Stmt& loop) const {
  switch (loop.for_kind) {
    case lir::ForKind::Parallel: {
      // The arguments as copies in each thread: shared, they are reached through the address the
      // outlined loop body receives, and reloaded after every call it makes (a vector expf).
      std::string names;
      for (const lir::Buffer& b : f_.buffers)
        if (b.role != lir::BufferRole::Temp) names += (names.empty() ? "" : ", ") + b.name;
      for (const lir::Param& p : f_.params) names += (names.empty() ? "" : ", ") + p.name;
      if (f_.scratch_bytes > 0) names += (names.empty() ? "" : ", ") + std::string("scratch");
      return "#pragma omp parallel for" + (names.empty() ? "" : " firstprivate(" + names + ")");
    }
    case lir::ForKind::Vectorized: {
      // The schedule proved the iterations independent (schedule_loop_kinds.h), so clang need not.
      // The loop's extent is the SIMD width: without unroll(disable), clang fully unrolls such a
      // short constant loop before the loop vectorizer runs, and the unrolled scalars are left
      // scalar whenever the SLP vectorizer cannot prove the buffers apart (a GEMM tile was).
      std::string pragma = "#pragma clang loop vectorize(assume_safety)";
      if (loop.extent->kind == lir::ExprKind::IntImm)
        pragma += " vectorize_width(" + std::to_string(loop.extent->int_value) + ") interleave_count(1) unroll(disable)";
      uses_simd_loops_ = true;
      return pragma;
    }
    case lir::ForKind::Unrolled:
      return loop.extent->kind == lir::ExprKind::IntImm ? "#pragma clang loop unroll(full)"
                                                        : "#pragma clang loop unroll(enable)";
    default:
      return "";
  }
}

std::string CEmitter::allocation(const lir::Stmt& a, const std::string& indent) const {
  std::string t = storage_type(a.type);
  std::string n = std::to_string(a.extent->int_value);
  switch (a.scope) {
    case lir::MemoryScope::Stack:
    case lir::MemoryScope::Local:
      return indent + t + " " + a.name + "[" + n + "] __attribute__((aligned(" +
             std::to_string(std::max<int64_t>(64, a.alignment)) + ")));\n";
    case lir::MemoryScope::Scratch: {
      std::string at = "(char*)scratch + " + std::to_string(a.scratch_offset);
      // The workspace is 64-byte aligned; a larger alignment rounds up into room plan_storage reserved.
      if (a.alignment > 64)
        at = "(char*)(((uintptr_t)(" + at + ") + " + std::to_string(a.alignment - 1) + ") & ~(uintptr_t)" +
             std::to_string(a.alignment - 1) + ")";
      return indent + t + "* __restrict " + a.name + " = (" + t + "*)(" + at + ");  /* " + n + " elements */\n";
    }
    default:
      throw std::logic_error("C emitter: temp '" + a.name + "' was not placed (run plan_storage)");
  }
}

std::string CEmitter::file_header() const {
  std::string what = f_.source ? f_.source->full_name() : f_.name;
  bool scheduled = f_.source && lir::has_layers_for(*f_.source->module, "cpu");
  return "/* " + what +
         (scheduled ? ": the native compiler's lowering with the IR solution's schedule layer.\n"
                    : ": the native compiler's default lowering (plain loops, single-threaded).\n") +
         " * Generated by EdgeKernelBench; compiled with the kernel ABI header (ekb_abi.h) included first. "
         "*/\n"
         "#include <math.h>\n#include <stdint.h>\n\n";
}

std::string CEmitter::signature() const {
  // The layout of codegen::kernel_signature: one argument per line, aligned after the '('.
  std::vector<std::string> args;
  for (lir::BufferRole role : {lir::BufferRole::Input, lir::BufferRole::Output})
    for (const lir::Buffer& b : f_.buffers)
      if (b.role == role)
        args.push_back(std::string(role == lir::BufferRole::Input ? "const " : "") + storage_type(b.type) +
                       "* " + b.name);
  for (const lir::Param& p : f_.params) args.push_back("int64_t " + p.name);
  if (f_.scratch_bytes > 0) args.push_back("void* scratch");
  std::string head = "void " + options_.entry_name + "(";
  std::string out = head, indent(head.size(), ' ');
  for (size_t i = 0; i < args.size(); ++i) out += (i ? ",\n" + indent : "") + args[i];
  return out + ")";
}

std::string CEmitter::before_entry() const {
  if (f_.scratch_bytes <= 0) return "";
  std::string s = "/* Scratch memory for the temps (docs/ABI.md), allocated by the harness. */\nint64_t " +
                  options_.scratch_function + "(";
  for (size_t i = 0; i < f_.params.size(); ++i)
    s += (i ? ", " : "") + std::string("int64_t ") + f_.params[i].name;
  if (f_.params.empty()) s += "void";
  return s + ") {\n  return " + std::to_string(f_.scratch_bytes) + ";\n}\n\n";
}

std::string CEmitter::entry_begin() const {
  // -march=native prefers 256-bit vectors on AVX-512 parts; the schedule's width is the one asked
  // for, so 512-bit vectors must be legal in a kernel with SIMD loops (ignored without AVX-512).
  // Only the explicit SIMD stores stream (clang does not vectorize a loop of scalar nontemporal
  // stores): where a nontemporal output has none (a row narrower than the vector, an f16 output),
  // the source says so, rather than an IR solution for every shape failing on a few.
  std::string s;
  for (const lir::Buffer& b : f_.buffers)
    if (b.nontemporal && !streamed_.count(b.name))
      s += "/* nontemporal(" + b.name + "): no store of " + b.name +
           " is in a loop written as explicit SIMD here (codegen/simd_loop.h): plain stores */\n";
  s += (uses_simd_loops_ ? "__attribute__((min_vector_width(512)))\n" : "") + signature() + " {";
  // align(T, bytes) on an argument: the harness aligns every tensor to 64 bytes (docs/ABI.md).
  for (const lir::Buffer& b : f_.buffers)
    if (b.role != lir::BufferRole::Temp && b.alignment > 0) {
      std::string t = (b.role == lir::BufferRole::Input ? "const " : "") + storage_type(b.type) + "*";
      s += "\n  " + b.name + " = (" + t + ")__builtin_assume_aligned(" + b.name + ", " + std::to_string(b.alignment) + ");";
    }
  return s;
}

std::string CEmitter::entry_end() const {
  // Streaming stores are weakly ordered: the fence makes them visible before the kernel returns
  // (those of the other threads of a parallel loop are ordered by the locked operations of its join).
  if (!streamed_.empty()) return "#if defined(__SSE__)\n  __builtin_ia32_sfence();\n#endif\n}\n";
  return "}\n";
}

void CEmitter::loop_prologue(const lir::Stmt& loop, int indent) {
  if (loop.prefetches.empty()) return;
  const std::string pad(static_cast<size_t>(indent), ' ');
  // The loops inside the body stand at their first iteration (an explicit SIMD loop's lane 0) and
  // at their last: every cache line between the two is prefetched when they are at most
  // kMaxPrefetchLines apart (an unrolled body's vectors); a longer span (an inner loop over a row,
  // a stencil's rows) keeps the first line only, the rest left to the hardware prefetcher.
  // prefetch's lines=N asks for N lines from the first element instead.
  constexpr int64_t kLineBytes = 64, kMaxPrefetchLines = 8;
  std::vector<const lir::Stmt*> inner;
  lir::for_each_stmt(*loop.body, [&](const lir::Stmt& s) {
    if (s.kind == lir::StmtKind::For) inner.push_back(&s);
  });
  for (const lir::Stmt::Prefetch& p : loop.prefetches) {
    const lir::Buffer* b = f_.buffer(p.tensor);
    if (!b) continue;
    const int64_t element = ir::byte_size(b->type);
    std::set<std::string> seen;
    lir::for_each_expr(*loop.body, [&](const lir::Expr& e) {
      if (e.kind != lir::ExprKind::Load || e.name != p.tensor || e.args.size() != 1) return;
      lir::ExprP first = e.args[0], last = e.args[0];
      for (const lir::Stmt* s : inner) {
        first = lir::substitute(first, s->name, s->min);
        last = lir::substitute(last, s->name,
                               lir::binary(lir::BinOp::Sub, lir::binary(lir::BinOp::Add, s->min, s->extent),
                                           lir::index_imm(1)));
      }
      first = lir::simplify(first);
      // The variables bound outside cancel in an affine index: set them to 0 to fold the span.
      auto outside_at_zero = [](lir::ExprP x) {
        std::set<std::string> vars;
        lir::for_each_expr(*x, [&](const lir::Expr& v) {
          if (v.kind == lir::ExprKind::Var) vars.insert(v.name);
        });
        for (const std::string& v : vars) x = lir::substitute(x, v, lir::index_imm(0));
        return x;
      };
      const lir::ExprP span =
          lir::simplify(lir::binary(lir::BinOp::Sub, outside_at_zero(last), outside_at_zero(first)));
      int64_t bytes = element;
      if (p.lines > 0)
        bytes = p.lines * kLineBytes;
      else if (span->kind == lir::ExprKind::IntImm && span->int_value > 0 &&
               (span->int_value + 1) * element <= kMaxPrefetchLines * kLineBytes)
        bytes = (span->int_value + 1) * element;
      const std::string index = expr(*first);
      for (int64_t offset = 0; offset < bytes; offset += kLineBytes) {
        if (!seen.insert(index + "+" + std::to_string(offset)).second) continue;
        // Through an integer: the address may lie past the end of the buffer (the last rows), where a
        // prefetch is harmless but pointer arithmetic would not be.
        out_ += pad + "__builtin_prefetch((const void*)((uintptr_t)&" + p.tensor + "[" + index + "] + " +
                std::to_string(p.distance * element + offset) + "u), 0, 3);\n";
      }
    });
  }
}

// ------------------------------------------------------------------------------- explicit SIMD
namespace {

// "ekb_f32x16": the vector type of `lanes` elements of t (a GCC vector extension).
std::string vector_type_name(ScalarType t, int64_t lanes) { return "ekb_" + helper_suffix(t) + "x" + std::to_string(lanes); }

}  // namespace

void CEmitter::stmt(const lir::Stmt& s, int indent) {
  if (s.kind == lir::StmtKind::For && s.for_kind == lir::ForKind::Vectorized && explicit_simd())
    if (std::optional<SimdLoop> lanes = simd_loop(s)) {
      uses_simd_loops_ = true;
      std::string pad(static_cast<size_t>(indent), ' ');
      out_ += pad + "{ /* " + s.name + " in [" + expr(*s.min) + ", +" + std::to_string(lanes->width) + "): " +
              std::to_string(lanes->width) + " lanes at once */\n";
      // Consecutive accesses are printed at the first lane: their index with the lane variable
      // at its first value (a constant clang folds into the address).
      out_ += pad + "  const " + value_type(ScalarType::Index) + " " + s.name + " = " + expr(*s.min) + ";\n";
      simd_stmt(*s.body, *lanes, indent + 2);
      out_ += pad + "}\n";
      return;
    }
  CLikeEmitter::stmt(s, indent);
}

void CEmitter::simd_stmt(const lir::Stmt& s, const SimdLoop& lanes, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  switch (s.kind) {
    case lir::StmtKind::Block:
      for (const lir::StmtP& x : s.stmts) simd_stmt(*x, lanes, indent);
      return;
    case lir::StmtKind::IfThenElse:
      out_ += pad + "if (" + expr(*s.value) + ") {\n";
      simd_stmt(*s.body, lanes, indent + 2);
      if (s.else_body) {
        out_ += pad + "} else {\n";
        simd_stmt(*s.else_body, lanes, indent + 2);
      }
      out_ += pad + "}\n";
      return;
    case lir::StmtKind::LetStmt:
      if (lanes.varying_lets.count(s.name))
        out_ += pad + "const " + vector_type_name(lanes.element, lanes.width) + " " + s.name + " = " +
                simd_value(*s.value, lanes) + ";\n";
      else
        out_ += pad + "const " + value_type(s.type) + " " + s.name + " = " + expr(*s.value) + ";\n";
      simd_stmt(*s.body, lanes, indent);
      return;
    case lir::StmtKind::Store: {
      const lir::Buffer* b = f_.buffer(s.name);
      const bool stream = b && b->nontemporal;
      if (stream) streamed_.insert(s.name);
      out_ += pad + simd_helper(stream ? "stream" : "store", lanes) + "(" + first_lane_address(s.name, s.indices[0]) +
              ", " + simd_value(*s.value, lanes) + ");\n";
      return;
    }
    case lir::StmtKind::For:
      // Uniform bounds: every lane runs the same iterations (unrolled by clang where constant).
      open_loop(s, indent);
      simd_stmt(*s.body, lanes, indent + 2);
      out_ += pad + "}\n";
      return;
    case lir::StmtKind::DeclareVar:
      out_ += pad + vector_type_name(lanes.element, lanes.width) + " " + s.name + " = " + simd_value(*s.value, lanes) +
              ";\n";
      simd_stmt(*s.body, lanes, indent);
      return;
    case lir::StmtKind::Assign:
      out_ += pad + s.name + " = " + simd_value(*s.value, lanes) + ";\n";
      return;
    default:
      throw std::logic_error("C emitter: statement not allowed in a SIMD loop (simd_loop accepted it)");
  }
}

std::string CEmitter::simd_value(const lir::Expr& e, const SimdLoop& lanes) {
  if (!lanes.varies(e)) return simd_helper("splat", lanes) + "(" + expr(e) + ")";
  switch (e.kind) {
    case lir::ExprKind::Var:
      return e.name;
    case lir::ExprKind::Load:
      return simd_helper("load", lanes) + "(" + first_lane_address(e.name, e.args[0]) + ")";
    case lir::ExprKind::Unary:
      return "(-" + simd_value(*e.args[0], lanes) + ")";
    case lir::ExprKind::Binary:
      if (e.bin_op == lir::BinOp::Min || e.bin_op == lir::BinOp::Max)
        return simd_helper(e.bin_op == lir::BinOp::Min ? "fmin" : "fmax", lanes) + "(" + simd_value(*e.args[0], lanes) +
               ", " + simd_value(*e.args[1], lanes) + ")";
      return "(" + simd_value(*e.args[0], lanes) + " " + std::string(lir::bin_op_text(e.bin_op)) + " " +
             simd_value(*e.args[1], lanes) + ")";
    case lir::ExprKind::Select:
      return "(" + expr(*e.args[0]) + " ? " + simd_value(*e.args[1], lanes) + " : " + simd_value(*e.args[2], lanes) + ")";
    case lir::ExprKind::Call:
      if (!has_vector_call(e, lanes)) break;
      return simd_helper(std::string(lir::intrinsic_name(e.intrinsic)), lanes) + "(" + simd_value(*e.args[0], lanes) + ")";
    default:
      break;
  }
  throw std::logic_error("C emitter: expression not allowed in a SIMD loop (simd_loop accepted it)");
}

std::string CEmitter::simd_helper(const std::string& op, const SimdLoop& lanes) {
  use_helper(vector_type_name(lanes.element, lanes.width));
  return use_helper("ekb_" + op + "_" + helper_suffix(lanes.element) + "x" + std::to_string(lanes.width));
}

std::string CEmitter::first_lane_address(const std::string& buffer, const lir::ExprP& index) {
  return "&" + buffer + "[" + expr(*index) + "]";
}

std::string CEmitter::helper_definition(const std::string& name) const {
  // The vector types and their helpers: ekb_f32x16, ekb_load_f32x16, ekb_store_f32x16, ekb_splat_f32x16.
  size_t x = name.rfind('x');
  bool f32 = name.find("_f32x") != std::string::npos, f64 = name.find("_f64x") != std::string::npos;
  if (x == std::string::npos || (!f32 && !f64)) return CLikeEmitter::helper_definition(name);
  int64_t lanes = std::stoll(name.substr(x + 1));
  std::string t = f32 ? "float" : "double", v = vector_type_name(f32 ? ScalarType::F32 : ScalarType::F64, lanes);
  if (name == v) return "typedef " + t + " " + v + " __attribute__((vector_size(" + std::to_string(lanes * (f32 ? 4 : 8)) + ")));\n";
  // Unaligned loads and stores through memcpy, which also keeps them free of aliasing questions.
  if (name.rfind("ekb_load_", 0) == 0)
    return "static inline " + v + " " + name + "(const " + t + "* p) { " + v + " v; __builtin_memcpy(&v, p, sizeof v); return v; }\n";
  if (name.rfind("ekb_store_", 0) == 0)
    return "static inline void " + name + "(" + t + "* p, " + v + " v) { __builtin_memcpy(p, &v, sizeof v); }\n";
  if (name.rfind("ekb_fmin_", 0) == 0 || name.rfind("ekb_fmax_", 0) == 0) {
    // The scalar helpers' NaN-propagating choice, (a < b || b != b) ? b : a for max, per lane:
    // the comparisons give a mask of all ones or zeros per lane, which selects the bits.
    const std::string mask = std::string(f32 ? "int" : "long long") + " __attribute__((vector_size(" +
                             std::to_string(lanes * (f32 ? 4 : 8)) + ")))";
    const std::string take_b = name.rfind("ekb_fmax_", 0) == 0 ? "(a < b) | (b != b)" : "(b < a) | (b != b)";
    return "static inline " + v + " " + name + "(" + v + " a, " + v + " b) {\n  typedef " + mask + " mask_t;\n" +
           "  const mask_t m = " + take_b + ";\n  return (" + v + ")(((mask_t)b & m) | ((mask_t)a & ~m));\n}\n";
  }
  if (name.rfind("ekb_stream_", 0) == 0)
    // A streaming store needs a whole aligned vector (clang emits vmovntps, which faults on an
    // unaligned address, whatever alignment the pointer type claims): elsewhere a plain store.
    return "static inline void " + name + "(" + t + "* p, " + v + " v) {\n#if defined(__clang__)\n" +
           "  if (((uintptr_t)p & (sizeof v - 1)) == 0) { __builtin_nontemporal_store(v, (" + v + "*)p); return; }\n" +
           "#endif\n  __builtin_memcpy(p, &v, sizeof v);\n}\n";
  if (name.rfind("ekb_exp_", 0) == 0) {
    // glibc's AVX-512 expf (libmvec, linked with -lmvec); the scalar expf elsewhere. Both sides of
    // the call pass 64-byte vectors in zmm registers only with min_vector_width(512).
    std::string n = std::to_string(lanes);
    return "#if defined(__AVX512F__)\n" + v + " _ZGVeN" + n + "v_expf(" + v + ");\n" +
           "__attribute__((min_vector_width(512))) static inline " + v + " " + name + "(" + v + " x) { return _ZGVeN" +
           n + "v_expf(x); }\n#else\nstatic inline " + v + " " + name + "(" + v + " x) {\n  " + v + " r;\n  for (int i = 0; i < " +
           n + "; ++i) r[i] = expf(x[i]);\n  return r;\n}\n#endif\n";
  }
  if (name.rfind("ekb_splat_", 0) == 0) {
    std::string all;
    for (int64_t i = 0; i < lanes; ++i) all += (i ? ", x" : "x");
    return "static inline " + v + " " + name + "(" + t + " x) { return (" + v + "){" + all + "}; }\n";
  }
  return CLikeEmitter::helper_definition(name);
}

std::string emit_c_source(const lir::Func& f, const CEmitOptions& options) {
  CEmitter e(f, options);
  return e.emit();
}

std::string emit_c_source(const ir::Instance& inst, const CEmitOptions& options,
                          const lir::LowerOptions& lower_options) {
  lir::Func f = lir::lower(inst, lower_options);
  return emit_c_source(f, options);
}

}  // namespace ekb::codegen
