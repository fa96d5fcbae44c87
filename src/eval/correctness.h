// The correctness trials of one kernel (docs/EVALUATION.md): one call per trial, each on different inputs,
// with the poison pattern alternating between trials, every check of KernelSession::call, and the
// window after the call watched for late writes. Passing them makes the trials' inputs the ground
// from which the timing loop derives its fresh inputs (eval/fresh_inputs.h).
#pragma once
#include <string>
#include <vector>

#include "eval/kernel_session.h"

namespace ekb::eval {

struct CheckOutcome {
  ErrorKind error = ErrorKind::None;
  std::string message;        // prefixed with the failing trial's label
  double max_abs_error = 0;   // the largest over the trials that ran
  double max_error_ratio = 0; // the largest |error| / allowed error over the trials that ran
  bool ok() const { return error == ErrorKind::None; }
};

// `first_pattern` is the poison pattern of trials[0]; the next trial uses the other one.
CheckOutcome check_trials(KernelSession& session, int slot, const std::vector<const Trial*>& trials,
                          double async_window_ms, int first_pattern = 0);

}  // namespace ekb::eval
