#include "workspace/workspace.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <openssl/hmac.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "codegen/signature.h"
#include "eval/candidate_evaluation.h"
#include "eval/solution_set.h"
#include "eval/workload_reference.h"
#include "runtime/calibration.h"
#include "runtime/compile_cache.h"
#include "runtime/paths.h"
#include "suite/task_statement.h"
#include "workspace/agent_usage.h"

namespace ekb::workspace {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kStateDir = ".ekb";
constexpr const char* kInfoFile = "workspace.json";
constexpr const char* kCheckLog = "checks.jsonl";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& path, const std::string& text, fs::perms perms = fs::perms(0644)) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  fs::permissions(path, perms);
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_id() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// Single quotes for the shell: the check script must work from any directory name.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}


std::vector<std::string> argument_names(const ir::Instance& inst) {
  std::vector<std::string> names;
  for (ir::TensorRole role : {ir::TensorRole::Input, ir::TensorRole::Output})
    for (const auto& t : inst.tensors)
      if (t.decl->role == role) names.push_back(t.decl->name);
  for (const auto& p : inst.pattern().params) names.push_back(p.name);
  return names;
}

// The starting file: the exact signature with an empty body. It compiles and computes nothing
// (the harness reports its outputs as unwritten), so it gives away nothing of the answer.
std::string skeleton(const ir::Instance& inst, ir::Target target, const std::string& language,
                     const std::string& workload) {
  std::string signature = codegen::kernel_signature(inst, target);
  if (!signature.empty() && signature.back() == ';') signature.pop_back();
  const std::string todo = "  // TODO: write every element of every output (TASK.md says what to compute).\n";
  switch (target) {
    case ir::Target::Cpu:
      return fmt::format(
          "// {} on cpu. The harness includes ekb_abi.h before this file; `./check` tests and times it.\n"
          "#include <stdint.h>\n\n{}{} {{\n{}}}\n",
          workload, language == "cpp" ? "extern \"C\" " : "", signature, todo);
    case ir::Target::Cuda:
      return fmt::format("// {} on cuda. `./check` tests and times it.\n#include <cuda_runtime.h>\n\n{} {{\n{}}}\n",
                         workload, signature, todo);
    case ir::Target::OpenCL: {
      // "/* kernel arguments, by name */ (ARGS)" -> a kernel taking them, and its launch line.
      std::string args = signature.substr(signature.find('('));
      std::string names;
      for (const auto& n : argument_names(inst)) names += (names.empty() ? "" : ", ") + n;
      return fmt::format("// {} on opencl. `./check` tests and times it.\n"
                         "__kernel void solution{} {{\n{}}}\n\n"
                         "/* ekb-launch\nkernel solution global=[1] args=[{}]\n*/\n",
                         workload, args, todo, names);
    }
  }
  return "";
}

std::string readme(const suite::WorkloadEntry& w, ir::Target target, const std::string& solution_file) {
  std::string abi = target == ir::Target::Cpu ? "- `ekb_abi.h`: the kernel ABI header the harness includes before your code.\n" : "";
  return fmt::format(
      "# EdgeKernelBench task: `{0}` on `{1}`\n\n"
      "Make `{2}` a correct and fast kernel for the task in `TASK.md`.\n\n"
      "## Files\n\n"
      "- `TASK.md`: what to compute (an IR program that defines the result exactly), the tensors, the\n"
      "  exact signature, the rules, and how the kernel is judged.\n"
      "- `{2}`: your kernel. It starts as a skeleton with the right signature that computes nothing.\n"
      "{3}"
      "- `check`: run `./check` to compile, test and time `{2}` with the benchmark's own harness.\n\n"
      "## `./check`\n\n"
      "Prints the compiler's errors; for wrong results, which output differs, where (index), the\n"
      "value it got against the expected one and the tolerance; for correct ones, the median time and\n"
      "its spread (25th-75th percentile) against the baseline's, and the speedup. It exits with 0\n"
      "when the kernel is correct. `./check --no-timing` checks correctness only (faster).\n\n"
      "Every call draws fresh random inputs, so a kernel must compute its outputs: nothing can be\n"
      "copied from an earlier call. Every call is counted and its time recorded as part of your\n"
      "budget.\n\n"
      "## Rules\n\n"
      "- Only `{2}` is collected at the end; other files you create here are ignored.\n"
      "- The kernel runs in a sandbox: no files, network, processes or threads that outlive a call.\n"
      "- Leave `.ekb/` alone: it is the harness's state.\n",
      w.full_name(), ir::target_name(target), solution_file, abi);
}

// The statement `ekb prompt` prints, with its last section asking for a file instead of a reply.
std::string workspace_statement(const suite::WorkloadEntry& w, const ir::Instance& inst, ir::Target target,
                                const std::string& solution_file) {
  std::string statement = suite::task_statement(w, inst, target);
  const size_t answer = statement.rfind("## Answer");
  if (answer != std::string::npos) statement.erase(answer);
  return statement + fmt::format("## Answer\n\nWrite the complete source file to `{}`; run `./check` to test and time it.\n",
                                 solution_file);
}

json info_json(const WorkspaceInfo& i) {
  return {{"id", i.id},
          {"workload", i.workload},
          {"backend", i.backend},
          {"solution_file", i.solution_file},
          {"skeleton_hash", i.skeleton_hash},
          {"prompt_hash", i.prompt_hash},
          {"created", i.created},
          {"created_unix_s", i.created_unix_s},
          {"suite_dir", i.suite_dir}};
}

json check_json(const CheckRecord& r) {
  return {{"number", r.number},   {"started", r.started},     {"wall_s", r.wall_s},
          {"compiled", r.compiled}, {"correct", r.correct},   {"error", r.error},
          {"speedup", r.speedup ? json(*r.speedup) : json(nullptr)}, {"solution_hash", r.solution_hash}};
}

// One line, appended with O_APPEND in a single write: concurrent checks never interleave lines.
void append_line(const fs::path& path, const std::string& line, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot append to " + path.string());
  std::string text = line + "\n";
  ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) throw std::runtime_error("cannot append to " + path.string());
}

// ---- the check ledger outside the workspace ----

fs::path ledger_dir() { return fs::path(runtime::default_cache_dir()) / "workspaces"; }
fs::path ledger_record_path(const WorkspaceInfo& info) { return ledger_dir() / (info.id + ".json"); }

// HMAC-SHA256 of `text` under `key`, in hex.
std::string ledger_mac(const std::string& key, const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(text.data()),
            text.size(), digest, &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

// What ID.json binds the ledger to. `key` is 32 random bytes in hex.
struct LedgerBinding {
  std::string key, dir, workload;
};

std::optional<LedgerBinding> read_binding(const WorkspaceInfo& info) {
  std::error_code ec;
  if (!fs::exists(ledger_record_path(info), ec)) return std::nullopt;
  json j = json::parse(read_text(ledger_record_path(info)), nullptr, false);
  if (!j.is_object() || j.value("id", "") != info.id) return std::nullopt;
  return LedgerBinding{j.value("key", ""), j.value("dir", ""), j.value("workload", "")};
}

// The ledger's lines checked against `binding`: each line's "prev" is the HMAC of the line before
// ("" for the first), its "mac" the HMAC of the line without "mac", its number its position.
CheckLedger verify_lines(const fs::path& path, const LedgerBinding& binding, std::string* last_mac = nullptr) {
  CheckLedger out;
  std::ifstream in(path);
  std::string line, prev;
  while (std::getline(in, line)) {
    if (line.empty()) continue;  // the line written at create
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("mac") || !j["mac"].is_string()) {
      out.tampered = "a line of the ledger is not a signed check record";
      break;
    }
    const std::string mac = j["mac"].get<std::string>();
    j.erase("mac");
    if (j.value("prev", "") != prev || ledger_mac(binding.key, j.dump()) != mac ||
        j.value("number", int64_t{0}) != static_cast<int64_t>(out.checks.size()) + 1) {
      out.tampered = fmt::format("check record {} of the ledger was edited, removed or inserted", out.checks.size() + 1);
      break;
    }
    prev = mac;
    CheckRecord r;
    r.number = j.value("number", int64_t{0});
    r.started = j.value("started", "");
    r.wall_s = j.value("wall_s", 0.0);
    r.compiled = j.value("compiled", false);
    r.correct = j.value("correct", false);
    r.error = j.value("error", "");
    if (j.contains("speedup") && j["speedup"].is_number()) r.speedup = j["speedup"].get<double>();
    r.solution_hash = j.value("solution_hash", "");
    out.checks.push_back(std::move(r));
  }
  if (last_mac) *last_mac = prev;
  return out;
}

// A lock on the ledger held while a check number is taken and its line appended.
class LedgerLock {
 public:
  explicit LedgerLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw std::runtime_error("cannot lock " + path.string());
  }
  ~LedgerLock() { ::close(fd_); }
  LedgerLock(const LedgerLock&) = delete;
  LedgerLock& operator=(const LedgerLock&) = delete;

 private:
  int fd_;
};

std::string time_text(const eval::TimeStats& t) {
  return fmt::format("{:.4g} ms median (p25 {:.4g}, p75 {:.4g}; {} runs)", t.median_ms, t.p25_ms, t.p75_ms, t.runs);
}

std::string indent(const std::string& text, const std::string& prefix = "  ") {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += prefix + line + "\n";
  return out;
}

// The next sample index free for `workload_name` in `pattern_dir` (after every code or metadata
// file of the workload: WORKLOAD.EXT is sample 0, WORKLOAD.sN.* sample N).
int next_free_sample(const fs::path& pattern_dir, const std::string& workload_name) {
  std::error_code ec;
  int next = 0;
  if (!fs::is_directory(pattern_dir, ec)) return 0;
  for (const auto& e : fs::directory_iterator(pattern_dir, ec)) {
    const std::string file = e.path().filename().string();
    if (!file.starts_with(workload_name + ".")) continue;
    static const std::regex kSample(R"(^\.s(\d+)\.)");
    std::smatch m;
    const std::string rest = file.substr(workload_name.size());
    if (std::regex_search(rest, m, kSample)) next = std::max(next, std::stoi(m[1]) + 1);
    else if (rest.find('.', 1) == std::string::npos || rest == ".meta.json") next = std::max(next, 1);
  }
  return next;
}

}  // namespace

WorkspaceInfo create_workspace(const suite::WorkloadEntry& w, const CreateOptions& opt) {
  const ir::Target target = opt.backend;
  if (opt.language != "c" && opt.language != "cpp") throw std::invalid_argument("--lang must be c or cpp");
  if (opt.language == "cpp" && target != ir::Target::Cpu)
    throw std::invalid_argument("--lang cpp is for the cpu backend");
  std::error_code ec;
  if (fs::exists(opt.dir, ec) && !(fs::is_directory(opt.dir, ec) && fs::is_empty(opt.dir, ec)))
    throw std::invalid_argument("'" + opt.dir + "' exists and is not an empty directory");
  const fs::path dir = opt.dir;
  fs::create_directories(dir / kStateDir);

  ir::Instance inst = suite::bind_workload(w);
  WorkspaceInfo info;
  info.id = random_id();
  info.workload = w.full_name();
  info.backend = std::string(ir::target_name(target));
  info.solution_file = "solution" + eval::source_solution_extension(target, opt.language == "cpp");
  info.created = runtime::utc_timestamp_now();
  info.created_unix_s = unix_now();
  info.suite_dir = opt.suite_dir;

  const std::string statement = workspace_statement(w, inst, target, info.solution_file);
  const std::string start = skeleton(inst, target, opt.language, w.full_name());
  info.prompt_hash = runtime::content_key({statement});
  info.skeleton_hash = runtime::content_key({start});
  write_text(dir / "TASK.md", statement);
  write_text(dir / info.solution_file, start);
  write_text(dir / "README.md", readme(w, target, info.solution_file));
  if (target == ir::Target::Cpu) write_text(dir / "ekb_abi.h", read_text(runtime::abi_header_path()));
  std::string suite_option = opt.suite_dir.empty() ? "" : " --suite " + shell_quote(opt.suite_dir);
  write_text(dir / "check",
             fmt::format("#!/bin/sh\n# Compiles, tests and times {} with EdgeKernelBench's harness (README.md).\n"
                         "exec {}{} workspace check \"$(dirname \"$0\")\" \"$@\"\n",
                         info.solution_file, shell_quote(opt.ekb_path), suite_option),
             fs::perms(0755));
  write_text(dir / kStateDir / kInfoFile, info_json(info).dump(2) + "\n");
  // The ledger outside the folder: private to the user, bound to this directory and workload.
  fs::create_directories(ledger_dir());
  fs::permissions(ledger_dir(), fs::perms::owner_all, ec);
  std::string key;
  std::random_device rd;
  for (int i = 0; i < 8; ++i) key += fmt::format("{:08x}", rd());
  append_line(ledger_record_path(info),
              json{{"id", info.id}, {"dir", fs::canonical(dir).string()}, {"workload", info.workload}, {"key", key}}.dump(),
              0600);
  append_line(dir / kStateDir / kCheckLog, "");  // both logs exist from the start: a missing one was removed
  append_line(outside_log_path(info), "", 0600);
  return info;
}

WorkspaceInfo read_workspace(const std::string& dir) {
  const fs::path path = fs::path(dir) / kStateDir / kInfoFile;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw std::invalid_argument("'" + dir + "' is not a workspace (no " + path.string() +
                                ")\n  hint: `ekb workspace create WORKLOAD DIR` makes one");
  json j = json::parse(read_text(path), nullptr, false);
  if (!j.is_object() || !j.contains("workload")) throw std::invalid_argument(path.string() + ": damaged workspace state");
  WorkspaceInfo i;
  i.id = j.value("id", "");
  i.workload = j.value("workload", "");
  i.backend = j.value("backend", "cpu");
  i.solution_file = j.value("solution_file", "solution.c");
  i.skeleton_hash = j.value("skeleton_hash", "");
  i.prompt_hash = j.value("prompt_hash", "");
  i.created = j.value("created", "");
  i.created_unix_s = j.value("created_unix_s", 0.0);
  i.suite_dir = j.value("suite_dir", "");
  return i;
}

std::string outside_log_path(const WorkspaceInfo& info) {
  return (fs::path(runtime::default_cache_dir()) / "workspaces" / (info.id + ".jsonl")).string();
}

CheckRecord log_check(const WorkspaceInfo& info, const std::string& dir, CheckRecord r) {
  std::optional<LedgerBinding> binding = read_binding(info);
  // Without its binding the ledger cannot be signed; collect reports it, so the call still counts
  // in the copy and the check itself goes on.
  if (!binding) binding = LedgerBinding{"", "", ""};
  LedgerLock lock(outside_log_path(info) + ".lock");
  std::string prev;
  r.number = static_cast<int64_t>(verify_lines(outside_log_path(info), *binding, &prev).checks.size()) + 1;
  json line = check_json(r);
  line["prev"] = prev;
  line["mac"] = ledger_mac(binding->key, line.dump());
  append_line(outside_log_path(info), line.dump(), 0600);
  append_line(fs::path(dir) / kStateDir / kCheckLog, line.dump());
  return r;
}

CheckLedger read_ledger(const WorkspaceInfo& info, const std::string& dir) {
  std::error_code ec;
  std::optional<LedgerBinding> binding = read_binding(info);
  if (!binding || !fs::exists(outside_log_path(info), ec))
    return {{}, "the ledger kept outside the workspace for id '" + info.id +
                    "' is missing (deleted, or .ekb/workspace.json was edited)"};
  if (binding->dir != fs::weakly_canonical(dir, ec).string())
    return {{}, "the ledger of id '" + info.id + "' belongs to the workspace " + binding->dir +
                    " (.ekb/workspace.json was copied or edited)"};
  if (binding->workload != info.workload)
    return {{}, "the ledger is for " + binding->workload + ", the workspace says " + info.workload};
  return verify_lines(outside_log_path(info), *binding);
}

eval::CandidateResult check_solution(const suite::WorkloadEntry& w, const WorkspaceInfo& info, const std::string& dir,
                                     bool timing, uint64_t seed) {
  ir::Instance inst = suite::bind_workload(w);
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(ir::target_from_name(info.backend));
  // No reference cache: inputs come from a fresh seed on every call, so nothing would be reused.
  eval::WorkloadReference reference(inst, seed, nullptr);
  eval::CandidateRef c;
  c.workload = w;
  c.solution = info.solution_file;
  c.path = (fs::path(dir) / info.solution_file).string();
  eval::EvalOptions options;
  options.time = timing;
  const eval::Baseline baseline = eval::make_baseline(inst, backend->target());
  return eval::evaluate_candidate(*backend, reference, baseline, c, options);
}

std::string check_feedback(const eval::CandidateResult& r, const WorkspaceInfo& info, int64_t call_number) {
  std::string out = fmt::format("check #{}: {} on {}, {}\n", call_number, info.workload, info.backend, info.solution_file);
  if (r.error == eval::ErrorKind::Internal) return out + "harness error (not your kernel's fault):\n" + indent(r.message);
  if (!r.compiled) {
    out += fmt::format("compile: FAILED ({})\n", eval::error_kind_name(r.error));
    return out + indent(r.message);
  }
  out += fmt::format("compile: ok ({:.2f} s{})\n", r.cost.compile_s, r.cost.compile_cached ? ", cached" : "");
  if (!r.correct) {
    out += fmt::format("correctness: FAILED ({})\n", eval::error_kind_name(r.error));
    return out + indent(r.message);
  }
  out += "correctness: ok (random trials, an edge-value trial, and a re-check on fresh inputs after timing)\n";
  if (!r.time || !r.baseline || !r.speedup) return out + "time: not measured (--no-timing)\n";
  out += "time:     " + time_text(*r.time) + "\n";
  out += "baseline: " + time_text(*r.baseline) + "\n";
  // The spread of the ratio from the quartiles: how far apart the two could plausibly be.
  double low = r.baseline->p25_ms / r.time->p75_ms, high = r.baseline->p75_ms / r.time->p25_ms;
  out += fmt::format("speedup:  {:.2f}x (quartile range {:.2f}x-{:.2f}x): {}\n", *r.speedup, low, high,
                     *r.speedup > 1 ? "faster than the baseline" : "not faster than the baseline");
  return out;
}

Collected collect_workspace(const std::string& dir, const CollectOptions& opt) {
  const WorkspaceInfo info = read_workspace(dir);
  if (opt.out.empty()) throw std::invalid_argument("collect needs --out SOLUTIONS_DIR");
  const std::string pattern = info.workload.substr(0, info.workload.find('/'));
  const std::string name = info.workload.substr(info.workload.find('/') + 1);
  const fs::path pattern_dir = fs::path(opt.out) / pattern;
  const int sample = opt.sample.value_or(next_free_sample(pattern_dir, name));
  if (sample < 0) throw std::invalid_argument("--sample must be 0 or more");
  fs::create_directories(pattern_dir);

  Collected c;
  eval::SolutionMeta& m = c.meta;
  m.sample = sample;
  m.backend = info.backend;
  m.prompt_hash = info.prompt_hash;
  std::optional<AgentUsage> usage;
  std::string transcript_text;
  if (!opt.transcript.empty()) {
    transcript_text = read_text(opt.transcript);
    usage = parse_agent_usage(transcript_text);
  }
  const std::string agent = !opt.agent.empty() ? opt.agent : usage ? usage->agent : "unknown";
  m.method = "agent:" + agent;
  m.profile = agent;
  m.model = !opt.model.empty() ? opt.model : usage ? usage->model : "";
  if (usage) m.ledger = usage->ledger;
  const CheckLedger ledger = read_ledger(info, dir);
  const std::vector<CheckRecord>& checks = ledger.checks;
  m.check_calls = static_cast<int64_t>(checks.size());
  m.ledger.evaluations = *m.check_calls;
  // The driver's measurement of the agent when given; else since the workspace was made.
  m.ledger.wall_s = opt.wall_s > 0 ? opt.wall_s : std::max(0.0, unix_now() - info.created_unix_s);
  m.latency_s = m.ledger.wall_s;

  const fs::path solution = fs::path(dir) / info.solution_file;
  const std::string base = name + ".s" + std::to_string(sample);
  std::error_code ec;
  for (const fs::path& p : {pattern_dir / (base + fs::path(info.solution_file).extension().string()),
                            pattern_dir / eval::meta_file_name(name, sample)})
    if (fs::exists(p, ec))
      throw std::invalid_argument(p.string() + " already exists\n  hint: --sample N picks another sample index");
  if (!ledger.tampered.empty()) {
    // The count cannot be trusted, so neither can the comparison at equal budget: a failed sample.
    m.status = "failed";
    m.error = "the check ledger does not verify: " + ledger.tampered;
  } else if (!fs::exists(solution, ec)) {
    m.status = "no_code";
    m.error = "the agent left no " + info.solution_file;
  } else {
    const std::string code = read_text(solution);
    if (runtime::content_key({code}) == info.skeleton_hash) {
      m.status = "no_code";
      m.error = "the agent left the starting skeleton unchanged";
    } else {
      c.solution_path = (pattern_dir / (base + solution.extension().string())).string();
      write_text(c.solution_path, code);
    }
  }
  if (!opt.transcript.empty()) {
    // Kept only as a text or JSON extension, which no backend reads as a solution.
    std::string ext = fs::path(opt.transcript).extension().string();
    if (ext != ".json" && ext != ".jsonl" && ext != ".log") ext = ".txt";
    m.transcript = base + ".transcript" + ext;
    c.transcript_path = (pattern_dir / m.transcript).string();
    write_text(c.transcript_path, transcript_text);
  }
  c.meta_path = (pattern_dir / eval::meta_file_name(name, sample)).string();
  write_text(c.meta_path, eval::to_json(m).dump(2) + "\n");
  return c;
}

}  // namespace ekb::workspace
