// The error of a schedule or memory directive that cannot be applied, apart from the passes that
// throw it, so that a helper every pass uses (lower/region.h) need not include the schedule layer's.
#pragma once
#include <stdexcept>
#include <string>

namespace ekb::lower {

// A directive that cannot be applied: what is wrong and why, plus a hint. apply_schedule adds the
// directive and its file:line:col.
class ScheduleError : public std::runtime_error {
 public:
  explicit ScheduleError(const std::string& message, std::string hint = {})
      : std::runtime_error(message), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

}  // namespace ekb::lower
