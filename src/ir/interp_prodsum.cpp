// The reference interpreter's fast path for sums of products: compilation (Compiler::try_prodsum)
// and evaluation (FProdSum), see interp_ops.h.
// Reference values must not depend on the compiler's FMA contraction (clang contracts a * b + c
// by default on FMA targets); GCC in ISO mode (-std=c++20) does not contract.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include <algorithm>

#include "ir/interp_compile.h"
#include "ir/interp_ops.h"

namespace ekb::ir::interp {

static bool mentions(const Expr& e, const std::string& var) {
  if (e.kind == ExprKind::Name && e.name == var) return true;
  for (const auto& a : e.args)
    if (mentions(*a, var)) return true;
  if (e.pad_value && mentions(*e.pad_value, var)) return true;
  for (const Range& r : e.ranges)
    if (mentions(*r.lo, var) || mentions(*r.hi, var)) return true;
  return false;
}

// sum(ranges: f0 * f1 * ... ) with up to four left-nested float factors, each a load with affine
// indices or an expression that does not use the innermost variable: see FProdSum.
FP Compiler::try_prodsum(const Expr& e) {
  const Expr& body = *e.args[0];
  if (!is_float(ty(body))) return nullptr;
  std::vector<const Expr*> factors;
  const Expr* cur = &body;
  while (cur->kind == ExprKind::Binary && cur->binary_op == BinaryOp::Mul && is_float(ty(*cur))) {
    factors.push_back(cur->args[1].get());
    cur = cur->args[0].get();
  }
  factors.push_back(cur);
  std::reverse(factors.begin(), factors.end());
  if (factors.size() > 4) return nullptr;
  const std::string& kname = e.ranges.back().var;
  bool any_load = false;
  for (const Expr* f : factors) {
    bool load = f->kind == ExprKind::Access && is_float(ty(*f));
    if (load) {
      const Buf* b = nullptr;
      for (const Buf& x : bufs_)
        if (x.name == f->name) b = &x;
      load = b && is_float(b->type);
    }
    if (!load && mentions(*f, kname)) return nullptr;
    any_load = any_load || load;
  }
  if (!any_load) return nullptr;

  size_t mark = scope.size();
  std::vector<RangeC> rs = ranges(e.ranges);
  int64_t* kvar = rs.back().var;
  std::vector<ProdFactor> out;
  for (const Expr* f : factors) {
    ProdFactor pf;
    bool load = f->kind == ExprKind::Access && is_float(ty(*f));
    if (load) {
      const Buf& b = buf(f->name, f->loc);
      load = is_float(b.type);
      if (load) {
        pf.addr = make_addr(b, f->args, f->loc);
        if (!pf.addr.all_affine) load = false;
        pf.data = b.f;
        pf.boundary = f->boundary;
        for (const Dim& d : pf.addr.dims) pf.kstride += d.coef_of(kvar) * d.stride;
      }
    }
    if (!load && mentions(*f, kname)) {
      scope.resize(mark);
      return nullptr;
    }
    pf.invariant = !load;
    pf.node = as_f(*f);
    out.push_back(std::move(pf));
  }
  scope.resize(mark);
  auto build = [&](auto node) -> FP {
    node->inner = std::move(rs.back());
    rs.pop_back();
    node->outer = std::move(rs);
    for (size_t i = 0; i < out.size(); ++i) node->f[i] = std::move(out[i]);
    node->err = err_;
    node->loc = e.loc;
    return node;
  };
  switch (out.size()) {
    case 1: return build(std::make_unique<FProdSum<1>>());
    case 2: return build(std::make_unique<FProdSum<2>>());
    case 3: return build(std::make_unique<FProdSum<3>>());
    default: return build(std::make_unique<FProdSum<4>>());
  }
}

// ------------------------------------------------------------------ FProdSum
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The in-bounds segment [t0, t1) of t = k - lo, k in [lo, lo + n), for a load factor, and its
// offset at t = 0 (possibly outside the buffer). The innermost variable holds lo.
bool valid_range(const ProdFactor& o, const int64_t* kvar, int64_t n, int64_t& t0, int64_t& t1,
                 int64_t& base) {
  t0 = 0;
  t1 = n;
  base = 0;
  for (const Dim& dim : o.addr.dims) {
    int64_t x = dim.affine_index();
    int64_t a = dim.coef_of(kvar);
    base += x * dim.stride;
    if (a == 0) {
      if (x < 0 || x >= dim.ext) t1 = 0;
    } else if (a > 0) {
      t0 = std::max(t0, ceil_div(-x, a));
      t1 = std::min(t1, floor_div(dim.ext - 1 - x, a) + 1);
    } else {
      t0 = std::max(t0, ceil_div(dim.ext - 1 - x, a));
      t1 = std::min(t1, floor_div(-x, a) + 1);
    }
  }
  if (t1 <= t0) t0 = t1 = 0;
  return t0 == 0 && t1 == n;
}
}  // namespace

template <int N>
void FProdSum<N>::run_inner(double& acc) const {
  int64_t lo = inner.lo_value(), hi = inner.hi_value();
  int64_t n = hi - lo;
  if (n <= 0) return;
  int64_t* kvar = inner.var;
  *kvar = lo;
  double inv[N];
  const double* data[N];
  int64_t off[N], st[N], t0[N], t1[N];
  bool full = true;
  for (int i = 0; i < N; ++i) {
    const ProdFactor& p = f[i];
    if (p.invariant) {
      inv[i] = p.node->eval();
      data[i] = &inv[i];
      off[i] = st[i] = 0;
      t0[i] = 0;
      t1[i] = n;
      continue;
    }
    data[i] = p.data;
    st[i] = p.kstride;
    if (!valid_range(p, kvar, n, t0[i], t1[i], off[i])) {
      if (p.boundary == Boundary::None) {
        *kvar = lo + (t0[i] > 0 || t1[i] == 0 ? 0 : t1[i]);
        raise(err, loc, "read out of bounds: " + p.addr.describe());
      }
      full = false;
    }
  }
  if (full) {
    for (int64_t t = 0; t < n; ++t) {
      double prod = data[0][off[0]];
      off[0] += st[0];
      for (int i = 1; i < N; ++i) {
        prod *= data[i][off[i]];
        off[i] += st[i];
      }
      acc += prod;
    }
    return;
  }
  for (int64_t t = 0; t < n; ++t) {
    double prod = 0;
    for (int i = 0; i < N; ++i) {
      double v;
      if (t >= t0[i] && t < t1[i]) {
        v = data[i][off[i]];
      } else {
        *kvar = lo + t;
        v = f[i].node->eval();
      }
      off[i] += st[i];
      prod = i == 0 ? v : prod * v;
    }
    acc += prod;
  }
}

template struct FProdSum<1>;
template struct FProdSum<2>;
template struct FProdSum<3>;
template struct FProdSum<4>;

}  // namespace ekb::ir::interp
