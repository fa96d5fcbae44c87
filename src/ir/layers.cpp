// The schedule and memory layers, checked against the directive table (ir/directives.h): targets,
// verbs, argument counts and kinds, and the loop names each directive may use. Directives apply in
// order, so the set of loops of each stage is replayed: the table says which loops a directive
// consumes and which it creates (split, tile, fuse, rfactor), and which buffers and stages it
// makes (cache_read, cache_write, rfactor). Blocks of one target share that state (a memory block
// names the loops its schedule block created); different targets are independent.
#include <algorithm>
#include <optional>

#include "ir/directives.h"
#include "ir/target.h"
#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {

using K = DirectiveArgKind;

bool one_of(const std::vector<std::string>& xs, const std::string& s) {
  return std::find(xs.begin(), xs.end(), s) != xs.end();
}

std::string list_text(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? (i + 1 == xs.size() ? " or " : ", ") : "") + xs[i];
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

// A parameter's name as prose: "x_factor" -> "x factor".
std::string spoken(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

std::string count_text(size_t n, std::string_view noun) {
  static const char* const kWords[] = {"no", "one", "two", "three", "four"};
  return (n < 5 ? std::string(kWords[n]) : std::to_string(n)) + " " + std::string(noun) + (n == 1 ? "" : "s");
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

// What a directive's arguments resolved to, by parameter kind.
struct Resolved {
  std::vector<Stage*> stages;              // per argument: the stage a Stage argument names
  std::optional<size_t> tensor_rank;       // the rank of its Tensor argument
  const TensorDecl* producer = nullptr;    // the declared tensor a Producer argument names
  bool names_ok = true;                    // every name argument resolved (its effects may apply)
};

// Checks each directive against its row of the directive table (ir/directives.h): layer, target,
// argument count, keywords and each argument's kind, then replays its effect on the stages' loop
// names (the loops it consumes and creates, the buffers and stages it makes).
class LayerChecker {
 public:
  LayerChecker(const Module& m, const PatternFacts& f, Diagnostics& d)
      : p_(m.pattern), m_(m), facts_(f), diags_(d) {}

  void run() {
    for (const auto& b : m_.layers) {
      const std::string layer(layer_name(b.kind));
      const std::optional<TargetSet> targets = parse_layer_target(b.target);
      if (!targets) {
        std::string hint = did_you_mean(b.target, layer_target_names());
        error(b.loc, "unknown target '" + b.target + "' for the " + layer + " block",
              hint.empty() ? "the targets are cpu and gpu" : hint);
      }
      TargetState& st = states_[b.target];
      // A block without a target applies everywhere: lowering refuses a directive for the target
      // it lowers for (lower/apply_schedule.cpp).
      const std::optional<TargetSet> checked = b.target.empty() ? std::nullopt : targets;
      for (const auto& d : b.directives) check_directive(b, checked, d, st);
    }
  }

 private:
  void error(SourceLoc loc, std::string msg, std::string hint = {}) {
    diags_.error(loc, std::move(msg), std::move(hint));
  }

  void check_directive(const LayerBlock& b, std::optional<TargetSet> targets, const Directive& d, TargetState& st) {
    const DirectiveInfo* info = find_directive(d.verb);
    if (!info) {
      std::vector<std::string> verbs = directive_verbs(b.kind);
      std::string hint = did_you_mean(d.verb, verbs);
      error(d.loc, "unknown directive '" + d.verb + "'",
            hint.empty() ? "the directives are " + join(verbs) : hint);
      return;
    }
    if (info->layer != b.kind) {
      const std::string is(layer_name(info->layer)), block(layer_name(b.kind));
      error(d.loc, "'" + d.verb + "' is a " + is + " directive, not a " + block + " one",
            "move it into a `" + is + "` block");
      return;
    }
    if (targets && !info->targets.contains(*targets))
      error(d.loc, std::string(info->off_target), std::string(info->off_target_hint));
    pos_.clear();
    fresh_.clear();
    std::vector<std::string> given;
    for (const auto& a : d.args) {
      if (a.key.empty()) {
        pos_.push_back(&a);
        continue;
      }
      auto kw = std::find_if(info->keywords.begin(), info->keywords.end(),
                             [&](const DirectiveParam& k) { return k.name == a.key; });
      if (kw == info->keywords.end()) {
        error(a.loc, "'" + d.verb + "' has no argument '" + a.key + "'", keyword_hint(*info));
        continue;
      }
      if (one_of(given, a.key)) error(a.loc, "'" + a.key + "' is given twice");
      given.push_back(a.key);
      value_arg(*info, *kw, a);
    }
    if (!count(*info, d)) return;
    Resolved r;
    r.stages.assign(pos_.size(), nullptr);
    for (size_t i = 0; i < pos_.size(); ++i)
      resolve(*info, info->params[std::min(i, info->params.size() - 1)], i, st, r);
    if (r.names_ok) replay(*info, d, r, st);
  }

  static std::string keyword_hint(const DirectiveInfo& info) {
    if (info.keywords.empty()) return "it takes no keyword arguments";
    const DirectiveParam& k = info.keywords.front();
    return "the only keyword argument is " + std::string(k.name) + (arg_kind_choices(k.kind).empty() ? "=N" : "=...");
  }

  // ---- argument helpers ----
  bool count(const DirectiveInfo& info, const Directive& d) {
    const bool repeated = info.variadic();
    const size_t fixed = info.params.size() - (repeated ? 1 : 0);
    if (repeated ? pos_.size() >= info.min_arguments() : pos_.size() == fixed) return true;
    const std::string found = "found " + std::to_string(pos_.size()) + " argument" + (pos_.size() == 1 ? "" : "s");
    std::string takes;
    if (!repeated) {
      takes = std::to_string(fixed) + " argument" + (fixed == 1 ? "" : "s");
    } else {
      for (size_t i = 0; i < fixed; ++i) takes += (i ? ", a " : "a ") + spoken(info.params[i].name);
      takes += " and at least " + count_text(static_cast<size_t>(info.params.back().min_count), info.params.back().name);
    }
    error(d.loc, "'" + d.verb + "' takes " + takes + ", " + found, "write " + directive_signature(info));
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
  // rfactor stage an earlier directive created. False after reporting why not; `tensor` is the
  // declared tensor it names (nullptr for a buffer or an rfactor stage).
  bool producer_arg(const DirectiveArg& a, const TargetState& st, const TensorDecl*& tensor) {
    tensor = nullptr;
    if (a.kind != DirectiveArg::Kind::Name || a.text.find('.') != std::string::npos) {
      error(a.loc, "expected a tensor, found '" + arg_text(a) + "'",
            "compute_at, compute_inline and compute_root place a whole tensor, not one update");
      return false;
    }
    if (!p_.find_tensor(a.text) && (st.buffers.count(a.text) || st.stages.count(a.text))) return true;
    tensor = computed_tensor(a.text, a.loc, false);
    return tensor != nullptr;
  }

  // compute_inline's producer: a temp defined by its pure definition alone.
  void inline_rules(const DirectiveArg& a, const TensorDecl& t) {
    if (t.role == TensorRole::Output)
      error(a.loc, "output '" + t.name + "' cannot be inlined", "outputs are stored; only temps can be inlined");
    else if (facts_.updates.count(t.name))
      error(a.loc, "temp '" + t.name + "' has updates and cannot be inlined",
            "only a temp defined by its pure definition alone can be inlined");
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
      error(a.loc, "loop '" + a.text + "' of stage '" + s.name + "' " + gone->second, "use the loops it became");
      return false;
    }
    std::string hint = did_you_mean(a.text, s.loops);
    error(a.loc, "stage '" + s.name + "' has no loop '" + a.text + "'",
          hint.empty() ? "its loops are " + join(s.loops) : hint);
    return false;
  }

  // A name for a loop the directive creates; fresh_ holds the others it creates.
  bool new_loop_arg(Stage& s, const DirectiveArg& a) {
    if (!plain_name(a, "a new loop name")) return false;
    if (std::find(s.loops.begin(), s.loops.end(), a.text) != s.loops.end() || one_of(fresh_, a.text)) {
      error(a.loc, "'" + a.text + "' already names a loop of stage '" + s.name + "'", "choose a new name");
      return false;
    }
    fresh_.push_back(a.text);
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

  bool new_buffer_arg(const DirectiveArg& a, const TargetState& st) {
    if (!plain_name(a, "a new buffer name")) return false;
    bool taken = p_.find_tensor(a.text) || st.buffers.count(a.text);
    for (const auto& x : p_.params) taken |= x.name == a.text;
    for (const auto& x : p_.lets) taken |= x.name == a.text;
    for (const auto& x : p_.type_params) taken |= x.name == a.text;
    if (taken) {
      error(a.loc, "'" + a.text + "' is already declared", "choose a new buffer name");
      return false;
    }
    return true;
  }

  void create_buffer(const std::string& name, TargetState& st, std::optional<size_t> rank) {
    st.buffers[name] = rank.value_or(0);
    // The cache's copy nests form a stage named after it, one loop per dimension (c0, c1, ...),
    // which later directives schedule like any other (memory_cache.h).
    if (rank) {
      Stage copy{name, name, {}, {}};
      for (size_t d = 0; d < *rank; ++d) copy.loops.push_back("c" + std::to_string(d));
      st.stages[name] = std::move(copy);
    }
  }

  // A value from a fixed list (a scope, a gpu axis, a tail strategy).
  void choice_arg(const DirectiveArg& a, const std::vector<std::string>& choices, std::string_view what,
                  std::string_view plural) {
    if (a.kind == DirectiveArg::Kind::Name && one_of(choices, a.text)) return;
    std::string hint = did_you_mean(arg_text(a), choices);
    error(a.loc, "unknown " + std::string(what) + " '" + arg_text(a) + "'",
          hint.empty() ? "the " + std::string(plural) + " are " + list_text(choices) : hint);
  }

  void layout_arg(const DirectiveArg& f, std::optional<size_t> rank) {
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

  // The kinds that hold a value rather than a name: what a keyword argument may be too.
  void value_arg(const DirectiveInfo& info, const DirectiveParam& p, const DirectiveArg& a) {
    const std::string what = "the " + spoken(p.name) + " of '" + std::string(info.verb) + "'";
    switch (p.kind) {
      case K::PositiveInt: positive_int(a, what); return;
      case K::PowerOfTwo: {
        auto n = positive_int(a, "the " + spoken(p.name));
        if (n && (*n & (*n - 1)) != 0)
          error(a.loc, "the " + spoken(p.name) + " must be a power of two, found " + std::to_string(*n));
        return;
      }
      case K::Scope: choice_arg(a, arg_kind_choices(p.kind), "memory scope", "scopes"); return;
      case K::GpuAxis: choice_arg(a, arg_kind_choices(p.kind), "bind target", "targets"); return;
      case K::Tail: choice_arg(a, arg_kind_choices(p.kind), "tail strategy", "tail strategies"); return;
      case K::CacheLines:
        if (a.kind != DirectiveArg::Kind::Int || a.int_value < 1 || a.int_value > 64)
          error(a.loc, "the " + spoken(p.name) + " of a " + std::string(info.verb) +
                           " must be a whole number from 1 to 64, found " + arg_text(a));
        return;
      default: return;
    }
  }

  // Checks positional argument i against its parameter p, recording what it names in r.
  void resolve(const DirectiveInfo& info, const DirectiveParam& p, size_t i, TargetState& st, Resolved& r) {
    const DirectiveArg& a = *pos_[i];
    Stage* of = p.of >= 0 ? r.stages[static_cast<size_t>(p.of)] : nullptr;
    switch (p.kind) {
      case K::Stage:
        r.stages[i] = stage_arg(a, st);
        r.names_ok &= r.stages[i] != nullptr;
        if (r.producer && r.stages[i] && r.stages[i]->tensor == r.producer->name)
          error(a.loc, "'" + r.producer->name + "' cannot be computed at its own loops",
                "compute_at places a producer inside a different consumer's loop");
        return;
      case K::Loop:
        if (!of || !loop_arg(*of, a)) {
          r.names_ok = false;
          return;
        }
        for (size_t j = 0; j < i; ++j) {
          const DirectiveParam& q = info.params[std::min(j, info.params.size() - 1)];
          if (q.kind == K::Loop && q.of == p.of && pos_[j]->text == a.text) {
            error(a.loc, "loop '" + a.text + "' is listed twice");
            r.names_ok = false;
          }
        }
        return;
      case K::NewLoop:
      case K::PartialStage:
        if (!of || !new_loop_arg(*of, a)) {
          r.names_ok = false;
          return;
        }
        if (p.kind == K::PartialStage && (p_.find_tensor(a.text) || st.stages.count(a.text))) {
          error(a.loc, "'" + a.text + "' already names a stage", "choose a new name");
          r.names_ok = false;
        }
        return;
      case K::Producer:
      case K::InlineProducer:
        r.names_ok &= producer_arg(a, st, r.producer);
        if (p.kind == K::InlineProducer && r.producer) inline_rules(a, *r.producer);
        return;
      case K::Tensor: {
        auto rank = tensor_arg(a, st);
        r.names_ok &= rank.has_value();
        if (!r.tensor_rank) r.tensor_rank = rank;
        return;
      }
      case K::NewBuffer:
        r.names_ok &= new_buffer_arg(a, st);
        return;
      case K::Layout:
        layout_arg(a, r.tensor_rank);
        return;
      default:
        value_arg(info, p, a);
        return;
    }
  }

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

  // The directive's effect on the names later directives may use: the partial-result stages and
  // buffers it creates, the loops it consumes and the loops that replace them.
  void replay(const DirectiveInfo& info, const Directive& d, const Resolved& r, TargetState& st) {
    const auto& params = info.params;
    for (size_t i = 0; i < params.size() && i < pos_.size(); ++i) {
      if (params[i].kind == K::PartialStage) {
        // The partial-result stage keeps the loops the stage had; the stage then reduces over it.
        const Stage& s = *r.stages[static_cast<size_t>(params[i].of)];
        Stage partial{pos_[i]->text, s.tensor, s.loops, {}};
        partial.loops.push_back(pos_[i]->text);
        st.stages[pos_[i]->text] = std::move(partial);
      } else if (params[i].kind == K::NewBuffer) {
        std::optional<size_t> rank = r.tensor_rank;
        for (size_t j = 0; j < params.size() && !rank; ++j)
          if (params[j].kind == K::Stage)
            if (const TensorDecl* t = p_.find_tensor(r.stages[j]->tensor)) rank = t->shape.size();
        create_buffer(pos_[i]->text, st, rank);
      }
    }
    std::vector<std::vector<int>> done;
    for (size_t i = 0; i < params.size() && i < pos_.size(); ++i) {
      const DirectiveParam& p = params[i];
      if (p.becomes.empty() || std::find(done.begin(), done.end(), p.becomes) != done.end()) continue;
      done.push_back(p.becomes);
      std::vector<std::string> consumed, created;
      for (size_t j = i; j < params.size(); ++j)
        if (params[j].becomes == p.becomes) consumed.push_back(pos_[j]->text);
      for (int n : p.becomes) created.push_back(pos_[static_cast<size_t>(n)]->text);
      std::string why(info.replaced_as);
      why.replace(why.find("{}"), 2, join(created));
      replace_loops(*r.stages[static_cast<size_t>(p.of)], consumed, created,
                    why + " by the directive at line " + std::to_string(d.loc.line));
    }
  }

  const Pattern& p_;
  const Module& m_;
  const PatternFacts& facts_;
  Diagnostics& diags_;
  std::map<std::string, TargetState> states_;
  std::vector<const DirectiveArg*> pos_;  // positional arguments of the current directive
  std::vector<std::string> fresh_;        // the loop names it creates
};

}  // namespace

void verify_layers(const Module& m, const PatternFacts& facts, Diagnostics& diags) {
  LayerChecker(m, facts, diags).run();
}

}  // namespace ekb::ir::detail
