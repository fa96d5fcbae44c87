// The share of CPU time a hypervisor gave to other guests while a measurement ran ("steal" in
// /proc/stat): on a shared VM it slows a kernel without any process of this machine being busy,
// and parallel kernels most, so each timed result carries it.
#pragma once

namespace ekb::eval {

class StealMeter {
 public:
  StealMeter();  // starts measuring
  // Steal time over all CPU time since construction, in [0, 1]; -1 where /proc/stat is unreadable.
  double fraction() const;

 private:
  struct Jiffies {
    unsigned long long steal = 0, total = 0;
    bool ok = false;
  };
  static Jiffies read();
  Jiffies start_;
};

}  // namespace ekb::eval
