// Comparing one output buffer with its f64 reference (docs/EVALUATION.md §4, suite/tolerance.h):
//   floats:   |out - ref| <= rtol * |ref| + atol_rms * rms(ref); NaN where the reference is NaN, the
//             same infinity where it is infinite, a finite value everywhere else;
//   integers: exact; bool: exactly 0 or 1, equal to the reference.
// Elements still holding the poison pattern are reported as unwritten before any mismatch: a kernel
// that writes half its output is told so, not that element 0 of the other half is NaN. A mismatch
// names the worst element (the largest error relative to its allowed error) and the first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "eval/result.h"
#include "ir/tensor_data.h"

namespace ekb::eval {

struct OutputVerdict {
  ErrorKind error = ErrorKind::None;  // None, UnwrittenOutput or Mismatch
  std::string message;                // the worst offending element, with its index and values
  double max_abs_error = 0;           // over finite compared elements
  // The worst element's |error| as a fraction of its allowed error: at most 1 when the output
  // passes (0.93: the closest element used 93% of its tolerance); infinite for a NaN or infinity
  // where the reference is finite (or the reverse) and for an integer that differs.
  double max_error_ratio = 0;
};

// `data` holds expected.num_elements() elements of expected.type. `poison_pattern` is the pattern
// written before the call (eval/poison.h), or -1 to skip the unwritten check. `tolerance_scale`
// widens the tolerance where `expected` is itself an approximation (another kernel's outputs).
OutputVerdict check_output(const std::string& name, const uint8_t* data, const ir::TensorData& expected,
                           double rms, int poison_pattern, double tolerance_scale = 1);

// The root mean square of a tensor's finite elements: the `rms` of check_output.
double finite_rms(const ir::TensorData& t);

// "[2, 0, 17]" for row-major element `flat` of `shape`.
std::string format_index(const std::vector<int64_t>& shape, int64_t flat);

}  // namespace ekb::eval
