// The schedule and memory layers: targets, verbs, argument counts and kinds, and the loop names
// each directive may use. Directives apply in order, so the set of loops of each stage is
// replayed: split/tile/fuse/rfactor consume loops and create new ones, and cache_read/cache_write
// create buffers. Blocks of one target share that state (a memory block names the loops its
// schedule block created); different targets are independent.
#include <algorithm>
#include <array>

#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {

constexpr std::array<std::string_view, 13> kScheduleVerbs{
    "split",  "tile",       "reorder",        "fuse",         "parallel", "vectorize", "unroll",
    "bind",   "compute_at", "compute_inline", "compute_root", "rfactor",  "pipeline"};
constexpr std::array<std::string_view, 7> kMemoryVerbs{"cache_read", "cache_write", "layout",     "double_buffer",
                                                       "align",      "nontemporal", "prefetch"};
constexpr std::array<std::string_view, 4> kTails{"guard", "shift_inwards", "round_up", "peel"};
constexpr std::array<std::string_view, 4> kScopes{"global", "shared", "local", "tile"};
constexpr std::array<std::string_view, 6> kBindTargets{"block.x",  "block.y",  "block.z",
                                                       "thread.x", "thread.y", "thread.z"};

template <size_t N>
bool one_of(const std::array<std::string_view, N>& xs, const std::string& s) {
  return std::find(xs.begin(), xs.end(), s) != xs.end();
}
template <size_t N>
std::vector<std::string> names_of(const std::array<std::string_view, N>& xs) {
  return {xs.begin(), xs.end()};
}
template <size_t N>
std::string list_text(const std::array<std::string_view, N>& xs) {
  std::string out;
  for (size_t i = 0; i < N; ++i) out += (i ? (i + 1 == N ? " or " : ", ") : "") + std::string(xs[i]);
  return out;
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + xs[i];
  return out;
}

std::string arg_text(const DirectiveArg& a) {
  switch (a.kind) {
    case DirectiveArg::Kind::Int: return std::to_string(a.int_value);
    case DirectiveArg::Kind::Name: return a.text;
    case DirectiveArg::Kind::Call: return a.text + "(...)";
  }
  return "?";
}

struct Stage {
  std::string name;                // "C", "C.update(0)", or an rfactor stage's name
  std::string tensor;              // the tensor it computes
  std::vector<std::string> loops;  // in order, outermost first
  std::map<std::string, std::string> gone;  // consumed loop -> what happened to it
};

struct TargetState {
  std::map<std::string, Stage> stages;     // "C", "C.update(0)", rfactor stages
  std::map<std::string, size_t> buffers;   // cache buffers -> rank
};

class LayerChecker {
 public:
  LayerChecker(const Module& m, const PatternFacts& f, Diagnostics& d)
      : p_(m.pattern), m_(m), facts_(f), diags_(d) {}

  void run() {
    for (const auto& b : m_.layers) {
      std::string layer = b.kind == LayerKind::Schedule ? "schedule" : "memory";
      if (!b.target.empty() && b.target != "cpu" && b.target != "gpu") {
        std::string hint = did_you_mean(b.target, {"cpu", "gpu"});
        error(b.loc, "unknown target '" + b.target + "' for the " + layer + " block",
              hint.empty() ? "the targets are cpu and gpu" : hint);
      }
      TargetState& st = states_[b.target];
      for (const auto& d : b.directives) check_directive(b, d, st);
    }
  }

 private:
  void error(SourceLoc loc, std::string msg, std::string hint = {}) {
    diags_.error(loc, std::move(msg), std::move(hint));
  }

  void check_directive(const LayerBlock& b, const Directive& d, TargetState& st) {
    bool sched = one_of(kScheduleVerbs, d.verb), mem = one_of(kMemoryVerbs, d.verb);
    if (b.kind == LayerKind::Schedule && mem) {
      error(d.loc, "'" + d.verb + "' is a memory directive, not a schedule one",
            "move it into a `memory` block");
      return;
    }
    if (b.kind == LayerKind::Memory && sched) {
      error(d.loc, "'" + d.verb + "' is a schedule directive, not a memory one",
            "move it into a `schedule` block");
      return;
    }
    if (!sched && !mem) {
      std::vector<std::string> verbs = b.kind == LayerKind::Schedule ? names_of(kScheduleVerbs)
                                                                     : names_of(kMemoryVerbs);
      std::string hint = did_you_mean(d.verb, verbs);
      error(d.loc, "unknown directive '" + d.verb + "'",
            hint.empty() ? "the directives are " + join(verbs) : hint);
      return;
    }
    pos_.clear();
    std::string tail;
    for (const auto& a : d.args) {
      if (a.key.empty()) {
        pos_.push_back(&a);
      } else if (a.key == "tail" && (d.verb == "split" || d.verb == "tile")) {
        if (!tail.empty()) error(a.loc, "'tail' is given twice");
        tail = arg_text(a);
        if (a.kind != DirectiveArg::Kind::Name || !one_of(kTails, a.text)) {
          std::string hint = did_you_mean(a.text, names_of(kTails));
          error(a.loc, "unknown tail strategy '" + arg_text(a) + "'",
                hint.empty() ? "the tail strategies are " + list_text(kTails) : hint);
        }
      } else if (a.key == "lines" && d.verb == "prefetch") {
        if (a.kind != DirectiveArg::Kind::Int || a.int_value < 1 || a.int_value > 64)
          error(a.loc, "the lines of a prefetch must be a whole number from 1 to 64, found " + arg_text(a));
      } else {
        error(a.loc, "'" + d.verb + "' has no argument '" + a.key + "'",
              d.verb == "split" || d.verb == "tile" ? "the only keyword argument is tail=..."
              : d.verb == "prefetch"                ? "the only keyword argument is lines=N"
                                                    : "it takes no keyword arguments");
      }
    }
    const std::string& v = d.verb;
    if (v == "split") return split(d, st);
    if (v == "tile") return tile(d, st);
    if (v == "reorder") return reorder(d, st);
    if (v == "fuse") return fuse(d, st);
    if (v == "parallel") return loop_only(d, st, 2);
    if (v == "vectorize" || v == "unroll") {
      if (!count(d, 3, "(stage, loop, factor)")) return;
      Stage* s = stage_arg(*pos_[0], st);
      if (s) loop_arg(*s, *pos_[1]);
      positive_int(*pos_[2], "the factor of '" + v + "'");
      return;
    }
    if (v == "bind") {
      if (!count(d, 3, "(stage, loop, block.x|y|z or thread.x|y|z)")) return;
      Stage* s = stage_arg(*pos_[0], st);
      if (s) loop_arg(*s, *pos_[1]);
      const DirectiveArg& t = *pos_[2];
      if (t.kind != DirectiveArg::Kind::Name || !one_of(kBindTargets, t.text)) {
        std::string hint = did_you_mean(arg_text(t), names_of(kBindTargets));
        error(t.loc, "unknown bind target '" + arg_text(t) + "'",
              hint.empty() ? "the targets are " + list_text(kBindTargets) : hint);
      }
      return;
    }
    if (v == "compute_at") return compute_at(d, st);
    if (v == "compute_inline" || v == "compute_root") {
      if (!count(d, 1, "(tensor)")) return;
      const TensorDecl* t = producer_arg(*pos_[0], st);
      if (t && v == "compute_inline") {
        if (t->role == TensorRole::Output)
          error(pos_[0]->loc, "output '" + t->name + "' cannot be inlined",
                "outputs are stored; only temps can be inlined");
        else if (facts_.updates.count(t->name))
          error(pos_[0]->loc, "temp '" + t->name + "' has updates and cannot be inlined",
                "only a temp defined by its pure definition alone can be inlined");
      }
      return;
    }
    if (v == "rfactor") return rfactor(d, st);
    if (v == "pipeline") {
      if (!count(d, 4, "(stage, loop, producer stage, producer loop)")) return;
      if (Stage* s = stage_arg(*pos_[0], st)) loop_arg(*s, *pos_[1]);
      if (Stage* p = stage_arg(*pos_[2], st)) loop_arg(*p, *pos_[3]);
      return;
    }
    if (v == "cache_read") return cache_read(d, st);
    if (v == "cache_write") return cache_write(d, st);
    if (v == "layout") return layout(d, st);
    if (v == "double_buffer" || v == "nontemporal") {
      if (count(d, 1, v == "nontemporal" ? "(tensor)" : "(buffer)")) tensor_arg(*pos_[0], st);
      return;
    }
    if (v == "prefetch") {
      if (!count(d, 4, "(stage, loop, tensor, distance)")) return;
      tensor_arg(*pos_[2], st);
      positive_int(*pos_[3], "the prefetch distance (elements)");
      return;
    }
    if (v == "align") {
      if (!count(d, 2, "(tensor, bytes)")) return;
      tensor_arg(*pos_[0], st);
      auto n = positive_int(*pos_[1], "the alignment");
      if (n && (*n & (*n - 1)) != 0)
        error(pos_[1]->loc, "the alignment must be a power of two, found " + std::to_string(*n));
    }
  }

  // ---- argument helpers ----
  bool count(const Directive& d, size_t n, std::string_view shape) {
    if (pos_.size() == n) return true;
    error(d.loc,
          "'" + d.verb + "' takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") +
              ", found " + std::to_string(pos_.size()),
          "write " + d.verb + std::string(shape));
    return false;
  }

  std::vector<std::string> stage_names() const {
    std::vector<std::string> out;
    for (const auto& t : p_.tensors)
      if (t.role != TensorRole::Input) out.push_back(t.name);
    return out;
  }

  // A tensor computed by the pattern (output or temp); nullptr after reporting why not.
  const TensorDecl* computed_tensor(const std::string& name, SourceLoc loc, bool quiet_unknown) {
    const TensorDecl* t = p_.find_tensor(name);
    if (!t) {
      if (!quiet_unknown) {
        std::string hint = did_you_mean(name, stage_names());
        error(loc, "unknown stage '" + name + "'",
              hint.empty() ? "stages are the outputs and temps: " + join(stage_names()) : hint);
      }
      return nullptr;
    }
    if (t->role == TensorRole::Input) {
      error(loc, "'" + name + "' is an input, not a stage", "only outputs and temps are computed");
      return nullptr;
    }
    return t;
  }

  Stage* stage_arg(const DirectiveArg& a, TargetState& st) {
    std::string key, tensor;
    size_t update = 0;
    bool is_update = false;
    if (a.kind == DirectiveArg::Kind::Name && a.text.find('.') == std::string::npos) {
      key = tensor = a.text;
    } else if (a.kind == DirectiveArg::Kind::Call && a.text.size() > 7 &&
               a.text.compare(a.text.size() - 7, 7, ".update") == 0 && a.args.size() == 1 &&
               a.args[0].kind == DirectiveArg::Kind::Int && a.args[0].key.empty()) {
      tensor = a.text.substr(0, a.text.size() - 7);
      if (a.args[0].int_value < 0) {
        error(a.loc, "update numbers start at 0, found " + std::to_string(a.args[0].int_value));
        return nullptr;
      }
      update = static_cast<size_t>(a.args[0].int_value);
      is_update = true;
      key = tensor + ".update(" + std::to_string(update) + ")";
    } else {
      error(a.loc, "expected a stage, found '" + arg_text(a) + "'",
            "name a pure definition by its tensor (C) and an update as C.update(0)");
      return nullptr;
    }
    auto it = st.stages.find(key);
    if (it != st.stages.end()) return &it->second;
    const TensorDecl* t = computed_tensor(tensor, a.loc, false);
    if (!t) return nullptr;
    if (!is_update) {
      auto pure = facts_.pure.find(tensor);
      if (pure == facts_.pure.end()) return nullptr;  // reported by the pattern checks
      return &(st.stages[key] = Stage{key, tensor, pure->second.loops, {}});
    }
    auto ups = facts_.updates.find(tensor);
    size_t n = ups == facts_.updates.end() ? 0 : ups->second.size();
    if (update >= n) {
      error(a.loc,
            "'" + tensor + "' has " +
                (n == 0 ? std::string("no updates") : std::to_string(n) + (n == 1 ? " update" : " updates")) +
                "; there is no update(" + std::to_string(update) + ")",
            n == 0 ? "" : "updates are numbered from 0 in program order");
      return nullptr;
    }
    return &(st.stages[key] = Stage{key, tensor, ups->second[update].loops, {}});
  }

  // What compute_at/inline/root place: a computed tensor (not one update), or a cache buffer or
  // rfactor stage an earlier directive created. Returns the tensor when it is a declared one.
  const TensorDecl* producer_arg(const DirectiveArg& a, const TargetState& st) {
    if (a.kind != DirectiveArg::Kind::Name || a.text.find('.') != std::string::npos) {
      error(a.loc, "expected a tensor, found '" + arg_text(a) + "'",
            "compute_at, compute_inline and compute_root place a whole tensor, not one update");
      return nullptr;
    }
    if (!p_.find_tensor(a.text) && (st.buffers.count(a.text) || st.stages.count(a.text))) return nullptr;
    return computed_tensor(a.text, a.loc, false);
  }

  bool plain_name(const DirectiveArg& a, std::string_view what) {
    if (a.kind == DirectiveArg::Kind::Name && a.text.find('.') == std::string::npos) return true;
    error(a.loc, "expected " + std::string(what) + ", found '" + arg_text(a) + "'");
    return false;
  }

  bool loop_arg(Stage& s, const DirectiveArg& a) {
    if (!plain_name(a, "a loop name")) return false;
    if (std::find(s.loops.begin(), s.loops.end(), a.text) != s.loops.end()) return true;
    auto gone = s.gone.find(a.text);
    if (gone != s.gone.end()) {
      error(a.loc, "loop '" + a.text + "' of stage '" + stage_label(s) + "' " + gone->second,
            "use the loops it became");
      return false;
    }
    std::string hint = did_you_mean(a.text, s.loops);
    error(a.loc, "stage '" + stage_label(s) + "' has no loop '" + a.text + "'",
          hint.empty() ? "its loops are " + join(s.loops) : hint);
    return false;
  }

  // A name for a loop the directive creates; `fresh` holds the others it creates.
  bool new_loop_arg(Stage& s, const DirectiveArg& a, std::vector<std::string>& fresh) {
    if (!plain_name(a, "a new loop name")) return false;
    if (std::find(s.loops.begin(), s.loops.end(), a.text) != s.loops.end() ||
        std::find(fresh.begin(), fresh.end(), a.text) != fresh.end()) {
      error(a.loc, "'" + a.text + "' already names a loop of stage '" + stage_label(s) + "'",
            "choose a new name");
      return false;
    }
    fresh.push_back(a.text);
    return true;
  }

  std::optional<int64_t> positive_int(const DirectiveArg& a, const std::string& what) {
    if (a.kind == DirectiveArg::Kind::Int && a.int_value > 0) return a.int_value;
    error(a.loc, what + " must be a positive integer, found '" + arg_text(a) + "'");
    return std::nullopt;
  }

  // A tensor or cache buffer; returns its rank.
  std::optional<size_t> tensor_arg(const DirectiveArg& a, TargetState& st) {
    if (!plain_name(a, "a tensor or buffer")) return std::nullopt;
    if (const TensorDecl* t = p_.find_tensor(a.text)) return t->shape.size();
    auto b = st.buffers.find(a.text);
    if (b != st.buffers.end()) return b->second;
    std::vector<std::string> cands;
    for (const auto& t : p_.tensors) cands.push_back(t.name);
    for (const auto& [n, r] : st.buffers) cands.push_back(n);
    error(a.loc, "unknown tensor or buffer '" + a.text + "'", did_you_mean(a.text, cands));
    return std::nullopt;
  }

  void new_buffer_arg(const DirectiveArg& a, TargetState& st, std::optional<size_t> rank) {
    if (!plain_name(a, "a new buffer name")) return;
    bool taken = p_.find_tensor(a.text) || st.buffers.count(a.text);
    for (const auto& x : p_.params) taken |= x.name == a.text;
    for (const auto& x : p_.lets) taken |= x.name == a.text;
    for (const auto& x : p_.type_params) taken |= x.name == a.text;
    if (taken) {
      error(a.loc, "'" + a.text + "' is already declared", "choose a new buffer name");
      return;
    }
    st.buffers[a.text] = rank.value_or(0);
    // The cache's copy nests form a stage named after it, one loop per dimension (c0, c1, ...),
    // which later directives schedule like any other (memory_cache.h).
    if (rank) {
      Stage copy{a.text, a.text, {}, {}};
      for (size_t d = 0; d < *rank; ++d) copy.loops.push_back("c" + std::to_string(d));
      st.stages[a.text] = std::move(copy);
    }
  }

  void scope_arg(const DirectiveArg& a) {
    if (a.kind == DirectiveArg::Kind::Name && one_of(kScopes, a.text)) return;
    std::string hint = did_you_mean(arg_text(a), names_of(kScopes));
    error(a.loc, "unknown memory scope '" + arg_text(a) + "'",
          hint.empty() ? "the scopes are " + list_text(kScopes) : hint);
  }

  static const std::string& stage_label(const Stage& s) { return s.name; }

  // Replaces `consumed` by `created` (at the first consumed loop's position), remembering why.
  void replace_loops(Stage& s, const std::vector<std::string>& consumed,
                     const std::vector<std::string>& created, const std::string& why) {
    auto pos = std::find(s.loops.begin(), s.loops.end(), consumed.front());
    size_t at = static_cast<size_t>(pos - s.loops.begin());
    for (const auto& c : consumed) {
      s.loops.erase(std::remove(s.loops.begin(), s.loops.end(), c), s.loops.end());
      s.gone[c] = why;
    }
    at = std::min(at, s.loops.size());
    s.loops.insert(s.loops.begin() + static_cast<std::ptrdiff_t>(at), created.begin(), created.end());
    for (const auto& c : created) s.gone.erase(c);
  }

  std::string by_line(const Directive& d) const {
    return "by the directive at line " + std::to_string(d.loc.line);
  }

  // ---- verbs ----
  void split(const Directive& d, TargetState& st) {
    if (!count(d, 5, "(stage, loop, factor, outer, inner[, tail=guard])")) return;
    Stage* s = stage_arg(*pos_[0], st);
    positive_int(*pos_[2], "the factor of 'split'");
    if (!s || !loop_arg(*s, *pos_[1])) return;
    std::vector<std::string> fresh;
    if (!new_loop_arg(*s, *pos_[3], fresh) || !new_loop_arg(*s, *pos_[4], fresh)) return;
    replace_loops(*s, {pos_[1]->text}, fresh,
                  "was split into " + join(fresh) + " " + by_line(d));
  }

  void tile(const Directive& d, TargetState& st) {
    if (!count(d, 9, "(stage, x, y, fx, fy, xo, yo, xi, yi[, tail=guard])")) return;
    Stage* s = stage_arg(*pos_[0], st);
    positive_int(*pos_[3], "the x factor of 'tile'");
    positive_int(*pos_[4], "the y factor of 'tile'");
    if (!s || !loop_arg(*s, *pos_[1]) || !loop_arg(*s, *pos_[2])) return;
    if (pos_[1]->text == pos_[2]->text) {
      error(pos_[2]->loc, "'tile' needs two different loops");
      return;
    }
    std::vector<std::string> fresh;
    for (size_t i = 5; i < 9; ++i)
      if (!new_loop_arg(*s, *pos_[i], fresh)) return;
    std::string x = pos_[1]->text, y = pos_[2]->text;
    replace_loops(*s, {x}, {fresh[0], fresh[2]}, "was tiled into " + fresh[0] + ", " + fresh[2] + " " + by_line(d));
    replace_loops(*s, {y}, {fresh[1], fresh[3]}, "was tiled into " + fresh[1] + ", " + fresh[3] + " " + by_line(d));
  }

  void reorder(const Directive& d, TargetState& st) {
    if (pos_.size() < 3) {
      error(d.loc, "'reorder' takes a stage and at least two loops, found " +
                       std::to_string(pos_.size()) + " argument" + (pos_.size() == 1 ? "" : "s"),
            "write reorder(stage, outer, ..., inner)");
      return;
    }
    Stage* s = stage_arg(*pos_[0], st);
    if (!s) return;
    for (size_t i = 1; i < pos_.size(); ++i) {
      if (!loop_arg(*s, *pos_[i])) continue;
      for (size_t j = 1; j < i; ++j)
        if (pos_[j]->text == pos_[i]->text)
          error(pos_[i]->loc, "loop '" + pos_[i]->text + "' is listed twice");
    }
  }

  void fuse(const Directive& d, TargetState& st) {
    if (!count(d, 4, "(stage, outer, inner, fused)")) return;
    Stage* s = stage_arg(*pos_[0], st);
    if (!s || !loop_arg(*s, *pos_[1]) || !loop_arg(*s, *pos_[2])) return;
    if (pos_[1]->text == pos_[2]->text) {
      error(pos_[2]->loc, "'fuse' needs two different loops");
      return;
    }
    std::vector<std::string> fresh;
    if (!new_loop_arg(*s, *pos_[3], fresh)) return;
    replace_loops(*s, {pos_[1]->text, pos_[2]->text}, fresh,
                  "was fused into " + fresh[0] + " " + by_line(d));
  }

  void loop_only(const Directive& d, TargetState& st, size_t n) {
    if (!count(d, n, "(stage, loop)")) return;
    if (Stage* s = stage_arg(*pos_[0], st)) loop_arg(*s, *pos_[1]);
  }

  void compute_at(const Directive& d, TargetState& st) {
    if (!count(d, 3, "(producer, consumer, loop)")) return;
    const TensorDecl* p = producer_arg(*pos_[0], st);
    Stage* c = stage_arg(*pos_[1], st);
    if (c) loop_arg(*c, *pos_[2]);
    if (p && c && c->tensor == p->name)
      error(pos_[1]->loc, "'" + p->name + "' cannot be computed at its own loops",
            "compute_at places a producer inside a different consumer's loop");
  }

  void rfactor(const Directive& d, TargetState& st) {
    if (!count(d, 3, "(stage, reduction loop, new loop)")) return;
    Stage* s = stage_arg(*pos_[0], st);
    if (!s || !loop_arg(*s, *pos_[1])) return;
    std::vector<std::string> fresh;
    if (!new_loop_arg(*s, *pos_[2], fresh)) return;
    const std::string& kf = fresh[0];
    if (p_.find_tensor(kf) || st.stages.count(kf)) {
      error(pos_[2]->loc, "'" + kf + "' already names a stage", "choose a new name");
      return;
    }
    // The partial-result stage kf keeps the original loops; the stage itself now reduces over kf.
    Stage partial{kf, s->tensor, s->loops, {}};
    std::string k = pos_[1]->text;
    replace_loops(*s, {k}, fresh, "was replaced by " + kf + " (rfactor) " + by_line(d));
    partial.loops.push_back(kf);
    st.stages[kf] = std::move(partial);
  }

  void cache_read(const Directive& d, TargetState& st) {
    if (!count(d, 5, "(tensor, consumer, loop, scope, buffer)")) return;
    auto rank = tensor_arg(*pos_[0], st);
    if (Stage* c = stage_arg(*pos_[1], st)) loop_arg(*c, *pos_[2]);
    scope_arg(*pos_[3]);
    new_buffer_arg(*pos_[4], st, rank);
  }

  void cache_write(const Directive& d, TargetState& st) {
    if (!count(d, 4, "(stage, loop, scope, buffer)")) return;
    Stage* c = stage_arg(*pos_[0], st);
    if (c) loop_arg(*c, *pos_[1]);
    scope_arg(*pos_[2]);
    std::optional<size_t> rank;
    if (c)
      if (const TensorDecl* t = p_.find_tensor(c->tensor)) rank = t->shape.size();
    new_buffer_arg(*pos_[3], st, rank);
  }

  void layout(const Directive& d, TargetState& st) {
    if (!count(d, 2, "(tensor, pack(dim, factor)) or layout(tensor, order(dims...))")) return;
    auto rank = tensor_arg(*pos_[0], st);
    const DirectiveArg& f = *pos_[1];
    auto dim_ok = [&](const DirectiveArg& a) {
      if (a.kind != DirectiveArg::Kind::Int || a.int_value < 0 ||
          (rank && *rank > 0 && a.int_value >= static_cast<int64_t>(*rank))) {
        error(a.loc, "dimension '" + arg_text(a) + "' is out of range" +
                         (rank ? " for a tensor of rank " + std::to_string(*rank) : std::string()),
              rank ? "dimensions are numbered 0.." + std::to_string(*rank - 1) : "");
        return false;
      }
      return true;
    };
    if (f.kind == DirectiveArg::Kind::Call && f.text == "pack") {
      if (f.args.size() != 2) {
        error(f.loc, "pack takes 2 arguments (dim, factor), found " + std::to_string(f.args.size()));
        return;
      }
      dim_ok(f.args[0]);
      positive_int(f.args[1], "the factor of pack");
    } else if (f.kind == DirectiveArg::Kind::Call && f.text == "order") {
      std::vector<int64_t> seen;
      for (const auto& a : f.args) {
        if (!dim_ok(a)) continue;
        if (std::find(seen.begin(), seen.end(), a.int_value) != seen.end())
          error(a.loc, "dimension " + std::to_string(a.int_value) + " is listed twice in order(...)");
        seen.push_back(a.int_value);
      }
      if (rank && *rank > 0 && f.args.size() != *rank)
        error(f.loc, "order(...) must list all " + std::to_string(*rank) + " dimensions, found " +
                         std::to_string(f.args.size()));
    } else {
      error(f.loc, "expected pack(dim, factor) or order(dims...), found '" + arg_text(f) + "'");
    }
  }

  const Pattern& p_;
  const Module& m_;
  const PatternFacts& facts_;
  Diagnostics& diags_;
  std::map<std::string, TargetState> states_;
  std::vector<const DirectiveArg*> pos_;  // positional arguments of the current directive
};

}  // namespace

void verify_layers(const Module& m, const PatternFacts& facts, Diagnostics& diags) {
  LayerChecker(m, facts, diags).run();
}

}  // namespace ekb::ir::detail
