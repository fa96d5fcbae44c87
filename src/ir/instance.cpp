// The small methods of Instance and TensorInstance, and the verifier's shared helpers.
#include "ir/instance.h"

#include <set>

#include "ir/verify_internal.h"

namespace ekb::ir {

int64_t TensorInstance::num_elements() const {
  // instantiate() rejects shapes whose byte size overflows, so this product cannot overflow.
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const TensorInstance* Instance::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.decl && t.decl->name == name) return &t;
  return nullptr;
}

std::string Instance::full_name() const {
  std::string out = module ? module->pattern.name : std::string();
  if (workload) out += "/" + workload->name;
  return out;
}

namespace {

void collect_writes(const Stmt& s, std::set<std::string>& out) {
  if (s.kind == StmtKind::Assign) out.insert(s.tensor);
  for (const Stmt& b : s.body) collect_writes(b, out);
}

}  // namespace

std::vector<bool> pure_definitions(const Instance& inst, const std::vector<Stmt>& stmts) {
  std::vector<bool> pure;
  std::set<std::string> written;
  for (const Stmt& s : stmts) {
    bool is_pure = s.kind == StmtKind::Assign && !written.count(s.tensor);
    std::set<std::string> indices;
    for (const auto& ix : s.indices)
      if (ix->kind != ExprKind::Name || inst.params.count(ix->name) || inst.lets.count(ix->name) ||
          !indices.insert(ix->name).second)
        is_pure = false;
    pure.push_back(is_pure);
    collect_writes(s, written);
  }
  return pure;
}

namespace detail {

WorkloadDiags::WorkloadDiags(Diagnostics& d, const Workload& w)
    : diags_(d), suffix_("with workload '" + w.name + "' (line " + std::to_string(w.loc.line) + ")") {}

void WorkloadDiags::error(SourceLoc loc, std::string message, std::string hint) {
  // The location is in the pattern, which is shared by every workload: say which one failed.
  hint = hint.empty() ? suffix_ : hint + "; " + suffix_;
  error_here(loc, std::move(message), std::move(hint));
}

void WorkloadDiags::error_here(SourceLoc loc, std::string message, std::string hint) {
  ++count_;
  diags_.error(loc, std::move(message), std::move(hint));
}

std::string type_text(ScalarType t) { return std::string(scalar_type_name(t)); }

std::vector<std::string> scalar_type_names() {
  return {"f32", "f16", "bf16", "f64", "i8", "u8", "i16", "i32", "i64", "bool"};
}

SourceLoc start_loc(const Expr& e) {
  const Expr* x = &e;
  while (x->kind == ExprKind::Binary && !x->args.empty() && x->args[0]) x = x->args[0].get();
  return x->loc;
}

}  // namespace detail
}  // namespace ekb::ir
