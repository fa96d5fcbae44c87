// A GPU backend's launch floor, part of its calibration (eval/cuda_calibration.h,
// eval/opencl_calibration.h): kept in eval, since it summarizes times as the timing loop does.
#pragma once
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ekb::eval {

// The fixed cost every timed call carries: `runs` timings (ms) of each named way of launching empty
// kernels (on an idle queue, queued behind a cache flush as the executors time a call, two in a row
// behind it), interleaved after one warm-up of each, as
// {"empty_kernel_us": {name: {median, p25, p75}, ...}, "runs": runs}.
nlohmann::json launch_floor_json(int runs, const std::vector<std::pair<std::string, std::function<double()>>>& timers);

}  // namespace ekb::eval
