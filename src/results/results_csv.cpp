#include "results/results_csv.h"

#include <fmt/core.h>

#include <cmath>
#include <vector>

namespace ekb::results {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

namespace {

// Empty for a missing or NaN value; shortest round-trip text otherwise.
std::string number(std::optional<double> v) {
  return v && !std::isnan(*v) ? fmt::format("{}", *v) : std::string();
}

constexpr const char* kHeader =
    "run,workload,task,domain,level,backend,solution,sample,compiled,correct,error,message,"
    "time_median_ms,time_p25_ms,time_p75_ms,time_runs,baseline_median_ms,baseline_p25_ms,"
    "baseline_p75_ms,baseline_runs,speedup,roofline_fraction,baseline_roofline_fraction,"
    "attainable_ms,bound,max_abs_error,compile_s,check_s,time_s,compile_cached,"
    "method,model,llm_calls,input_tokens,output_tokens,cost_usd,evaluations,wall_s";

}  // namespace

void write_results_csv(const RunReport& report, std::ostream& out) {
  out << kHeader << "\n";
  for (const auto& s : report.rows) {
    const eval::CandidateResult& r = s.result;
    auto time_fields = [](const std::optional<eval::TimeStats>& t) -> std::vector<std::string> {
      if (!t) return {"", "", "", ""};
      return {number(t->median_ms), number(t->p25_ms), number(t->p75_ms), std::to_string(t->runs)};
    };
    std::vector<std::string> f = {report.run.id, r.workload, r.task, s.facts.domain, s.facts.level, r.backend,
                                  r.solution, std::to_string(r.sample), r.compiled ? "1" : "0",
                                  r.correct ? "1" : "0",
                                  r.error == eval::ErrorKind::None ? "" : std::string(eval::error_kind_name(r.error)),
                                  r.message};
    for (auto& v : time_fields(r.time)) f.push_back(v);
    for (auto& v : time_fields(r.baseline)) f.push_back(v);
    f.push_back(number(r.speedup));
    f.push_back(number(s.roofline_fraction));
    f.push_back(number(s.baseline_roofline_fraction));
    f.push_back(number(s.attainable_ms));
    f.push_back(s.memory_bound ? (*s.memory_bound ? "memory" : "compute") : "");
    f.push_back(number(r.max_abs_error));
    f.push_back(number(r.cost.compile_s));
    f.push_back(number(r.cost.check_s));
    f.push_back(number(r.cost.time_s));
    f.push_back(r.cost.compile_cached ? "1" : "0");
    // The ledger: empty fields for a result without metadata (unknown, not zero).
    if (const auto& p = r.provenance) {
      for (std::string v : {p->method, p->model, std::to_string(p->ledger.llm_calls),
                            std::to_string(p->ledger.input_tokens), std::to_string(p->ledger.output_tokens),
                            number(p->ledger.cost_usd), std::to_string(p->ledger.evaluations), number(p->ledger.wall_s)})
        f.push_back(std::move(v));
    } else {
      f.insert(f.end(), 8, "");
    }
    for (size_t i = 0; i < f.size(); ++i) out << (i ? "," : "") << csv_field(f[i]);
    out << "\n";
  }
}

}  // namespace ekb::results
