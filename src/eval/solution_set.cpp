#include "eval/solution_set.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "codegen/c_emitter.h"
#include "codegen/cuda_emitter.h"
#include "codegen/opencl_emitter.h"
#include "eval/element_type_check.h"
#include "ir/parser.h"
#include "lir/loop_ir.h"
#include "lower/lower.h"
#include "lower/schedule_error.h"
#include "tvm/tvm_compiler.h"

namespace ekb::eval {

namespace fs = std::filesystem;

namespace {

// Which file extensions hold solutions for `target`: its source languages, plus IR solutions.
bool extension_fits(const std::string& ext, ir::Target target) {
  if (ext == ".ekb") return true;
  auto lang = runtime::language_from_path("x" + ext);
  if (!lang) return false;
  switch (target) {
    case ir::Target::Cpu: return *lang == runtime::Language::C || *lang == runtime::Language::Cpp;
    case ir::Target::Cuda: return *lang == runtime::Language::Cuda;
    case ir::Target::OpenCL: return *lang == runtime::Language::OpenCL;
  }
  return false;
}

constexpr std::string_view kMetaSuffix = ".meta.json";

// Parses "WORKLOAD.EXT" or "WORKLOAD.sN.EXT" (the extension already checked).
bool split_name(const std::string& stem, std::string& workload, int& sample) {
  static const std::regex kSample(R"(^(.+)\.s(\d+)$)");
  std::smatch m;
  if (std::regex_match(stem, m, kSample)) {
    workload = m[1];
    sample = std::stoi(m[2]);
    return true;
  }
  workload = stem;
  sample = 0;
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CandidateError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string describe_tensor(const ir::TensorInstance& t) {
  std::string s = std::string(ir::role_name(t.decl->role)) + " " + t.decl->name + " : " +
                  std::string(ir::scalar_type_name(t.type)) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// An IR solution must have the suite pattern's ABI: the same params and non-temp tensors, in order.
void check_same_interface(const ir::Instance& sol, const ir::Instance& suite) {
  std::vector<std::string> a, b;
  for (const auto& p : sol.pattern().params) a.push_back("param " + p.name);
  for (const auto& p : suite.pattern().params) b.push_back("param " + p.name);
  for (const auto& t : sol.tensors)
    if (t.decl->role != ir::TensorRole::Temp) a.push_back(describe_tensor(t));
  for (const auto& t : suite.tensors)
    if (t.decl->role != ir::TensorRole::Temp) b.push_back(describe_tensor(t));
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    std::string got = i < a.size() ? a[i] : "nothing", want = i < b.size() ? b[i] : "nothing";
    if (got != want)
      throw CandidateError("the IR solution's interface differs from the pattern's: it declares '" + got +
                           "' where the pattern has '" + want + "'");
  }
}

// The names the kernel ABI gives the workload's arguments (what an OpenCL launch description uses).
void set_argument_names(runtime::Source& s, const ir::Instance& inst) {
  s.tensor_names.clear();
  s.param_names.clear();
  for (ir::TensorRole role : {ir::TensorRole::Input, ir::TensorRole::Output})
    for (const auto& t : inst.tensors)
      if (t.decl->role == role) s.tensor_names.push_back(t.decl->name);
  for (const auto& p : inst.pattern().params) s.param_names.push_back(p.name);
}

// The native compiler's output for `target`: C for cpu, CUDA C++ for cuda, OpenCL C for opencl.
runtime::Source native_source(const ir::Instance& inst, ir::Target target) {
  const lir::Func f = lower::lower(inst, lower::lower_options_for(target));
  switch (target) {
    case ir::Target::Cpu: return {runtime::Language::C, codegen::emit_c_source(f)};
    case ir::Target::Cuda: return {runtime::Language::Cuda, codegen::emit_cuda_source(f)};
    case ir::Target::OpenCL: return {runtime::Language::OpenCL, codegen::emit_opencl_source(f)};
  }
  throw std::logic_error("native_source: no emitter for this target");
}

runtime::Source ir_solution_source(const CandidateRef& c, const ir::Instance& suite_inst, ir::Target target) {
  IrSolution sol = load_ir_solution(c.path, suite_inst);
  runtime::Source s;
  try {
    s = native_source(sol.inst, target);
  } catch (const lower::ScheduleError& e) {
    throw CandidateError(e.what());
  }
  s.origin = c.path;
  return s;
}

// The types part of a whole-pattern file's stem: "f16" for "all.f16", "" for "all", nullopt for a
// stem that is not a whole-pattern file. Throws for "all.X" whose X is not one scalar type per
// `types` name of the pattern (a typo would otherwise leave the file silently unused).
std::optional<std::string> whole_pattern_types(const std::string& stem, const ir::Pattern& pattern,
                                               const std::string& rel) {
  if (stem == "all") return "";
  if (!stem.starts_with("all.")) return std::nullopt;
  const std::string types = stem.substr(4);
  size_t count = 0;
  bool valid = true;
  for (size_t begin = 0; begin <= types.size(); ++count) {
    size_t end = std::min(types.find('.', begin), types.size());
    valid = valid && ir::parse_scalar_type(std::string_view(types).substr(begin, end - begin)).has_value();
    begin = end + 1;
  }
  if (!valid || count != pattern.type_params.size()) {
    std::string example = "all";
    for (size_t i = 0; i < pattern.type_params.size(); ++i) example += ".f16";
    throw std::invalid_argument(rel + ": a whole-pattern file is named all.EXT or, for one type signature, all." +
                                (pattern.type_params.empty() ? std::string("EXT (pattern " + pattern.name +
                                                                           " has no `types`)")
                                                             : "TYPES.EXT with one type per `types` name (e.g. " +
                                                                   example + ".c)"));
  }
  return types;
}

}  // namespace

std::string source_solution_extension(ir::Target target, bool cpp) {
  switch (target) {
    case ir::Target::Cpu: return cpp ? ".cpp" : ".c";
    case ir::Target::Cuda: return ".cu";
    case ir::Target::OpenCL: return ".cl";
  }
  return ".c";
}

std::string workload_type_signature(const ir::Pattern& pattern, const ir::Workload& workload) {
  std::string out;
  for (const auto& t : pattern.type_params) {
    const ir::Binding* b = workload.find_binding(t.name);
    out += (out.empty() ? "" : ".") + (b ? b->type_name : std::string("?"));
  }
  return out;
}

IrSolution load_ir_solution(const std::string& path, const ir::Instance& suite_inst) {
  IrSolution sol;
  try {
    sol.module = std::make_unique<ir::Module>(ir::parse_module(read_file(path), path));
  } catch (const ir::ParseError& e) {
    throw CandidateError(e.diagnostic().format());
  }
  ir::Module& m = *sol.module;
  if (m.pattern.name != suite_inst.pattern().name)
    throw CandidateError("the IR solution is for pattern '" + m.pattern.name + "', not '" +
                         suite_inst.pattern().name + "'");
  // Bind the solution exactly as the suite binds the workload.
  m.workloads = {*suite_inst.workload};
  ir::Diagnostics diags(path);
  auto inst = ir::instantiate(m, m.workloads[0], diags);
  if (!inst) throw CandidateError(diags.format());
  check_same_interface(*inst, suite_inst);
  sol.inst = std::move(*inst);
  return sol;
}

std::vector<CandidateRef> find_candidates(const std::string& dir, const std::vector<suite::WorkloadEntry>& selected,
                                          ir::Target target) {
  std::vector<CandidateRef> out;
  if (dir == "native") {
    for (const auto& w : selected) out.push_back({w, std::string(kNativeDefault), 0, "", true, false, std::nullopt});
    return out;
  }
  if (dir == "tvm" || dir == "tvm-tuned") {
    const bool tuned = dir == "tvm-tuned";
    for (const auto& w : selected)
      out.push_back({w, std::string(tuned ? tvm::kTvmTuned : tvm::kTvmDefault), 0, "", false, true, std::nullopt,
                     tuned ? kDefaultTuneTrials : 0});
    return out;
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::invalid_argument("solutions directory '" + dir + "' does not exist");
  for (const auto& w : selected) {
    fs::path pattern_dir = fs::path(dir) / w.pattern->name();
    std::map<int, std::string> samples;
    std::map<int, SolutionMeta> metas;
    std::map<int, std::string> meta_files;  // sample -> relative path of its metadata
    // all.TYPES.EXT for this workload's type signature, else all.EXT.
    const std::string types = workload_type_signature(w.pattern->module.pattern, *w.workload);
    std::string whole_pattern, whole_pattern_typed;
    if (fs::is_directory(pattern_dir, ec)) {
      for (const auto& e : fs::directory_iterator(pattern_dir, ec)) {
        if (!e.is_regular_file()) continue;
        const std::string file = e.path().filename().string();
        std::string rel = (fs::path(w.pattern->name()) / e.path().filename()).string();
        std::string workload;
        int sample = 0;
        if (file.size() > kMetaSuffix.size() && file.ends_with(kMetaSuffix)) {
          split_name(file.substr(0, file.size() - kMetaSuffix.size()), workload, sample);
          if (workload != w.workload->name) continue;
          SolutionMeta meta = read_solution_meta(e.path().string());
          if (meta.backend.empty() || meta.backend == ir::target_name(target)) {
            metas[sample] = std::move(meta);
            meta_files[sample] = rel;
          }
          continue;
        }
        std::string ext = e.path().extension().string();
        if (!extension_fits(ext, target)) continue;
        std::string stem = e.path().stem().string();
        split_name(stem, workload, sample);
        if (auto for_types = whole_pattern_types(stem, w.pattern->module.pattern, rel)) {
          if (for_types->empty()) whole_pattern = rel;
          else if (*for_types == types) whole_pattern_typed = rel;
        } else if (workload == w.workload->name) {
          if (samples.count(sample))
            throw std::invalid_argument("two solutions for " + w.full_name() + " sample " + std::to_string(sample) +
                                        ": " + samples[sample] + " and " + rel);
          samples[sample] = rel;
        }
      }
    }
    if (!whole_pattern_typed.empty()) whole_pattern = whole_pattern_typed;
    if (samples.empty() && metas.empty() && !whole_pattern.empty()) samples[0] = whole_pattern;
    // A sample with metadata but no code is still a sample: it failed, and counts as one.
    for (const auto& [sample, meta] : metas)
      if (!samples.count(sample)) samples[sample] = "";
    if (samples.empty()) {
      out.push_back({w, "", 0, "", false, false, std::nullopt});
      continue;
    }
    int expect = 0;
    for (const auto& [sample, rel] : samples) {
      if (sample != expect++)
        throw std::invalid_argument("samples of " + w.full_name() + " must be numbered 0, 1, ... without gaps");
      std::optional<SolutionMeta> meta;
      if (auto it = metas.find(sample); it != metas.end()) meta = it->second;
      if (rel.empty()) {
        // Identified by its metadata file, so that each failed sample has its own result key.
        out.push_back({w, meta_files[sample], sample, "", false, false, std::move(meta)});
      } else {
        out.push_back({w, rel, sample, (fs::path(dir) / rel).string(), false, false, std::move(meta)});
      }
    }
  }
  return out;
}

runtime::Source candidate_source(const CandidateRef& c, const ir::Instance& inst, ir::Target target) {
  if (c.native) return native_baseline_source(inst, target);
  runtime::Source s;
  if (c.tvm && c.tune_trials > 0 && ir::is_gpu(target))
    return gpu_tuning_record_source(gpu_tuning_record(inst, target, c.device, c.tune_trials), inst);
  if (c.tvm) {
    try {
      tvm::TvmOptions options = tvm::default_options();
      options.tune_trials = c.tune_trials;
      return tvm_output(inst, target, options).source;
    } catch (const tvm::CompileError& e) {
      throw CandidateError(e.what());
    }
  }
  if (c.path.size() > 4 && c.path.substr(c.path.size() - 4) == ".ekb") {
    s = ir_solution_source(c, inst, target);
  } else {
    try {
      s = runtime::Source::from_file(c.path);
    } catch (const std::exception& e) {
      throw CandidateError(e.what());
    }
    s.text += element_type_check(inst, s.language, s.text);
  }
  set_argument_names(s, inst);
  return s;
}

tvm::TvmOutput tvm_output(const ir::Instance& inst, ir::Target target, const tvm::TvmOptions& options) {
  tvm::TvmOutput out = tvm::compile(inst, target, options);
  set_argument_names(out.source, inst);
  return out;
}

tvm::GpuTuningRecord gpu_tuning_record(const ir::Instance& inst, ir::Target target, const std::string& device,
                                       int candidates) {
  const std::string workload = inst.full_name();
  std::optional<tvm::GpuTuningRecord> record;
  try {
    record = tvm::read_gpu_record(tvm::records_root(), workload, device, target, candidates);
  } catch (const std::runtime_error& e) {
    throw CandidateError(e.what());
  }
  if (!record)
    throw CandidateError("no GPU tuning record for " + workload + " on " + device + " (" +
                         std::string(ir::target_name(target)) + ", " + std::to_string(candidates) +
                         " candidates): make one with " + std::string(tvm::kGpuTuneScript) +
                         " and `ekb tvm-tune select` (docs/TVM.md, \"GPU tuning\")");
  return *record;
}

runtime::Source gpu_tuning_record_source(const tvm::GpuTuningRecord& record, const ir::Instance& inst) {
  runtime::Source s = tvm::gpu_record_source(record);
  set_argument_names(s, inst);
  return s;
}

runtime::Source native_baseline_source(const ir::Instance& inst, ir::Target target) {
  runtime::Source s = native_source(inst, target);
  s.origin = std::string(kNativeDefault);
  set_argument_names(s, inst);
  return s;
}

}  // namespace ekb::eval
