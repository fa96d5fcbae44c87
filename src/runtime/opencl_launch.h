// The launch description of an OpenCL solution (docs/ABI.md): a comment in the source saying which
// kernels run, in order, over which ranges, with which arguments, and what scratch memory they need.
//
//   /* ekb-launch
//   scratch partial R*4            (optional, any number: NAME BYTES; NAME may then appear in args)
//   kernel softmax_rows global=[R*64] local=[64] args=[x, y, R, C]
//   kernel finish global=[(R + 255) / 256 * 256, 2] args=[y, partial, R]
//   */
//
// Sizes are integer expressions of the workload's parameters: decimal literals, parameter names,
// parentheses, unary -, + - * / % (64-bit, C's truncating division), min(a, b), max(a, b);
// overflow and division by zero are errors. `global` has 1 to 3 dimensions, `local` (optional: the
// platform picks) the same number. `args` names the kernel's parameters in order: tensors,
// parameters (passed as `long`), declared scratch buffers. Blank lines and lines starting with '#'
// are ignored. Every error names the source line and column.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ekb::runtime::opencl {

// A malformed or inconsistent description: "line 12, column 30: unknown name 'q' in args".
class LaunchError : public std::runtime_error {
 public:
  LaunchError(int line, int column, const std::string& what);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_, column_;
};

// An integer expression of the parameters.
struct SizeExpr {
  enum class Op { Literal, Param, Negate, Add, Sub, Mul, Div, Mod, Min, Max } op = Op::Literal;
  int64_t value = 0;  // Literal
  int param = -1;     // Param: index into the parameter list
  std::vector<SizeExpr> args;
  int line = 0, column = 0;  // where it starts, for evaluation errors
};

// What an argument names.
struct LaunchArg {
  enum class Kind { Tensor, Param, Scratch } kind = Kind::Tensor;
  int index = 0;  // into the tensors, the parameters or the description's scratch buffers
  std::string name;
};

struct KernelLaunch {
  std::string kernel;
  std::vector<SizeExpr> global, local;  // local empty: the platform chooses
  std::vector<LaunchArg> args;
  int line = 0;
};

struct ScratchBuffer {
  std::string name;
  SizeExpr bytes;
  int line = 0;
};

struct LaunchDescription {
  std::vector<ScratchBuffer> scratch;
  std::vector<KernelLaunch> launches;
};

// The names a description binds to: the kernel ABI's tensors (inputs, then outputs) and params.
struct LaunchNames {
  std::vector<std::string> tensors;
  std::vector<std::string> params;
};

// Finds the one `/* ekb-launch ... */` comment in `source` and parses it against `names`.
// Throws LaunchError (with the position in `source`) when there is none, or it is malformed.
LaunchDescription parse_launch_description(const std::string& source, const LaunchNames& names);

// The value of `e` for the parameters' values (in declaration order). Throws LaunchError on
// overflow or division by zero.
int64_t evaluate(const SizeExpr& e, const std::vector<int64_t>& params);

// A launch with its sizes evaluated: global sizes are whole multiples of the local ones when
// those are given (OpenCL 1.2), all positive except an empty range (then the launch is skipped).
struct ResolvedLaunch {
  std::vector<size_t> global, local;
  bool empty = false;
};
// Evaluates and checks one launch: negative sizes, a global size not a multiple of the local one,
// or a zero local size are LaunchErrors naming the kernel's line.
ResolvedLaunch resolve(const KernelLaunch& launch, const std::vector<int64_t>& params);

}  // namespace ekb::runtime::opencl
