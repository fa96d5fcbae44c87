#include "runtime/compile_step.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

namespace ekb::runtime {

namespace {

// Replaces every occurrence of `from` in `s` by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
    s.replace(p, from.size(), to);
  return s;
}

// The sentence of a failed harness check (kCheckFailureMarker) in a compiler log: clang prints
// `static assertion failed: ekb-check: ...`, gcc and nvcc quote the message.
std::optional<std::string> harness_check_failure(const std::string& log) {
  size_t begin = log.find(kCheckFailureMarker);
  if (begin == std::string::npos) return std::nullopt;
  begin += kCheckFailureMarker.size();
  size_t end = std::min(log.find('\n', begin), log.size());
  std::string sentence = log.substr(begin, end - begin);
  while (!sentence.empty() && (sentence.back() == '"' || sentence.back() == ' ' || sentence.back() == '\r'))
    sentence.pop_back();
  return sentence;
}

}  // namespace

std::string trim_compiler_log(const std::string& log, int max_lines, size_t max_chars) {
  // Compiler errors say "error:"; the linker's (undefined symbols) come first and do not.
  size_t start = std::string::npos;
  for (const char* marker : {"error:", "undefined reference", "undefined symbol"})
    start = std::min(start, log.find(marker));
  start = start == std::string::npos ? 0 : log.rfind('\n', start);
  start = start == std::string::npos ? 0 : start + (log[start] == '\n' ? 1 : 0);
  std::string out;
  int lines = 0;
  for (size_t p = start; p < log.size() && lines < max_lines; ++lines) {
    size_t e = log.find('\n', p);
    if (e == std::string::npos) e = log.size();
    out.append(log, p, e - p).push_back('\n');
    p = e + 1;
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars) + "...";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

CompileOutcome compile_into_cache(const CompileCache& cache, const std::string& backend, const std::string& key,
                                  const Source& source, const CompilerInvocation& compiler,
                                  std::chrono::steady_clock::time_point started) {
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  CompileOutcome out;
  const std::string& ext = compiler.artifact_ext;
  if (cache.contains(key, ext)) {
    out.ok = true;
    out.cached = true;
    out.artifact = Artifact{backend, cache.artifact_path(key, ext), key};
    out.seconds = elapsed();
    return out;
  }

  std::string src_path = cache.temporary_path(compiler.source_ext);
  {
    std::ofstream f(src_path, std::ios::binary);
    f.write(source.text.data(), static_cast<std::streamsize>(source.text.size()));
    if (!f) throw std::runtime_error("cannot write " + src_path);
  }
  std::string artifact_path = cache.temporary_path(ext);
  std::vector<std::string> argv = compiler.head;
  argv.insert(argv.end(), {"-o", artifact_path, src_path});
  argv.insert(argv.end(), compiler.tail.begin(), compiler.tail.end());
  CommandOptions options = compiler.command;
  options.cwd = cache.directory();
  CommandResult r = run_command(argv, options);
  std::error_code ec;
  std::filesystem::remove(src_path, ec);
  if (!r.started) throw std::runtime_error("cannot run the compiler '" + argv[0] + "': " + r.output);
  if (!r.ok()) {
    std::filesystem::remove(artifact_path, ec);
    std::string name = source.origin.empty() ? "solution" : source.origin;
    out.log = replace_all(r.output, src_path, name);
    if (r.timed_out)
      out.log += "\n(the compiler ran past " + std::to_string(options.timeout_s) + " s)";
    else if (r.term_signal)
      out.log += "\n(the compiler was killed by signal " + std::to_string(r.term_signal) + ")";
    out.message = harness_check_failure(out.log).value_or(trim_compiler_log(out.log));
    out.seconds = elapsed();
    return out;
  }
  out.ok = true;
  out.artifact = Artifact{backend, cache.publish(artifact_path, key, ext), key};
  cache.store_source(key, source.text);
  out.seconds = elapsed();
  return out;
}

}  // namespace ekb::runtime
