// Cost facts of an Instance, derived from the IR without running it.
//
// Operation counting convention (the numbers every report uses):
//  - Each executed arithmetic operator is one op: binary + - * / %, bitwise & | ^, shifts,
//    comparisons, && || !, unary -. Each intrinsic call is one op (exp, log, sqrt, rsqrt, tanh,
//    sigmoid, erf, pow, ..., min, max, abs, floor, round, ..., rdmulh, rshift, requant), except
//    fma and clamp, which are two. select is one op plus its condition and both branches (a
//    branch-free kernel computes both).
//  - A reduction costs one combine op per point of its domain (so sum(k in 0..K: a*b) is 2K ops,
//    and a GEMM is 2*M*N*K), plus its body's ops per point. argmax/argmin count one comparison per
//    point.
//  - Counted algebraically: a factor of a sum's body that multiplies every term (through + and -)
//    and does not depend on the sum's variables is taken out of the sum, as a compiler or a tuned
//    kernel would: sum(k: alpha * a[i, k] * b[k, j]) is 2K ops plus one multiply, not 3K. So the
//    counts are the textbook ones (GEMM, convolution, attention), and a roofline built on them is
//    an upper bound for kernels that apply such a scale once.
//  - Free: casts, literals, names, tensor reads (also through pad/edge/mirror), stores.
//  - Not counted: index arithmetic, i.e. operators whose result has the index type and
//    comparisons / logic on index values (loop bounds, subscripts, masks such as i >= j); and
//    operators on constants only (literals, params, lets: a compiler folds them).
//  - An op is a float op (flops) when its operands are floats, otherwise an integer op (int_ops);
//    `transcendentals` counts the float intrinsics other than min, max, abs, floor, ceil, round,
//    round_even, trunc, fma, clamp (they are also in flops).
//  - Counts are exact: pure definitions count per element of the tensor, updates per iteration of
//    their for-ranges and free variables; reductions over ranges that depend on enclosing variables
//    (triangular domains, clipped windows) are counted by iterating only those enclosing variables.
//    Range bounds that read input tensors (data-dependent domains) are evaluated on the given
//    inputs, or on generate_inputs(inst, 0) when none are given (data_dependent is then set).
//
// Bytes: min_bytes = input_bytes + output_bytes, each tensor at its declared element size (the
// traffic of a kernel that reads every input once and writes every output once).
#pragma once
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::ir {

struct CostFacts {
  double flops = 0;
  double int_ops = 0;
  double transcendentals = 0;  // included in flops
  double input_bytes = 0;
  double output_bytes = 0;
  double temp_bytes = 0;
  double min_bytes = 0;  // input_bytes + output_bytes
  bool data_dependent = false;  // some range bound reads input data

  double ops() const { return flops + int_ops; }
  // ops per byte of min_bytes
  double arithmetic_intensity() const { return min_bytes > 0 ? ops() / min_bytes : 0; }
};

// Throws std::runtime_error if a range bound reads a computed (temp/output) tensor.
CostFacts compute_cost(const Instance& inst, const std::vector<TensorData>* inputs = nullptr);

}  // namespace ekb::ir
