// The reference interpreter: the semantics of docs/IR.md ("Reference semantics") for a verified
// Instance. Every candidate kernel is checked against its outputs.
//
// Semantics, exactly:
//  - Float values are computed in f64 whatever their declared type; cast to a float type and
//    storing into an f16/bf16/f32 tensor do not round.
//  - Integer values are exact int64 values, wrapped (two's complement) to the expression's type
//    after every operation. `/` and `%` are floor division and floor modulo; an integer division by
//    zero is an error. `<<` / `>>` are arithmetic shifts of the exact value (then wrapped); a shift
//    amount outside [0, 63] is an error.
//  - (`%` on floats, which the verifier rejects, would be the floor modulo a - b * floor(a / b).)
//  - cast: int->int wraps, float->int truncates toward zero and saturates (NaN -> 0), ->bool is
//    `!= 0`. sat: like cast, but int->int saturates.
//  - min/max (two-argument and reductions) propagate NaN. argmax/argmin give the first index of
//    the extreme value (NaN never wins after the first element) and are an error on an empty range.
//  - select, && and || evaluate only the operand they need.
//  - Pure definitions run over the tensor's full extent; updates run in program order, `for`
//    ranges evaluated at loop entry, free left-hand-side variables innermost over the full extent.
//  - Out-of-bounds reads and writes are errors (a verified program has none on inputs within
//    their declared domains; a gather through out-of-domain index data can).
//  - rdmulh / rshift / requant: exactly gemmlowp / TFLite (ir/quant.h); rshift exponents outside
//    [0, 31] and requant shifts outside [-31, 31] are errors.
// Errors are thrown as std::runtime_error("FILE:LINE:COL: reference error in PATTERN/WORKLOAD: ...").
// Transcendental functions are those of the C library (std::exp, ...): deterministic on a platform.
//
// Performance: each expression is compiled once into a tree of typed nodes with resolved variable
// slots, tensor pointers and strides (affine indices become at most two inline terms per dimension,
// constant subexpressions are folded, and a sum of a product of up to four factors, each a load
// with affine indices or a loop-invariant expression, runs its innermost range as a strided loop).
// Calls are independent: run_reference may run concurrently on several threads.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::ir {

// Runs the pattern on `inputs` (one per `input`, in declaration order, with the declared types and
// shapes) and returns the outputs in declaration order. Throws std::runtime_error on a mismatched
// input or a reference error (division by zero, out-of-bounds access, ...).
std::vector<TensorData> run_reference(const Instance& inst, const std::vector<TensorData>& inputs);

// Same, returning every tensor (inputs, outputs and temps) in the pattern's declaration order.
std::vector<TensorData> run_reference_all(const Instance& inst,
                                          const std::vector<TensorData>& inputs);

// The value of a scalar expression that uses only literals, params and lets (e.g. an input domain's
// bound), under the instance's types. Throws std::runtime_error if it reads a variable or tensor.
LetValue eval_constant(const Instance& inst, const Expr& e);

// Compiled scalar expressions over named index variables, for analyses that evaluate many bounds
// (the cost model). Expressions may read params, lets, and, when `inputs` is given, input tensors.
// Not thread-safe: one evaluator per thread.
class ScalarEvaluator {
 public:
  explicit ScalarEvaluator(const Instance& inst, const std::vector<TensorData>* inputs = nullptr);
  ~ScalarEvaluator();
  ScalarEvaluator(const ScalarEvaluator&) = delete;
  ScalarEvaluator& operator=(const ScalarEvaluator&) = delete;

  // Compiles `e`, whose free variables are among `vars`; returns a handle.
  int compile(const Expr& e, const std::vector<std::string>& vars);
  // Evaluates handle `h` with values[k] bound to vars[k] (a float result is truncated).
  int64_t eval_int(int h, const int64_t* values);
  double eval_float(int h, const int64_t* values);  // any expression, converted to double

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ekb::ir
