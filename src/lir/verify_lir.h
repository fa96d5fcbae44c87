// A well-formedness check of the loop IR, run after every pass when EKB_VERIFY_LIR=1 (the test
// suite sets it) or LowerOptions::verify: a pass that breaks the IR is named at once, not by a
// wrong kernel or an emitter's confusion later. It checks what loop_ir.h promises and is cheap
// (one walk):
//  - every variable an expression reads is bound by an enclosing For, LetStmt, DeclareVar or
//    Reduce range (or is a param), with the type its binder gives it; an Assign writes a
//    DeclareVar in scope; no binding shadows another of the same name (the copies of a loop
//    that a peel or a moved reduction leaves side by side may share its variable);
//  - every buffer a Load, Store or prefetch names is a buffer of the function or an enclosing
//    Allocate; a Load or Store of a function buffer has one index per dimension or one flat index;
//  - constant loop extents and allocation sizes are not negative;
//  - a Kernel is not inside another; its body is checked with only the function's buffers and params
//    around it (its arguments), a grid-stride launch's extents outside it (the host computes them),
//    and its GpuGridStride loops are those its launch names; a ThreadAllReduce stands in a Kernel,
//    combines DeclareVar variables of its combines' types, through slots allocated around it;
//  - the forms earlier passes established hold: no Reduce after lower_reductions, no boundary
//    read after lower_boundaries, one flat index per access after flatten_storage.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lir/loop_ir.h"

namespace ekb::lir {

// The forms a pass establishes for every pass after it (lower.cpp's pass table).
enum class LirForm : uint8_t {
  None = 0,
  NoReductions = 1,  // lower_reductions: no Reduce expression is left
  NoBoundaries = 2,  // lower_boundaries: no Load carries a pad/edge/mirror boundary
  FlatAccesses = 4,  // flatten_storage: every Load and Store has exactly one index
};
constexpr LirForm operator|(LirForm a, LirForm b) {
  return static_cast<LirForm>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
constexpr bool has_form(LirForm set, LirForm f) { return (static_cast<uint8_t>(set) & static_cast<uint8_t>(f)) != 0; }

// A broken invariant of the loop IR: a compiler bug, never a user's mistake.
class MalformedLir : public std::logic_error {
  using std::logic_error::logic_error;
};

// The first broken invariant of f, or "" when it is well formed.
std::string lir_problem(const Func& f, LirForm form = LirForm::None);

// Throws MalformedLir "the loop IR is malformed after pass 'PASS': ..." for lir_problem's finding.
void verify_lir(const Func& f, LirForm form, std::string_view after_pass);

}  // namespace ekb::lir
