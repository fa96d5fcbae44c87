#include "lower/schedule_split.h"

#include <algorithm>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/schedule_loops.h"
#include "lower/schedule_reorder.h"

namespace ekb::lower {

using namespace lir;

namespace {

ExprP idx(int64_t v) { return index_imm(v); }
ExprP add(ExprP a, ExprP b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
ExprP mul(ExprP a, ExprP b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
ExprP sub(ExprP a, ExprP b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }

// The For variables one split creates in one copy of the loop.
struct SplitVars {
  std::string outer, inner, tail;  // tail: the peeled remainder loop, empty when there is none
};

// Why `tail` cannot split `loop` by `factor` ("" when it can).
std::string tail_problem(const Stmt& loop, const std::string& loop_name, int64_t factor, TailStrategy tail) {
  std::optional<int64_t> n = constant_extent(loop);
  if (tail == TailStrategy::ShiftInwards) {
    if (!n) return "shift_inwards needs a constant extent, and loop '" + loop_name + "' has extent " +
                   to_string(*simplify(loop.extent));
    if (*n % factor == 0) return "";
    if (*n < factor)
      return "shift_inwards cannot shift a block of " + std::to_string(factor) + " into loop '" + loop_name +
             "', which has only " + std::to_string(*n) + " iterations";
    std::string why = idempotence_problem(loop);
    if (!why.empty()) return "shift_inwards runs some iterations of loop '" + loop_name + "' twice, but " + why;
  }
  if (tail == TailStrategy::RoundUp && !(n && *n % factor == 0)) {
    if (!n) return "round_up needs a constant extent divisible by the factor";
    return "round_up would run loop '" + loop_name + "' to " + std::to_string((*n + factor - 1) / factor * factor) +
           ", past its extent " + std::to_string(*n) + ", and access the tensors out of bounds";
  }
  return "";
}

// One copy of the loop, split. The outer loop keeps the original's kind.
StmtP split_one(const Stmt& loop, int64_t factor, TailStrategy tail, const SplitVars& v, ForKind inner_kind) {
  ExprP extent = simplify(loop.extent);
  std::optional<int64_t> n = constant_extent(loop);
  bool divides = n && *n % factor == 0;
  ExprP vo = var(v.outer, ScalarType::Index), vi = var(v.inner, ScalarType::Index);
  ExprP F = idx(factor);
  ExprP start = mul(vo, F);
  auto nest = [&](ExprP outer_extent, ExprP block_start) {
    StmtP body = substitute(loop.body, loop.name, add(loop.min, add(block_start, vi)));
    // A masked tail is the guard's loop nest (so later directives see one nest); its guard, on
    // vectorized lanes, is printed as a mask.
    if ((tail == TailStrategy::Guard || tail == TailStrategy::Mask) && !divides)
      body = make_if(binary(BinOp::Lt, add(start, vi), extent), body);
    StmtP inner = make_for(v.inner, idx(0), F, body, inner_kind);
    return make_for(v.outer, idx(0), simplify(outer_extent), inner, loop.for_kind);
  };
  ExprP blocks = binary(BinOp::Div, add(extent, idx(factor - 1)), F);  // ceil, floor division
  switch (tail) {
    case TailStrategy::Guard:
    case TailStrategy::Mask:
    case TailStrategy::RoundUp:
      return nest(blocks, start);
    case TailStrategy::ShiftInwards:
      return nest(blocks, divides ? start : binary(BinOp::Min, start, sub(extent, F)));
    case TailStrategy::Peel: {
      ExprP total = n ? extent : binary(BinOp::Max, extent, idx(0));  // an empty range peels nothing
      ExprP full = binary(BinOp::Div, total, F);
      StmtP main = nest(full, start);
      if (v.tail.empty()) return main;
      ExprP rest_start = mul(full, F);
      StmtP rest_body = substitute(loop.body, loop.name, add(loop.min, add(rest_start, var(v.tail, ScalarType::Index))));
      return make_block({main, make_for(v.tail, idx(0), simplify(sub(total, rest_start)), rest_body, inner_kind)});
    }
  }
  return nullptr;
}

// Splits every copy of stage loop `index` of `st`; the outer loop is named `outer`, the inner
// `inner` (the stage's loop table is updated).
void split_loop(Func& f, Stage& st, size_t index, int64_t factor, const std::string& outer, const std::string& inner,
                TailStrategy tail, ForKind inner_kind) {
  StageLoop old = st.loops[index];
  for (const std::string& v : old.vars)
    if (const Stmt* l = find_loop(*f.body, v)) {
      std::string why = tail_problem(*l, old.name, factor, tail);
      if (!why.empty()) throw ScheduleError(why, "use tail=guard or tail=peel");
    }
  StageLoop o{outer, old.role, {}, old.recomputes, old.masked_tail}, i{inner, old.role, {}, old.recomputes, old.masked_tail};
  if (tail == TailStrategy::ShiftInwards) o.recomputes = i.recomputes = true;
  if (tail == TailStrategy::Mask && inner_kind == ForKind::Serial) i.masked_tail = true;
  // Loop names made by vectorize/unroll ("x.vector") are not C identifiers; their variables are.
  auto var_base = [](std::string n) {
    std::replace(n.begin(), n.end(), '.', '_');
    return n;
  };
  f.body = rewrite_loops(f.body, old.vars, [&](const Stmt& l) {
    std::optional<int64_t> n = constant_extent(l);
    SplitVars sv{f.fresh_name(var_base(outer)), f.fresh_name(var_base(inner)), ""};
    if (tail == TailStrategy::Peel && !(n && *n % factor == 0)) sv.tail = f.fresh_name(var_base(inner));
    o.vars.push_back(sv.outer);
    i.vars.push_back(sv.inner);
    if (!sv.tail.empty()) i.vars.push_back(sv.tail);
    return split_one(l, factor, tail, sv, inner_kind);
  });
  st.loops[index] = o;
  st.loops.insert(st.loops.begin() + static_cast<std::ptrdiff_t>(index) + 1, i);
}

size_t index_of(Stage& st, const std::string& loop) {
  StageLoop* l = &loop_named(st, loop);
  return static_cast<size_t>(l - st.loops.data());
}

}  // namespace

std::optional<TailStrategy> tail_strategy(std::string_view name) {
  if (name == "guard") return TailStrategy::Guard;
  if (name == "shift_inwards") return TailStrategy::ShiftInwards;
  if (name == "round_up") return TailStrategy::RoundUp;
  if (name == "peel") return TailStrategy::Peel;
  if (name == "mask") return TailStrategy::Mask;
  return std::nullopt;
}

void split(Func& f, const std::string& stage, const std::string& loop, int64_t factor, const std::string& outer,
           const std::string& inner, TailStrategy tail) {
  if (factor <= 0) throw ScheduleError("the factor must be positive");
  Stage& st = stage_named(f, stage);
  split_loop(f, st, index_of(st, loop), factor, outer, inner, tail, ForKind::Serial);
}

void split_for_kind(Func& f, Stage& st, StageLoop& loop, int64_t factor, const std::string& inner,
                    ForKind inner_kind, TailStrategy tail) {
  bool all_short = true;
  for (const std::string& v : loop.vars) {
    const Stmt* l = find_loop(*f.body, v);
    std::optional<int64_t> n = l ? constant_extent(*l) : std::nullopt;
    // A masked tail makes a shorter loop one masked block of `factor` lanes.
    all_short &= n && (tail == TailStrategy::Mask ? *n == factor : *n <= factor);
  }
  if (all_short) {
    f.body = rewrite_loops(f.body, loop.vars, [&](const Stmt& l) {
      auto n = std::make_shared<Stmt>(l);
      n->for_kind = inner_kind;
      return StmtP(n);
    });
    return;
  }
  // The outer loop keeps the name, so later directives still find it.
  size_t index = static_cast<size_t>(&loop - st.loops.data());
  std::string name = loop.name;
  split_loop(f, st, index, factor, name, inner, tail, inner_kind);
}

std::string masked_tail_problem(const Func& f) {
  for (const Stage& st : f.stages)
    for (const StageLoop& l : st.loops) {
      if (!l.masked_tail) continue;
      for (const std::string& v : l.vars) {
        const Stmt* loop = find_loop(*f.body, v);
        bool vectorized = false;
        if (loop) for_each_stmt(*loop, [&](const Stmt& s) { vectorized |= s.kind == StmtKind::For && s.for_kind == ForKind::Vectorized; });
        if (loop && !vectorized)
          return "loop '" + l.name + "' of '" + st.name +
                 "' was split with tail=mask, but neither it nor a loop inside it is vectorized: its last block "
                 "would run as guarded scalar iterations";
      }
    }
  return "";
}

void tile(Func& f, const std::string& stage, const std::string& x, const std::string& y, int64_t fx, int64_t fy,
          const std::string& xo, const std::string& yo, const std::string& xi, const std::string& yi,
          TailStrategy tail) {
  split(f, stage, x, fx, xo, xi, tail);
  split(f, stage, y, fy, yo, yi, tail);
  reorder(f, stage, {xo, yo, xi, yi});
}

}  // namespace ekb::lower
