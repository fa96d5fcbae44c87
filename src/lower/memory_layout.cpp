#include "lower/memory_layout.h"

#include <algorithm>

#include "lir/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

// The new shape, and where an element's indices go in it.
struct NewLayout {
  std::vector<int64_t> shape;
  IndexMap index;
};

NewLayout new_layout(const std::vector<int64_t>& shape, const LayoutSpec& spec) {
  NewLayout out;
  if (spec.pack) {
    size_t d = spec.dims.at(0);
    int64_t n = spec.factor;
    out.shape = shape;
    out.shape[d] = (shape[d] + n - 1) / n;
    out.shape.push_back(n);
    out.index = [d, n](const std::vector<ExprP>& i) {
      std::vector<ExprP> o = i;
      o[d] = binary(BinOp::Div, i[d], index_imm(n));  // floor division on indices
      o.push_back(binary(BinOp::Mod, i[d], index_imm(n)));
      return o;
    };
    return out;
  }
  for (int64_t p : spec.dims) out.shape.push_back(shape.at(p));
  out.index = [dims = spec.dims](const std::vector<ExprP>& i) {
    std::vector<ExprP> o;
    for (int64_t p : dims) o.push_back(i[p]);
    return o;
  };
  return out;
}

Buffer& buffer_named(Func& f, const std::string& name) {
  auto it = std::find_if(f.buffers.begin(), f.buffers.end(), [&](const Buffer& b) { return b.name == name; });
  if (it == f.buffers.end()) throw ScheduleError("there is no tensor or cache buffer '" + name + "'");
  return *it;
}

// Every Allocate of `buffer` rewritten by `change` (a cache inside a peeled loop has several).
class AllocationChange : public Mutator {
 public:
  AllocationChange(const std::string& buffer, std::function<void(Stmt&)> change)
      : buffer_(buffer), change_(std::move(change)) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override {
    StmtP m = mutate_children(s);
    if (m->kind != StmtKind::Allocate || m->name != buffer_) return m;
    auto n = std::make_shared<Stmt>(*m);
    change_(*n);
    ++count_;
    return n;
  }
  int count() const { return count_; }

 private:
  const std::string& buffer_;
  std::function<void(Stmt&)> change_;
  int count_ = 0;
};

int change_allocations(Func& f, const std::string& buffer, std::function<void(Stmt&)> change) {
  AllocationChange c(buffer, std::move(change));
  f.body = c.mutate(f.body);
  return c.count();
}

}  // namespace

void layout(Func& f, const std::string& tensor, const LayoutSpec& spec) {
  // An input packed before: the packed temp holds it now.
  auto packed = f.packed_inputs.find(tensor);
  Buffer& b = buffer_named(f, packed != f.packed_inputs.end() ? packed->second : tensor);
  if (b.role == BufferRole::Output)
    throw ScheduleError("'" + tensor + "' is an output, which keeps the row-major layout of the kernel ABI",
                        "change the layout of the temp or cache buffer that computes it instead");
  size_t rank = b.shape.size();
  bool dims_ok = spec.pack ? spec.dims.size() == 1 && spec.dims[0] >= 0 && size_t(spec.dims[0]) < rank
                           : spec.dims.size() == rank;
  for (int64_t d : spec.dims) dims_ok &= d >= 0 && size_t(d) < rank;
  if (!dims_ok || spec.factor < 1)
    throw ScheduleError("the layout does not fit '" + b.name + "', of rank " + std::to_string(rank));
  NewLayout nl = new_layout(b.shape, spec);
  std::string name = b.name;
  f.body = lower_boundary_reads(f, f.body, name);

  if (b.role == BufferRole::Input) {
    // Pack once at kernel entry; every read then uses the packed temp.
    std::string temp = f.fresh_name(tensor + "_packed");
    ScalarType type = b.type;
    std::vector<int64_t> shape = b.shape;
    Buffer packed_buffer{temp, type, nl.shape, BufferRole::Temp};
    f.buffers.push_back(packed_buffer);
    f.packed_inputs[tensor] = temp;
    TopLevel top = top_level(f);
    for (StmtP& s : top.stmts) s = redirect_accesses(s, name, temp, nl.index);
    std::vector<ExprP> zeros, extents;
    for (int64_t n : shape) {
      zeros.push_back(index_imm(0));
      extents.push_back(index_imm(n));
    }
    top.stmts.insert(top.stmts.begin(), nest_over(f, zeros, extents, temp + "_i", [&](const std::vector<ExprP>& i) {
                       return make_store(temp, nl.index(i), load(name, type, i));
                     }));
    top.allocations.push_back(make_allocate(temp, type, packed_buffer.num_elements(), MemoryScope::Global, nullptr));
    f.body = top.build();
    return;
  }
  b.shape = nl.shape;
  int64_t elements = b.num_elements();
  f.body = redirect_accesses(f.body, name, name, nl.index);
  change_allocations(f, name, [&](Stmt& a) { a.extent = index_imm(elements); });
}

void align(Func& f, const std::string& tensor, int64_t bytes) {
  Buffer& b = buffer_named(f, tensor);
  if (bytes <= 0 || (bytes & (bytes - 1)) != 0)
    throw ScheduleError("the alignment must be a power of two, found " + std::to_string(bytes));
  if (b.role != BufferRole::Temp) {
    // The harness places every tensor at a 64-byte boundary (runtime/tensor_arena.cpp), no more.
    if (bytes > 64)
      throw ScheduleError("the harness aligns tensors to 64 bytes, so the kernel may not assume " +
                              std::to_string(bytes) + " for '" + tensor + "'",
                          "align(" + tensor + ", 64), or cache_read it into an aligned buffer");
    b.alignment = bytes;
    return;
  }
  if (change_allocations(f, tensor, [&](Stmt& a) { a.alignment = bytes; }) == 0)
    throw ScheduleError("'" + tensor + "' is not stored any more (inlined)");
}

void prefetch(Func& f, const std::string& stage, const std::string& loop, const std::string& tensor,
              int64_t distance, int64_t lines) {
  buffer_named(f, tensor);  // an unknown tensor is an error naming the known ones
  if (distance <= 0) throw ScheduleError("the prefetch distance must be a positive number of elements");
  Stage& st = stage_named(f, stage);
  StageLoop& l = loop_named(st, loop);
  bool reads = false;
  for (const std::string& v : l.vars)
    if (const Stmt* s = find_loop(*f.body, v))
      for_each_expr(*s->body, [&](const Expr& e) { reads |= e.kind == ExprKind::Load && e.name == tensor; });
  if (!reads)
    throw ScheduleError(
        "stage '" + stage + "' reads no '" + tensor + "' under loop '" + loop + "': nothing to prefetch",
        "name the loop of the stage that reads it");
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& s) {
    auto n = std::make_shared<Stmt>(s);
    n->prefetches.push_back({tensor, distance, lines});
    return StmtP(n);
  });
}

void nontemporal(Func& f, const std::string& tensor) {
  Buffer& b = buffer_named(f, tensor);
  if (b.role != BufferRole::Output)
    throw ScheduleError("nontemporal applies to outputs, and '" + tensor + "' is " +
                            (b.role == BufferRole::Input ? "an input" : "a temp, which the kernel reads back"),
                        "name an output written once (streaming stores bypass the caches)");
  b.nontemporal = true;
}

}  // namespace ekb::lower
