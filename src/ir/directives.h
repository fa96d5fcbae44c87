// The schedule and memory directives (docs/IR.md, "Schedule and memory layers"), one row each:
// the verb, its layer, its arguments and their kinds, the targets it has a meaning on, the lowering
// pass that applies it and a one-line doc. The verifier checks directives against this table
// (ir/layers.cpp), apply_schedule dispatches through it (lower/apply_schedule.cpp),
// `ekb directives [--json]` prints it and docs/IR.md's directive table is generated from it.
// Adding a directive is one row here and one pass in src/lower/ (docs/COMPILER.md).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ast.h"
#include "ir/target.h"

namespace ekb::ir {

// What one argument of a directive is. The verifier checks each kind; a tool choosing directives
// (an agent's action space) reads what it may write from the kind.
enum class DirectiveArgKind : uint8_t {
  Stage,           // a stage: a tensor's pure definition (C), an update (C.update(0)), an rfactor
                   // stage or a cache's copy nests (named after the cache)
  Loop,            // a loop of stage argument `of`, by its current name
  NewLoop,         // a fresh name for a loop the directive creates in stage argument `of`
  PartialStage,    // a fresh loop of stage argument `of` that also names the partial-result stage
  Producer,        // a computed tensor as a whole (not one update), a cache or an rfactor stage
  InlineProducer,  // a temp defined by its pure definition alone
  Tensor,          // a tensor or a cache buffer
  NewBuffer,       // a fresh name for the buffer the directive creates
  PositiveInt,
  PowerOfTwo,      // a positive power of two
  Scope,           // a memory scope
  GpuAxis,         // a block or thread index
  Layout,          // pack(dim, factor) or order(dims...)
  Tail,            // a tail strategy of split/tile
  CacheLines,      // a whole number from 1 to 64
};

struct DirectiveParam {
  std::string_view name;
  DirectiveArgKind kind;
  int of = -1;               // Loop, NewLoop, PartialStage: the index of the Stage argument they belong to
  std::vector<int> becomes;  // Loop: the NewLoop/PartialStage arguments that replace it, at its place
                             // (empty: the loop stays)
  bool repeated = false;     // the last parameter, given `min_count` or more times (reorder's loops)
  int min_count = 1;
  std::string_view default_value;  // a keyword parameter's value when it is not given
};

struct DirectiveInfo {
  std::string_view verb;
  LayerKind layer;
  std::vector<DirectiveParam> params;    // positional, in order
  std::vector<DirectiveParam> keywords;  // optional key=value arguments
  TargetSet targets;                     // where it has a meaning
  std::string_view pass;                 // the lowering pass that applies it (src/lower/PASS.h)
  std::string_view doc;                  // one line
  // What became of a loop it consumed, for a later directive that names it; {} is the new loops.
  std::string_view replaced_as;
  // Why it has no meaning on the other targets, and what to do instead (when targets is not all).
  std::string_view off_target;
  std::string_view off_target_hint;

  // Its positional arguments: exactly min_arguments(), or at least that many when variadic().
  bool variadic() const { return !params.empty() && params.back().repeated; }
  size_t min_arguments() const {
    return variadic() ? params.size() - 1 + static_cast<size_t>(params.back().min_count) : params.size();
  }
};

// Every directive, schedule layer first, in the order docs/IR.md lists them.
const std::vector<DirectiveInfo>& directive_table();
const DirectiveInfo* find_directive(std::string_view verb);
// The verbs of one layer, in table order.
std::vector<std::string> directive_verbs(LayerKind layer);

std::string_view layer_name(LayerKind layer);          // "schedule", "memory"
std::string_view arg_kind_name(DirectiveArgKind kind);  // "stage", "new_loop", ...
std::string_view arg_kind_doc(DirectiveArgKind kind);   // one line
// The values a kind allows when they are a fixed list (scope, gpu_axis, tail); empty otherwise.
const std::vector<std::string>& arg_kind_choices(DirectiveArgKind kind);
// Whether a name argument of this kind must be new (a loop, stage or buffer the directive creates).
bool creates_name(DirectiveArgKind kind);

// "split(stage, loop, factor, outer, inner[, tail=guard])".
std::string directive_signature(const DirectiveInfo& d);
// docs/IR.md's directive and argument kind tables (Markdown), as `ekb directives --markdown` prints.
std::string directive_table_markdown();

// Whether a schedule or memory block is applied when lowering for `target`: a block without a
// target applies everywhere, `gpu` to every gpu target (cuda, opencl).
bool layer_applies(const LayerBlock& b, Target target);
// Whether the module has directives in blocks that apply to `target`.
bool has_layers_for(const Module& m, Target target);

}  // namespace ekb::ir
