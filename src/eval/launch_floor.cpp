#include "eval/launch_floor.h"

#include "eval/timing.h"

namespace ekb::eval {

nlohmann::json launch_floor_json(int runs, const std::vector<std::pair<std::string, std::function<double()>>>& timers) {
  for (const auto& [name, time_ms] : timers) time_ms();  // warm-up: the first launch loads the module
  std::vector<std::vector<double>> ms(timers.size());
  for (int r = 0; r < runs; ++r)  // interleaved, so that drift hits all alike
    for (size_t i = 0; i < timers.size(); ++i) ms[i].push_back(timers[i].second());
  nlohmann::json empty = nlohmann::json::object();
  for (size_t i = 0; i < timers.size(); ++i) {
    const TimeStats t = summarize_times(ms[i]);
    empty[timers[i].first] = {{"median", t.median_ms * 1e3}, {"p25", t.p25_ms * 1e3}, {"p75", t.p75_ms * 1e3}};
  }
  return {{"empty_kernel_us", empty}, {"runs", runs}};
}

}  // namespace ekb::eval
