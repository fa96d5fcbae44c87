#include "tvm/tvm_compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "codegen/signature.h"
#include "ir/inputs.h"
#include "lower/lower.h"
#include "runtime/compile_cache.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"
#include "tvm/bridge_server.h"
#include "tvm/lir_json.h"

namespace ekb::tvm {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kInstallHint = "run scripts/install-deps.sh to create the TVM environment";

// What identifies the bridge and the TVM it runs: every bridge source file (path and text) and
// the versions of the installed apache-tvm and apache-tvm-ffi (their dist-info directories).
std::string environment_key(const TvmOptions& o) {
  static std::mutex m;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(m);
  const std::string id = o.python + "\n" + o.bridge_dir;
  if (auto it = memo.find(id); it != memo.end()) return it->second;
  std::error_code ec;
  if (!fs::exists(o.python, ec))
    throw EnvironmentError("the TVM environment's interpreter " + o.python + " does not exist: " + kInstallHint);
  const fs::path pkg = fs::path(o.bridge_dir) / "ekb_tvm";
  if (!fs::is_directory(pkg, ec))
    throw EnvironmentError("the TVM bridge " + pkg.string() + " does not exist (set EKB_TVM_BRIDGE)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(pkg, ec))
    if (e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string parts;
  for (const auto& f : files) parts += f.filename().string() + "\n" + read_file(f) + "\n";
  // <venv>/bin/python -> <venv>/lib/python3.X/site-packages/apache_tvm-VERSION.dist-info
  std::vector<std::string> versions;
  const fs::path venv = fs::path(o.python).parent_path().parent_path();
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec)) {
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(lib.path() / "site-packages", ec2)) {
      const std::string n = e.path().filename().string();
      if (n.starts_with("apache_tvm") && n.ends_with(".dist-info")) versions.push_back(n);
    }
  }
  std::sort(versions.begin(), versions.end());
  if (versions.empty())
    throw EnvironmentError("apache-tvm is not installed in " + venv.string() + ": " + kInstallHint);
  for (const auto& v : versions) parts += v + "\n";
  std::string key = runtime::content_key({parts});
  memo[id] = key;
  return key;
}

}  // namespace

TvmOptions default_options() {
  TvmOptions o;
  const char* py = std::getenv("EKB_TVM_PYTHON");
  o.python = py && *py ? py : std::string(EKB_SOURCE_DIR) + "/.venv-tvm/bin/python";
  const char* bridge = std::getenv("EKB_TVM_BRIDGE");
  o.bridge_dir = bridge && *bridge ? bridge : std::string(EKB_SOURCE_DIR) + "/python";
  return o;
}

namespace {

// The loop IR the bridge translates: the compute layer's default lowering (its schedule and memory
// layers ignored). On cpu every temp is a buffer of its own, which TVM places (stack or its
// workspace). On cuda and opencl it is the native compiler's default gpu lowering: its kernels
// (one per stage: a stage's outermost independent loops over blocks and threads, the rest in
// each thread, or one thread for a stage that has none) and its temps in the scratch workspace,
// which the wrapper around TVM's kernels provides (docs/TVM.md, "The gpu route").
lir::Func lower_for_tvm(const ir::Instance& inst, ir::Target target, bool partition_loops = true) {
  lower::LowerOptions lo = ir::is_gpu(target) ? lower::lower_options_for(target) : lower::LowerOptions{};
  lo.target = target;
  lo.apply_layers = false;
  // Half arithmetic in f32: the translation keeps half values as their bits (translate.py).
  lo.widen_half_precision = true;
  lo.keep_half_temps = false;
  lo.partition_loops = partition_loops;
  if (!ir::is_gpu(target)) lo.storage.max_stack_bytes = std::numeric_limits<int64_t>::max();
  return lower::lower(inst, lo);
}

// Why MetaSchedule cannot tune `inst`'s compute layer, or "" when it can be tried: its rules
// schedule blocks, which only pure definitions have (an ordered update runs in program order).
std::string why_not_tunable(const ir::Instance& inst) {
  const auto& stmts = inst.pattern().stmts;
  const std::vector<bool> pure = ir::pure_definitions(inst, stmts);
  for (size_t i = 0; i < stmts.size(); ++i)
    if (!pure[i])
      return "the compute layer is not all pure definitions (line " + std::to_string(stmts[i].loc.line) + " is " +
             (stmts[i].kind == ir::StmtKind::Assign ? "an ordered update of " + stmts[i].tensor
                                                     : std::string("a loop of ordered updates")) +
             ")";
  return "";
}

// This machine's CPU (/proc/cpuinfo's model name) and core count: tuning records are per device.
std::string cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown cpu";
  while (std::getline(in, line))
    if (line.starts_with("model name")) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + " x" + std::to_string(std::thread::hardware_concurrency());
}

}  // namespace

std::string request_json(const ir::Instance& inst, ir::Target target, const TvmOptions& options) {
  lir::Func f = lower_for_tvm(inst, target);
  json req;
  req["backend"] = std::string(ir::target_name(target));
  // A tuned compile is for this machine's CPU: MetaSchedule's vector widths and tile sizes
  // follow the target, and the native compiler's baseline is built with -march=native too.
  const bool native = options.native_cpu || options.tune_trials > 0;
  req["native"] = native;
  // Code for this CPU is cached for this CPU only.
  if (native && target == ir::Target::Cpu) req["cpu"] = cpu_identity();
  req["signature"] = codegen::kernel_signature(inst, target);
  try {
    req["func"] = func_to_json(f);
  } catch (const std::invalid_argument& e) {
    throw CompileError(std::string("translate: ") + e.what());
  }
  if (options.tune_trials > 0) {
    if (ir::is_gpu(target)) throw CompileError("tune: MetaSchedule tuning is built for cpu only");
    // MetaSchedule gets the stages unpartitioned (boundary reads guarded, one loop nest per
    // definition, as TE writes them): it tiles them itself. The untuned fallback builds "func".
    req["tune"] = {{"trials", options.tune_trials}, {"device", cpu_identity()}, {"not_tunable", why_not_tunable(inst)}};
    // MetaSchedule's runner fills inputs at random by default; index inputs outside their declared
    // domains make a gather read far out of bounds and every trial crash.
    json ranges = json::object();
    for (const ir::TensorInstance& t : inst.tensors) {
      if (t.decl->role != ir::TensorRole::Input || t.decl->domain.kind == ir::DomainKind::Spd) continue;
      const ir::ValueRange r = ir::input_value_range(inst, t);
      ranges[t.decl->name] = r.is_float ? json::array({r.flo, r.fhi}) : json::array({r.ilo, r.ihi});
    }
    req["tune"]["input_ranges"] = std::move(ranges);
    try {
      req["tune"]["func"] = func_to_json(lower_for_tvm(inst, target, false));
    } catch (const std::invalid_argument& e) {
      req["tune"]["not_tunable"] = std::string("translate: ") + e.what();
    }
  }
  return req.dump();
}

std::string records_root(const TvmOptions& options) {
  return (fs::path(options.cache_dir.empty() ? runtime::default_cache_dir() : options.cache_dir) / "tvm-records")
      .string();
}

std::string records_dir(const TvmOptions& options, const std::string& key) {
  return (fs::path(records_root(options)) / key).string();
}

namespace {

// The bridge's result for `request` (cached by content hash with the environment's key): sets
// `key` and `cached`. A bridge that fails to run throws; a result saying ok: false is returned.
json bridge_result(const std::string& request, const TvmOptions& options, std::string& key, bool& cached) {
  key = runtime::content_key({"tvm-bridge", environment_key(options), request});
  runtime::CompileCache cache(options.cache_dir.empty() ? runtime::default_cache_dir() : options.cache_dir, "tvm");
  const std::string path = cache.artifact_path(key, ".json");
  json result;
  cached = false;
  if (cache.contains(key, ".json")) {
    result = json::parse(read_file(path), nullptr, false);
    cached = !result.is_discarded();
  }
  if (cached) return result;
  const std::string req_path = cache.temporary_path(".request.json");
  const std::string res_path = cache.temporary_path(".json");
  {
    // Where the records go is not part of the key: the key names them.
    json sent = json::parse(request);
    if (sent.contains("tune")) sent["tune"]["records_dir"] = records_dir(options, key);
    std::ofstream f(req_path, std::ios::binary);
    f << sent.dump();
  }
  runtime::CommandResult r = bridge_request({options.python, options.bridge_dir}, req_path, res_path, options.timeout_s);
  std::error_code ec;
  fs::remove(req_path, ec);
  if (!r.ok()) {
    fs::remove(res_path, ec);
    std::string why = r.timed_out ? "timed out" : !r.started ? "could not start" : "failed";
    std::string text = r.output.size() > 4000 ? r.output.substr(r.output.size() - 4000) : r.output;
    if (text.find("No module named 'tvm'") != std::string::npos)
      throw EnvironmentError("the TVM environment has no tvm package: " + std::string(kInstallHint));
    if (!r.started) throw EnvironmentError("the TVM bridge " + why + " (" + options.python + "): " + kInstallHint);
    if (r.timed_out) throw BridgeTimedOut("the TVM bridge " + why + ": " + text);
    throw CompileError("the TVM bridge " + why + ": " + text);
  }
  result = json::parse(read_file(res_path), nullptr, false);
  if (result.is_discarded()) {
    fs::remove(res_path, ec);
    throw CompileError("the TVM bridge wrote no result: " + r.output);
  }
  cache.publish(res_path, key, ".json");
  return result;
}

// A tuned compile whose search ran past the bridge's limit: the untuned translation (compiled, or
// read from the cache), its "tuning" saying why, kept under the tuned request's key as well so that
// a later compile does not pay for the search again.
json untuned_after_search_timeout(const ir::Instance& inst, ir::Target target, const TvmOptions& options,
                                  const std::string& tuned_key) {
  TvmOptions untuned = options;
  untuned.tune_trials = 0;
  std::string key;
  bool cached = false;
  json result = bridge_result(request_json(inst, target, untuned), untuned, key, cached);
  if (!result.value("ok", false)) return result;
  result["tuning"] = {{"tuned", false},
                      {"trials", options.tune_trials},
                      {"note", "MetaSchedule's search ran past the bridge's limit of " +
                                   std::to_string(static_cast<int>(options.timeout_s)) + " s"}};
  runtime::CompileCache cache(options.cache_dir.empty() ? runtime::default_cache_dir() : options.cache_dir, "tvm");
  const std::string path = cache.temporary_path(".json");
  std::ofstream(path, std::ios::binary) << result.dump();
  cache.publish(path, tuned_key, ".json");
  return result;
}

}  // namespace

TvmOutput compile(const ir::Instance& inst, ir::Target target, const TvmOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string request = request_json(inst, target, options);
  TvmOutput out;
  json result;
  try {
    result = bridge_result(request, options, out.key, out.cached);
  } catch (const BridgeTimedOut&) {
    if (options.tune_trials <= 0) throw;
    result = untuned_after_search_timeout(inst, target, options, out.key);
  }
  out.tvmscript = result.value("tvmscript", "");
  out.assembly = result.value("asm", "");
  out.tvm_version = result.value("tvm_version", "");
  if (!result.value("ok", false)) throw CompileError("tvm: " + result.value("message", std::string("(no message)")));
  if (result.contains("tuning")) {
    const json& t = result["tuning"];
    TuningOutcome tuning;
    tuning.tuned = t.value("tuned", false);
    tuning.note = t.value("note", "");
    tuning.trials = t.value("trials", 0);
    tuning.records = t.value("records", "");
    // A result read from the cache ran no search now, whatever the call that wrote it did.
    tuning.tuned_now = !out.cached && t.value("tuned_now", false);
    tuning.tuning_s = tuning.tuned_now ? t.value("tuning_s", 0.0) : 0.0;
    out.tuning = tuning;
  }
  out.source.language = target == ir::Target::Cuda     ? runtime::Language::Cuda
                        : target == ir::Target::OpenCL ? runtime::Language::OpenCL
                                                       : runtime::Language::C;
  out.source.text = result.value("source", "");
  out.source.origin = std::string(options.tune_trials > 0 ? kTvmTuned : kTvmDefault);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

GpuCandidates gpu_candidates(const ir::Instance& inst, ir::Target target, int count, int seed,
                             const TvmOptions& options) {
  if (!ir::is_gpu(target)) throw CompileError("gpu candidates: " + std::string(ir::target_name(target)) + " is no gpu");
  // The block form is rebuilt from the cpu lowering without loop partitioning, as for cpu tuning:
  // MetaSchedule's rules bind threads themselves; the gpu lowering's kernels are already bound.
  GpuCandidates out;
  out.note = why_not_tunable(inst);
  json func;
  if (out.note.empty()) {
    try {
      func = func_to_json(lower_for_tvm(inst, ir::Target::Cpu, false));
    } catch (const std::invalid_argument& e) {
      out.note = std::string("translate: ") + e.what();
    }
  }
  if (!out.note.empty()) return out;  // nothing for the bridge to sample: no block form
  json req;
  req["backend"] = std::string(ir::target_name(target));
  req["signature"] = codegen::kernel_signature(inst, target);
  req["func"] = func;
  req["gpu_candidates"] = {{"count", count}, {"seed", seed}, {"not_tunable", ""}, {"func", func}};
  json result = bridge_result(req.dump(), options, out.key, out.cached);
  out.tvm_version = result.value("tvm_version", "");
  if (!result.value("ok", false)) throw CompileError("tvm: " + result.value("message", std::string("(no message)")));
  for (const json& c : result.value("candidates", json::array()))
    out.candidates.push_back({c.value("source", ""), c.value("trace", ""), c.value("trace_hash", "")});
  out.note = result.value("note", "");
  out.attempts = result.value("attempts", 0);
  out.sketches = result.value("sketches", 0);
  const json rejected = result.value("rejected", json::object());
  for (const auto& [why, n] : rejected.items())
    out.rejected += (out.rejected.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + why;
  return out;
}

}  // namespace ekb::tvm
