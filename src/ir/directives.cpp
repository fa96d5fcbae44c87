#include "ir/directives.h"

namespace ekb::ir {

namespace {

using K = DirectiveArgKind;

DirectiveParam param(std::string_view name, K kind, int of = -1, std::vector<int> becomes = {}) {
  return DirectiveParam{name, kind, of, std::move(becomes)};
}
DirectiveParam keyword(std::string_view name, K kind, std::string_view default_value) {
  DirectiveParam p{name, kind};
  p.default_value = default_value;
  return p;
}
DirectiveParam repeated(std::string_view name, K kind, int of, int min_count) {
  DirectiveParam p{name, kind, of};
  p.repeated = true;
  p.min_count = min_count;
  return p;
}

std::vector<DirectiveInfo> make_table() {
  const LayerKind S = LayerKind::Schedule, M = LayerKind::Memory;
  const DirectiveParam stage = param("stage", K::Stage);
  const DirectiveParam loop = param("loop", K::Loop, 0);
  return {
      {"split", S,
       {stage, param("loop", K::Loop, 0, {3, 4}), param("factor", K::PositiveInt), param("outer", K::NewLoop, 0),
        param("inner", K::NewLoop, 0)},
       {keyword("tail", K::Tail, "guard")}, kAllTargets, "schedule_split",
       "split a loop by a factor into an outer and an inner loop", "was split into {}"},
      {"tile", S,
       {stage, param("x", K::Loop, 0, {5, 7}), param("y", K::Loop, 0, {6, 8}), param("x_factor", K::PositiveInt),
        param("y_factor", K::PositiveInt), param("xo", K::NewLoop, 0), param("yo", K::NewLoop, 0),
        param("xi", K::NewLoop, 0), param("yi", K::NewLoop, 0)},
       {keyword("tail", K::Tail, "guard")}, kAllTargets, "schedule_split",
       "split two loops into tiles: xo, yo over the tiles, xi, yi within one", "was tiled into {}"},
      {"reorder", S, {stage, repeated("loop", K::Loop, 0, 2)}, {}, kAllTargets, "schedule_reorder",
       "put the named loops of a stage in this order, outermost first"},
      {"fuse", S,
       {stage, param("outer", K::Loop, 0, {3}), param("inner", K::Loop, 0, {3}), param("fused", K::NewLoop, 0)}, {},
       kAllTargets, "schedule_fuse", "fuse a loop and the loop directly inside it into one", "was fused into {}"},
      {"parallel", S, {stage, loop}, {}, kCpuTargets, "schedule_loop_kinds",
       "run a loop's iterations on cpu threads", "",
       "parallel runs a loop on cpu threads; it has no meaning on gpu",
       "bind the loop to block.x|y|z or thread.x|y|z"},
      {"vectorize", S, {stage, loop, param("factor", K::PositiveInt)}, {keyword("tail", K::Tail, "peel")}, kAllTargets,
       "schedule_loop_kinds",
       "split a loop by the factor and run the inner loop as SIMD lanes, the remainder peeled (tail=mask: one masked "
       "vector); the loop's name stays with the outer loop"},
      {"unroll", S, {stage, loop, param("factor", K::PositiveInt)}, {}, kAllTargets, "schedule_loop_kinds",
       "split a loop by the factor and unroll the inner loop; the loop's name stays with the outer loop"},
      {"bind", S, {stage, loop, param("axis", K::GpuAxis)}, {}, kGpuTargets, "schedule_bind",
       "run a loop's iterations as gpu blocks or threads (a reduction loop bound to threads: a cooperative "
       "reduction)",
       "", "bind maps loops to GPU blocks and threads; it has no meaning on cpu",
       "move it into a `schedule gpu` block, or use parallel/vectorize"},
      {"compute_at", S, {param("producer", K::Producer), param("consumer", K::Stage), param("loop", K::Loop, 1)}, {},
       kAllTargets, "schedule_compute_at",
       "compute, in each iteration of the consumer's loop, the part of the producer that the iteration reads"},
      {"compute_inline", S, {param("producer", K::InlineProducer)}, {}, kAllTargets, "schedule_compute_at",
       "substitute a temp's definition into every expression that reads it"},
      {"compute_root", S, {param("producer", K::Producer)}, {}, kAllTargets, "schedule_compute_at",
       "compute a producer whole before its consumers (the default placement)"},
      {"rfactor", S, {stage, param("loop", K::Loop, 0, {2}), param("partial", K::PartialStage, 0)}, {}, kAllTargets,
       "schedule_rfactor",
       "reduce over a loop in parallel: a partial-result stage reduces the rest for each value of the new loop, "
       "the stage then reduces over the new loop",
       "was replaced by {} (rfactor)"},
      {"pipeline", S,
       {stage, loop, param("producer", K::Stage), param("producer_loop", K::Loop, 2)}, {}, kCpuTargets,
       "schedule_pipeline",
       "run a stage one iteration of a serial loop late, fused into a producer's loop, so that its stores overlap "
       "the producer's work",
       "", "pipeline overlaps a cpu thread's stores with its computation; it has no meaning on gpu",
       "on gpu, double_buffer a shared cache to overlap loads with compute"},
      {"cache_read", M,
       {param("tensor", K::Tensor), param("consumer", K::Stage), param("loop", K::Loop, 1), param("scope", K::Scope),
        param("buffer", K::NewBuffer)},
       {}, kAllTargets, "memory_cache",
       "copy the part of a tensor that the consumer reads under a loop into a buffer of the scope"},
      {"cache_write", M,
       {stage, loop, param("scope", K::Scope), param("buffer", K::NewBuffer)}, {}, kAllTargets, "memory_cache",
       "accumulate the part of a stage computed under a loop in a buffer of the scope, written back after the loop"},
      {"layout", M, {param("tensor", K::Tensor), param("layout", K::Layout)}, {}, kAllTargets, "memory_layout",
       "store a tensor packed (pack(dim, factor): NCHW -> NCHWc) or with its dimensions permuted (order)"},
      {"double_buffer", M, {param("buffer", K::Tensor)}, {}, kGpuTargets, "memory_double_buffer",
       "give a shared cache two alternating buffers: the next tile's copy overlaps this tile's compute", "",
       "double_buffer applies to gpu shared memory (an asynchronous copy overlapped with compute)",
       "on cpu, remove it: hardware prefetching overlaps the loads of the next tile"},
      {"align", M, {param("tensor", K::Tensor), param("alignment", K::PowerOfTwo)}, {}, kAllTargets, "memory_layout",
       "align a buffer to a number of bytes"},
      {"nontemporal", M, {param("tensor", K::Tensor)}, {}, kCpuTargets, "memory_layout",
       "make an output's vector stores streaming stores past the caches", "",
       "nontemporal applies to cpu stores (streaming stores past the caches)",
       "on gpu, remove it: stores are written back from L2 without being read first"},
      {"prefetch", M, {stage, loop, param("tensor", K::Tensor), param("distance", K::PositiveInt)},
       {keyword("lines", K::CacheLines, "the lines the iteration's reads span")}, kCpuTargets, "memory_layout",
       "start each iteration of a loop with software prefetches of its reads of a tensor, distance elements on",
       "", "prefetch applies to cpu loops (software prefetches into the caches)",
       "on gpu, cache_read the tile into shared memory instead"},
  };
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

const std::vector<DirectiveInfo>& directive_table() {
  static const std::vector<DirectiveInfo> table = make_table();
  return table;
}

const DirectiveInfo* find_directive(std::string_view verb) {
  for (const DirectiveInfo& d : directive_table())
    if (d.verb == verb) return &d;
  return nullptr;
}

std::vector<std::string> directive_verbs(LayerKind layer) {
  std::vector<std::string> out;
  for (const DirectiveInfo& d : directive_table())
    if (d.layer == layer) out.emplace_back(d.verb);
  return out;
}

std::string_view layer_name(LayerKind layer) { return layer == LayerKind::Schedule ? "schedule" : "memory"; }

std::string_view arg_kind_name(DirectiveArgKind kind) {
  switch (kind) {
    case K::Stage: return "stage";
    case K::Loop: return "loop";
    case K::NewLoop: return "new_loop";
    case K::PartialStage: return "partial_stage";
    case K::Producer: return "producer";
    case K::InlineProducer: return "inline_producer";
    case K::Tensor: return "tensor";
    case K::NewBuffer: return "new_buffer";
    case K::PositiveInt: return "positive_int";
    case K::PowerOfTwo: return "power_of_two";
    case K::Scope: return "scope";
    case K::GpuAxis: return "gpu_axis";
    case K::Layout: return "layout";
    case K::Tail: return "tail";
    case K::CacheLines: return "cache_lines";
  }
  return "?";
}

std::string_view arg_kind_doc(DirectiveArgKind kind) {
  switch (kind) {
    case K::Stage:
      return "a stage: a tensor's pure definition (C), one of its updates (C.update(0)), an rfactor stage or a "
             "cache's copy nests (named after the cache)";
    case K::Loop: return "a loop of the stage argument, by its current name";
    case K::NewLoop: return "a new name for a loop the directive creates";
    case K::PartialStage: return "a new loop name that also names the partial-result stage rfactor creates";
    case K::Producer: return "an output or temp as a whole (not one update), a cache or an rfactor stage";
    case K::InlineProducer: return "a temp defined by its pure definition alone (no updates)";
    case K::Tensor: return "an input, output or temp, or a cache buffer";
    case K::NewBuffer: return "a new name for the buffer the directive creates";
    case K::PositiveInt: return "a positive integer";
    case K::PowerOfTwo: return "a positive power of two";
    case K::Scope: return "where a cache lives (shared: a gpu block's memory; local: registers, at most 2 KiB; tile: a cpu buffer)";
    case K::GpuAxis: return "a gpu block or thread index";
    case K::Layout: return "pack(dim, factor) or order(dims...)";
    case K::Tail: return "how a split handles the iterations past the last whole tile";
    case K::CacheLines: return "a whole number of cache lines from 1 to 64";
  }
  return "?";
}

const std::vector<std::string>& arg_kind_choices(DirectiveArgKind kind) {
  static const std::vector<std::string> scopes{"global", "shared", "local", "tile"};
  static const std::vector<std::string> axes{"block.x", "block.y", "block.z", "thread.x", "thread.y", "thread.z"};
  static const std::vector<std::string> tails{"guard", "shift_inwards", "round_up", "peel", "mask"};
  static const std::vector<std::string> none;
  switch (kind) {
    case K::Scope: return scopes;
    case K::GpuAxis: return axes;
    case K::Tail: return tails;
    default: return none;
  }
}

bool creates_name(DirectiveArgKind kind) {
  return kind == K::NewLoop || kind == K::PartialStage || kind == K::NewBuffer;
}

std::string directive_signature(const DirectiveInfo& d) {
  std::string out = std::string(d.verb) + "(";
  for (size_t i = 0; i < d.params.size(); ++i) {
    out += (i ? ", " : "") + std::string(d.params[i].name);
    if (d.params[i].repeated) out += ", ...";
  }
  for (const DirectiveParam& k : d.keywords) {
    const auto& choices = arg_kind_choices(k.kind);
    out += "[, " + std::string(k.name) + "=" + (choices.empty() ? "N" : std::string(k.default_value)) + "]";
  }
  return out + ")";
}

std::string directive_table_markdown() {
  std::string out =
      "| directive | layer | targets | applied by | does |\n"
      "|---|---|---|---|---|\n";
  for (const DirectiveInfo& d : directive_table())
    out += "| `" + markdown_cell(directive_signature(d)) + "` | " + std::string(layer_name(d.layer)) + " | " +
           (d.targets == kAllTargets ? std::string("all") : target_set_text(d.targets)) + " | `" +
           std::string(d.pass) + "` | " + markdown_cell(d.doc) + " |\n";
  out +=
      "\n"
      "| argument kind | is |\n"
      "|---|---|\n";
  for (int k = 0; k <= static_cast<int>(K::CacheLines); ++k) {
    const auto kind = static_cast<DirectiveArgKind>(k);
    std::string choices;
    for (const std::string& c : arg_kind_choices(kind)) choices += (choices.empty() ? ": " : ", ") + c;
    out += "| `" + std::string(arg_kind_name(kind)) + "` | " + markdown_cell(arg_kind_doc(kind)) + choices + " |\n";
  }
  return out;
}

bool layer_applies(const LayerBlock& b, Target target) {
  const std::optional<TargetSet> targets = parse_layer_target(b.target);
  return targets && targets->contains(target);
}

bool has_layers_for(const Module& m, Target target) {
  for (const LayerBlock& b : m.layers)
    if (layer_applies(b, target) && !b.directives.empty()) return true;
  return false;
}

}  // namespace ekb::ir
