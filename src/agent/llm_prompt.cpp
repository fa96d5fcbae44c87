#include "agent/llm_prompt.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>

#include "codegen/target.h"  // code_fence_language
#include "ir/target.h"

namespace ekb::agent {

namespace {

// Steps shown in full (message, diff, timing); the earlier ones are one line each.
constexpr size_t kRecentSteps = 6;

// At most `max_lines` lines: the first ones and the last few, the cut said in between.
std::string shortened(const std::string& text, size_t max_lines, size_t tail_lines = 10) {
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    lines.push_back(rest.substr(0, eol));
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
  }
  if (lines.size() <= max_lines) return text;
  const size_t head = max_lines - std::min(tail_lines, max_lines / 2);
  std::string out;
  for (size_t i = 0; i < head; ++i) out.append(lines[i]).push_back('\n');
  out += fmt::format("... ({} lines left out) ...\n", lines.size() - max_lines);
  for (size_t i = lines.size() - (max_lines - head); i < lines.size(); ++i) out.append(lines[i]).push_back('\n');
  return out;
}

// Three significant figures: what the model needs of a time or a ratio; more is noise.
std::string num(double v) { return fmt::format("{:.3g}", v); }

// A diagnostic's file paths without their directories ("/tmp/run/w.steps/3.ekb:14:17" ->
// "3.ekb:14:17"): the loop's output directory is no part of the feedback, and a replay elsewhere
// must ask the same question.
std::string without_directories(const std::string& message) {
  // Runs of slashes count as one ("/tmp//run/...", as a TMPDIR with a trailing slash makes).
  static const std::regex path(R"((^|[\s'"(])(?:/+[^/\s:'"]+)+/+([^/\s:'"]+))");
  return std::regex_replace(message, path, "$1$2");
}

std::string fenced(std::string_view language, const std::string& text) {
  std::string body = text;
  if (!body.empty() && body.back() != '\n') body.push_back('\n');
  return fmt::format("```{}\n{}```\n", language, body);
}

std::string source_fence(std::string_view backend) {
  const auto target = ir::parse_target(backend);
  return target ? std::string(codegen::code_fence_language(*target)) : "c";
}

std::string analysis_section(const WorkloadAnalysis& a, double best_speedup, bool measured) {
  std::string out = "# Analysis\n";
  out += fmt::format("workload {} on {}\n", a.workload, a.backend);
  out += fmt::format("per call: {} FLOPs, {} bytes of compulsory traffic, arithmetic intensity {} FLOP/byte\n",
                     num(a.flops), num(a.bytes), num(a.arithmetic_intensity));
  if (measured) {
    out += fmt::format("baseline ({}): {} ms on this machine; ", a.baseline.empty() ? "native" : a.baseline,
                       num(a.baseline_ms));
    out += a.roofline_ms > 0 ? fmt::format("roofline bound: {} ms ({}x the baseline at best)\n", num(a.roofline_ms),
                                           num(a.baseline_ms / a.roofline_ms))
                             : "roofline bound: not calibrated\n";
    out += fmt::format("best so far: {}x the baseline\n", num(best_speedup));
  }
  if (!a.default_loop_ir.empty())
    out += "\nThe default lowering's loop IR (what the program compiles to without directives):\n" +
           fenced("", shortened(a.default_loop_ir, 80, 15));
  return out;
}

// "step 3 [schedule] +vectorize(C, j, 8): correctness, 0.25 ms, 1.3x"
std::string step_line(const Step& s, bool measured) {
  std::string line = fmt::format("step {} [{}] {}: {}", s.index, layer_name(s.layer), s.action.empty() ? "-" : s.action,
                                 s.outcome);
  if (!measured) return line;
  if (s.ms) line += fmt::format(", {} ms", num(*s.ms));
  if (s.speedup) line += fmt::format(", {}x the baseline", num(*s.speedup));
  if (s.roofline_fraction) line += fmt::format(", {}% of the roofline bound", num(100 * *s.roofline_fraction));
  return line;
}

// Outcomes whose message is about the measured time (and so carries noise).
bool timed_outcome(const std::string& outcome) {
  return outcome == "slower" || outcome == "kept" || outcome == "timing";
}

std::string history_section(const std::vector<Step>& history, bool measured) {
  if (history.empty()) return {};
  std::string out = "# What was tried\n";
  out +=
      "Outcomes: verify, compile, correctness or timing (the check it failed), slower (correct, not faster than "
      "the best), kept (the new best), unusable (the reply had no proposal).\n";
  const size_t recent_from = history.size() > kRecentSteps ? history.size() - kRecentSteps : 0;
  if (recent_from > 0) {
    out += "\nEarlier steps:\n";
    for (size_t i = 0; i < recent_from; ++i) out += step_line(history[i], measured) + "\n";
  }
  out += "\nRecent steps:\n";
  for (size_t i = recent_from; i < history.size(); ++i) {
    const Step& s = history[i];
    out += "\n" + step_line(s, measured) + "\n";
    if (!s.message.empty() && (measured || !timed_outcome(s.outcome))) {
      const std::string message = shortened(without_directories(s.message), 20, 5);
      out += message + (message.back() == '\n' ? "" : "\n");
    }
    // A kept step's change is already in the program; a failed one's shows what not to repeat.
    if (!s.diff.empty() && s.outcome != "kept") out += "Its change:\n" + fenced("diff", shortened(s.diff, 30, 5));
  }
  return out;
}

std::string next_section(const AgentState& state) {
  std::string out = fmt::format("# Next\nWork on the {} layer", layer_name(state.layer));
  out += " (another layer is allowed when it is clearly more promising; do not repeat a change that failed).\n";
  if (!state.legal_directives.empty()) {
    out += fmt::format("Directives legal in the {} layer here, with their syntax:\n", layer_name(state.layer));
    for (const std::string& d : state.legal_directives) out += "- " + d + "\n";
  }
  return out;
}

std::string reply_format_section(std::string_view target, std::string_view source_language) {
  const std::string header_target = target.empty() ? "" : std::string(target) + " ";
  std::string out = "# Reply format\n";
  out +=
      "Optionally one line of rationale, then exactly one fenced block holding the whole new text of ONE layer "
      "(not a diff, not several layers), one of:\n\n";
  out += fenced(kLayerFence, "schedule " + header_target + "{\n  ...every directive of the new schedule, one per line...\n}");
  out += "\n" + fenced(kLayerFence, "memory " + header_target + "{\n  ...every directive of the new memory layer...\n}");
  out += "(a memory block may be followed by the schedule block of the buffers its caches create)\n\n";
  out += fenced(kLayerFence, "pattern NAME {\n  ...an equivalent rewrite: the same name, params, inputs and outputs...\n}");
  out += "\n" + fenced(source_language, fmt::format("...a complete source file in {} obeying the task's interface...",
                                                     source_language));
  out += "\nOr reply with the single word STOP when nothing more is worth trying.\n";
  return out;
}

}  // namespace

std::string layer_block_target(std::string_view backend) {
  const auto target = ir::parse_target(backend);
  if (!target) return "";
  return ir::is_gpu(*target) ? "gpu" : "cpu";
}

std::string llm_prompt(const AgentState& state, PromptDetail detail) {
  const bool measured = detail == PromptDetail::Measured;
  static const WorkloadAnalysis kNone;
  const WorkloadAnalysis& a = state.analysis ? *state.analysis : kNone;
  const std::string target = layer_block_target(a.backend);
  const std::string source_language = source_fence(a.backend);
  std::string out =
      "You optimize one kernel one layer at a time: compute (an equivalent rewrite of the pattern), schedule "
      "(loop directives), memory (caches, layout, prefetch) or the emitted source. Each proposal is verified, "
      "compiled, checked for correctness and timed; it is kept when it is correct and faster than the best.\n\n";
  if (!a.task_statement.empty()) out += "# Task\n" + a.task_statement + (a.task_statement.back() == '\n' ? "\n" : "\n\n");
  out += analysis_section(a, state.best_speedup, measured) + "\n";
  out += "# The current best program\n" + fenced(kLayerFence, state.program);
  if (!state.source.empty()) out += "\nIts source (a kept source step):\n" + fenced(source_language, state.source);
  out += "\n";
  if (std::string h = history_section(state.history, measured); !h.empty()) out += h + "\n";
  out += next_section(state) + "\n";
  out += reply_format_section(target, source_language);
  return out;
}

}  // namespace ekb::agent
