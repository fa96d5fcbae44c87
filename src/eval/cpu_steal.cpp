#include "eval/cpu_steal.h"

#include <fstream>
#include <sstream>
#include <string>

namespace ekb::eval {

StealMeter::StealMeter() : start_(read()) {}

// The first line: "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (jiffies;
// guest time is already counted in user and nice).
StealMeter::Jiffies StealMeter::read() {
  Jiffies j;
  std::ifstream in("/proc/stat");
  std::string line, label;
  if (!std::getline(in, line)) return j;
  std::istringstream fields(line);
  fields >> label;
  if (label != "cpu") return j;
  unsigned long long v[8] = {};
  for (int k = 0; k < 8 && fields >> v[k]; ++k) j.total += v[k];
  j.steal = v[7];
  j.ok = true;
  return j;
}

double StealMeter::fraction() const {
  const Jiffies now = read();
  if (!start_.ok || !now.ok || now.total <= start_.total) return start_.ok && now.ok ? 0 : -1;
  return static_cast<double>(now.steal - start_.steal) / static_cast<double>(now.total - start_.total);
}

}  // namespace ekb::eval
