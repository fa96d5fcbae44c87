// At most N requests to one profile's server in flight at once, however many threads ask.
#pragma once
#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace ekb::llm {

class ConcurrencyLimiter {
 public:
  explicit ConcurrencyLimiter(int limit) : free_(limit < 1 ? 1 : limit) {}

  // Held for the duration of one request; blocks until a slot is free.
  class Slot {
   public:
    explicit Slot(ConcurrencyLimiter& limiter) : limiter_(limiter) { limiter_.acquire(); }
    ~Slot() { limiter_.release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    ConcurrencyLimiter& limiter_;
  };

  int in_flight_peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }

 private:
  void acquire() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return free_ > 0; });
    --free_;
    peak_ = std::max(peak_, ++in_flight_);
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      ++free_;
      --in_flight_;
    }
    freed_.notify_one();
  }

  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int free_;
  int in_flight_ = 0, peak_ = 0;
};

}  // namespace ekb::llm
