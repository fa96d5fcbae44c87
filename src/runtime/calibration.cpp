#include "runtime/calibration.h"

#include <algorithm>
#include <ctime>

namespace ekb::runtime {

Measurement summarize_higher_is_better(std::vector<double> samples) {
  Measurement m;
  if (samples.empty()) return m;
  std::sort(samples.begin(), samples.end());
  m.runs = static_cast<int>(samples.size());
  m.worst = samples.front();
  m.best = samples.back();
  size_t n = samples.size();
  m.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return m;
}

Measurement measure_rate(int runs, double amount, const std::function<double()>& time_ms) {
  time_ms();
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) rates.push_back(amount / (time_ms() * 1e-3) / 1e9);
  return summarize_higher_is_better(std::move(rates));
}

std::string calibration_method(ir::Target target) {
  return target == ir::Target::Cpu ? "stream plain and streaming stores, reads" : "";
}

bool is_current(const Calibration& c) {
  const auto method = c.details.is_object() ? c.details.find("method") : c.details.end();
  const std::string stored = method != c.details.end() && method->is_string() ? method->get<std::string>() : "";
  const std::optional<ir::Target> target = ir::parse_target(c.backend);
  return stored == (target ? calibration_method(*target) : "");
}

nlohmann::json to_json(const Measurement& m) {
  return {{"best", m.best}, {"median", m.median}, {"worst", m.worst}, {"runs", m.runs}};
}

Measurement measurement_from_json(const nlohmann::json& j) {
  Measurement m;
  m.best = j.at("best").get<double>();
  m.median = j.value("median", m.best);
  m.worst = j.value("worst", m.best);
  m.runs = j.value("runs", 1);
  return m;
}

nlohmann::json to_json(const Calibration& c) {
  return {{"backend", c.backend},
          {"device", c.device},
          {"created", c.created},
          {"bandwidth_gbs", to_json(c.bandwidth_gbs)},
          {"peak_gflops", to_json(c.peak_gflops)},
          {"read_bandwidth_gbs", to_json(c.read_bandwidth_gbs)},
          {"details", c.details}};
}

Calibration calibration_from_json(const nlohmann::json& j) {
  Calibration c;
  c.backend = j.at("backend").get<std::string>();
  c.device = j.at("device").get<std::string>();
  c.created = j.value("created", "");
  c.bandwidth_gbs = measurement_from_json(j.at("bandwidth_gbs"));
  c.peak_gflops = measurement_from_json(j.at("peak_gflops"));
  if (j.contains("read_bandwidth_gbs")) c.read_bandwidth_gbs = measurement_from_json(j["read_bandwidth_gbs"]);
  c.details = j.value("details", nlohmann::json::object());
  return c;
}

std::string utc_timestamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ekb::runtime
