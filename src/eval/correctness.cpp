#include "eval/correctness.h"

#include <algorithm>

#include "eval/poison.h"

namespace ekb::eval {

CheckOutcome check_trials(KernelSession& session, int slot, const std::vector<const Trial*>& trials,
                          double async_window_ms, int first_pattern) {
  CheckOutcome out;
  for (size_t i = 0; i < trials.size(); ++i) {
    CallSpec spec;
    spec.poison_pattern = static_cast<int>((first_pattern + i) % kPoisonPatterns);
    spec.async_window_ms = async_window_ms;
    CallResult r = session.call(slot, *trials[i], spec);
    out.max_abs_error = std::max(out.max_abs_error, r.max_abs_error);
    out.max_error_ratio = std::max(out.max_error_ratio, r.max_error_ratio);
    if (!r.ok()) {
      out.error = r.error;
      out.message = trials[i]->label + ": " + r.message;
      return out;
    }
  }
  return out;
}

}  // namespace ekb::eval
