#include "package/package.h"

#include <fmt/core.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "codegen/signature.h"
#include "codegen/target.h"
#include "eval/candidate_evaluation.h"
#include "eval/kernel_interface.h"
#include "eval/reference_cache.h"
#include "eval/workload_reference.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu_backend.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"
#include "suite/tolerance.h"

namespace ekb::package {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kLibrary = "libekb_kernels.a";
constexpr const char* kHeader = "ekb_kernels.h";

// Runs a build step; its failure is the package's (the compiler and tools, not a solution).
std::string run_or_throw(const std::vector<std::string>& argv, const std::string& what, double timeout_s = 300) {
  runtime::CommandOptions o;
  o.timeout_s = timeout_s;
  const runtime::CommandResult r = runtime::run_command(argv, o);
  if (!r.ok()) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error(what + " failed (" + cmd + "):\n" + r.output.substr(0, 4000));
  }
  return r.output;
}

void write_bytes(const fs::path& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A declaration on one line, without its ';' (kernel_signature spreads the arguments over lines).
std::string one_line_declaration(const std::string& text) {
  std::string out;
  for (size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\n') {
      while (k + 1 < text.size() && text[k + 1] == ' ') ++k;
      out += ' ';
    } else {
      out += text[k];
    }
  }
  while (!out.empty() && (out.back() == ';' || out.back() == ' ')) out.pop_back();
  return out;
}

// A verified solution on its way into the library.
struct Chosen {
  eval::CandidateRef candidate;
  eval::CandidateResult result;
  runtime::Source source;
  std::string function;
  std::string signature;      // the ABI declaration under the package's name
  std::string scratch_decl;   // its scratch-size function's declaration, when it declares scratch
};

// The sample of `samples` to package: the first correct one, or the fastest correct one when timed.
std::optional<size_t> choose(const std::vector<eval::CandidateResult>& results) {
  std::optional<size_t> best;
  for (size_t k = 0; k < results.size(); ++k) {
    if (!results[k].correct) continue;
    if (!best || results[k].speedup.value_or(0) > results[*best].speedup.value_or(0)) best = k;
  }
  return best;
}

std::string message_of(const std::vector<eval::CandidateResult>& results) {
  std::string out;
  for (const auto& r : results) {
    std::string first = r.message.substr(0, r.message.find('\n'));
    out += (out.empty() ? "" : "; ") + fmt::format("{}: {} {}", r.solution, eval::error_kind_name(r.error), first.substr(0, 200));
  }
  return out;
}

// Compiles `c` into `object` with the ABI's entry points renamed to the package's and every other
// global symbol made local, so that kernels of many workloads link into one library.
void compile_object(runtime::CpuBackend& cpu, Chosen& c, const fs::path& source_path, const fs::path& object,
                    const fs::path& scratch_dir) {
  const fs::path raw = scratch_dir / (c.function + ".raw.o");
  run_or_throw(cpu.object_command(c.source.language, source_path.string(), raw.string()), "compiling " + c.function);
  const std::string& prefix = cpu.cpu_target().binutils_prefix;
  const std::string symbols = run_or_throw({prefix + "nm", "--defined-only", raw.string()}, "listing symbols");
  const bool scratch = symbols.find(" ekb_scratch_bytes\n") != std::string::npos;
  const fs::path local = scratch_dir / (c.function + ".local.o");
  run_or_throw({prefix + "objcopy", "--keep-global-symbol=ekb_main", "--keep-global-symbol=ekb_scratch_bytes",
                raw.string(), local.string()},
               "localizing the symbols of " + c.function);
  run_or_throw({prefix + "objcopy", "--redefine-sym", "ekb_main=" + c.function, "--redefine-sym",
                "ekb_scratch_bytes=" + c.function + "_scratch_bytes", local.string(), object.string()},
               "renaming the entry point of " + c.function);
  if (scratch) {
    std::string params;
    for (const auto& p : c.source.param_names) params += (params.empty() ? "" : ", ") + std::string("int64_t ") + p;
    c.scratch_decl = fmt::format("int64_t {}_scratch_bytes({})", c.function, params.empty() ? "void" : params);
    c.signature.insert(c.signature.rfind(')'), ", void* scratch");
  }
}

std::string header_text(const std::vector<Chosen>& chosen, const std::string& target) {
  std::string out = fmt::format(
      "/* Kernels packaged by `ekb package` for {}: one function per workload, each the kernel ABI of\n"
      " * ekb's docs/ABI.md (inputs, outputs, then the workload's parameters as int64_t) under the\n"
      " * workload's name. manifest.json says what each was verified with; call each with the\n"
      " * parameter values listed here, which are the ones it was verified at. */\n"
      "#ifndef EKB_KERNELS_H\n#define EKB_KERNELS_H\n#include <stdint.h>\n#include \"ekb/ekb_abi.h\"\n\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      target);
  for (const Chosen& c : chosen) {
    const eval::KernelInterface iface = eval::kernel_interface(suite::bind_workload(c.candidate.workload));
    std::string params;
    for (size_t p = 0; p < iface.params.size() && p < c.source.param_names.size(); ++p)
      params += fmt::format("{}{} = {}", params.empty() ? "" : ", ", c.source.param_names[p], iface.params[p]);
    out += fmt::format("/* {} ({}){} */\n{};\n", c.candidate.workload.full_name(), c.candidate.solution,
                       params.empty() ? "" : ": " + params, c.signature);
    if (!c.scratch_decl.empty())
      out += fmt::format("/* the bytes of the 64-byte aligned scratch buffer its last argument takes */\n{};\n", c.scratch_decl);
    out += "\n";
  }
  return out + "#ifdef __cplusplus\n}\n#endif\n#endif\n";
}

// The C expression that reads element `k` of `name` (of type t) as a double.
std::string element_as_double(ir::ScalarType t, const std::string& name) {
  switch (t) {
    case ir::ScalarType::F16: return fmt::format("(double)ekb_f16_to_f32({}[k])", name);
    case ir::ScalarType::BF16: return fmt::format("(double)ekb_bf16_to_f32({}[k])", name);
    default: return fmt::format("(double){}[k]", name);
  }
}

// The example: the workload run once on the inputs of ekb's first random trial, each output
// compared with ekb's f64 reference within the suite's tolerance (exact for integers), as the
// evaluator compares them.
void write_example(const Chosen& c, const fs::path& dir, const eval::ReferenceCache* cache) {
  const ir::Instance inst = suite::bind_workload(c.candidate.workload);
  eval::WorkloadReference reference(inst, eval::kDefaultBaseSeed, cache);
  const eval::Trial& trial = reference.random_trial(0);
  if (!trial.reference_error.empty()) throw std::runtime_error("the reference fails on the example's inputs: " + trial.reference_error);
  const eval::KernelInterface& iface = reference.interface();
  fs::create_directories(dir / "data");
  std::string decls, call, checks;
  for (size_t i = 0; i < iface.inputs.size(); ++i) {
    const ir::TensorInstance& t = *iface.inputs[i];
    const std::string& name = t.decl->name;
    write_bytes(dir / "data" / (name + ".bin"), trial.inputs[i].data(), trial.inputs[i].size());
    decls += fmt::format("  const {}* {} = load(dir, \"{}.bin\", {});\n", codegen::element_type_name(t.type, ir::Target::Cpu), name,
                         name, t.num_bytes());
    call += (call.empty() ? "" : ", ") + name;
  }
  for (size_t o = 0; o < iface.outputs.size(); ++o) {
    const ir::TensorInstance& t = *iface.outputs[o];
    const std::string& name = t.decl->name;
    const ir::TensorData& want = trial.expected[o];
    std::vector<double> values(static_cast<size_t>(want.num_elements()));
    for (int64_t k = 0; k < want.num_elements(); ++k) values[static_cast<size_t>(k)] = want.as_double(k);
    write_bytes(dir / "data" / (name + ".expected.f64"), values.data(), values.size() * sizeof(double));
    const suite::Tolerance tol = suite::tolerance_for(t.type);
    decls += fmt::format("  {0}* {1} = alloc_output({2});\n", codegen::element_type_name(t.type, ir::Target::Cpu), name,
                         t.num_bytes());
    call += ", " + name;
    checks += fmt::format(
        "  {{\n    const double* want = load(dir, \"{0}.expected.f64\", {1} * sizeof(double));\n"
        "    long bad = 0;\n    for (long k = 0; k < {1}; ++k) {{\n      const double got = {2};\n"
        "      const double allowed = {3:.17g} * fabs(want[k]) + {4:.17g};\n"
        "      const int ok = isnan(want[k]) ? isnan(got) : (isinf(want[k]) ? got == want[k] : fabs(got - want[k]) <= allowed);\n"
        "      if (!ok && bad++ == 0) printf(\"output {0}: element %ld is %.9g, the reference %.9g\\n\", k, got, want[k]);\n"
        "    }}\n    printf(\"output {0}: %ld of %ld elements outside the tolerance\\n\", bad, (long){1});\n"
        "    failures += bad != 0;\n  }}\n",
        name, want.num_elements(), element_as_double(t.type, name), tol.rtol,
        tol.atol_rms * (o < trial.rms.size() ? trial.rms[o] : 0));
  }
  for (int64_t p : iface.params) call += fmt::format(", {}", p);
  std::string scratch_alloc;
  if (!c.scratch_decl.empty()) {
    std::string params;
    for (int64_t p : iface.params) params += fmt::format("{}{}", params.empty() ? "" : ", ", p);
    scratch_alloc = fmt::format("  void* scratch = alloc_output({}_scratch_bytes({}));\n", c.function, params);
    call += ", scratch";
  }
  const std::string text = fmt::format(
      "/* The package's example: {0} ({1}) run once on the inputs of ekb's first random\n"
      " * trial (seed {2}), each output checked against ekb's f64 reference within the suite's tolerance.\n"
      " * Usage: example [DATA_DIR] (default: the data directory beside this program's source). */\n"
      "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"ekb_kernels.h\"\n\n"
      "static void* alloc_output(size_t bytes) {{\n"
      "  void* p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);\n"
      "  if (!p) {{ perror(\"aligned_alloc\"); exit(2); }}\n  memset(p, 0, bytes);\n  return p;\n}}\n\n"
      "static void* load(const char* dir, const char* name, size_t bytes) {{\n"
      "  char path[4096];\n  snprintf(path, sizeof path, \"%s/%s\", dir, name);\n"
      "  FILE* f = fopen(path, \"rb\");\n  if (!f) {{ perror(path); exit(2); }}\n"
      "  void* p = alloc_output(bytes);\n"
      "  if (fread(p, 1, bytes, f) != bytes) {{ fprintf(stderr, \"%s: short read\\n\", path); exit(2); }}\n"
      "  fclose(f);\n  return p;\n}}\n\n"
      "int main(int argc, char** argv) {{\n  const char* dir = argc > 1 ? argv[1] : \"data\";\n  int failures = 0;\n"
      "{3}{4}  {5}({6});\n{7}"
      "  printf(\"{0}: %s\\n\", failures ? \"FAILED\" : \"ok\");\n  return failures ? 1 : 0;\n}}\n",
      c.candidate.workload.full_name(), c.function, trial.seed, decls, scratch_alloc, c.function, call, checks);
  runtime::write_file_atomically((dir / "example.c").string(), text);
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

json manifest_json(const std::vector<Chosen>& chosen, runtime::CpuBackend& cpu, const PackageOptions& o,
                   const std::vector<PackagedKernel>& kernels) {
  const runtime::DeviceInfo& device = cpu.device_info();
  json j;
  j["program"] = "ekb package";
  j["target"] = o.target.empty() ? "host" : o.target;
  j["verified_on"] = {{"device", device.name}, {"emulated", device.emulated}, {"compiler", device.compiler}};
  // Run from the package's directory: its own copy of the ABI header.
  std::vector<std::string> compile = cpu.object_command(runtime::Language::C, "SOURCE", "OBJECT");
  for (std::string& word : compile)
    if (word == runtime::abi_header_path()) word = "include/ekb/ekb_abi.h";
  j["compile"] = compile;
  j["library"] = std::string("lib/") + kLibrary;
  j["header"] = std::string("include/") + kHeader;
  j["kernels"] = json::array();
  for (const Chosen& c : chosen) {
    const eval::CandidateResult& r = c.result;
    json k = {{"workload", c.candidate.workload.full_name()},
              {"function", c.function},
              {"solution", c.candidate.solution},
              {"source", "src/" + c.function + (c.source.language == runtime::Language::Cpp ? ".cpp" : ".c")},
              {"source_hash", runtime::content_key({c.source.text})},
              {"signature", c.signature},
              {"correct", r.correct},
              {"max_error_ratio", r.max_error_ratio ? json(*r.max_error_ratio) : json(nullptr)}};
    if (r.speedup)
      k["speedup"] = {{"median", *r.speedup}, {"ci95", {r.speedup_low, r.speedup_high}}, {"baseline", r.baseline_info.describe()}};
    if (c.candidate.meta) k["method"] = c.candidate.meta->method;
    j["kernels"].push_back(k);
  }
  j["not_packaged"] = json::array();
  for (const PackagedKernel& k : kernels)
    if (!k.packaged) j["not_packaged"].push_back({{"workload", k.workload}, {"solution", k.solution}, {"why", k.message}});
  return j;
}

}  // namespace

int PackageResult::packaged() const {
  int n = 0;
  for (const auto& k : kernels) n += k.packaged;
  return n;
}

std::string function_name(const std::string& workload) {
  std::string out = "ekb_";
  for (char ch : workload)
    out += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch))) : '_';
  return out;
}

PackageResult build_package(const std::vector<suite::WorkloadEntry>& selected, const PackageOptions& options,
                            const std::function<void(const std::string&)>& progress) {
  runtime::BackendOptions backend_options;
  if (!options.target.empty()) backend_options.cpu_target = options.target;
  std::unique_ptr<runtime::Backend> backend = runtime::make_backend(ir::Target::Cpu, backend_options);
  auto& cpu = dynamic_cast<runtime::CpuBackend&>(*backend);
  const bool emulated = cpu.cpu_target().emulated;

  // Every workload's samples with code, in selection order.
  std::vector<std::pair<std::string, std::vector<eval::CandidateRef>>> by_workload;
  for (const eval::CandidateRef& c : eval::find_candidates(options.solutions_dir, selected, ir::Target::Cpu)) {
    if (c.missing() || c.failed_generation()) continue;
    const std::string name = c.workload.full_name();
    if (by_workload.empty() || by_workload.back().first != name) by_workload.push_back({name, {}});
    by_workload.back().second.push_back(c);
  }
  if (by_workload.empty()) throw std::runtime_error("no selected workload has a solution in " + options.solutions_dir);

  // The reference outputs computed to verify are read back for the example, not computed again.
  const std::optional<eval::ReferenceCache> references = eval::ReferenceCache::default_cache();
  const eval::ReferenceCache* cache = references ? &*references : nullptr;
  PackageResult result;
  std::vector<Chosen> chosen;
  for (const auto& [name, samples] : by_workload) {
    const ir::Instance inst = suite::bind_workload(samples.front().workload);
    eval::WorkloadReference reference(inst, eval::kDefaultBaseSeed, cache);
    const eval::Baseline baseline = eval::make_baseline(inst, ir::Target::Cpu);
    eval::EvalOptions eval_options;
    eval_options.time = options.time && !emulated;
    std::vector<eval::CandidateResult> results;
    for (const eval::CandidateRef& c : samples)
      results.push_back(eval::evaluate_candidate(cpu, reference, baseline, c, eval_options));
    PackagedKernel k{name, samples.front().solution, function_name(name), false, ""};
    if (const std::optional<size_t> best = choose(results)) {
      Chosen c{samples[*best], results[*best], eval::candidate_source(samples[*best], inst, ir::Target::Cpu), k.function,
               codegen::kernel_signature(inst, ir::Target::Cpu), ""};
      c.signature = one_line_declaration(c.signature);
      const size_t open = c.signature.find("ekb_main(");
      if (open == std::string::npos) throw std::runtime_error("unexpected kernel signature: " + c.signature);
      c.signature.replace(open, 8, c.function);
      k.solution = c.candidate.solution;
      k.packaged = true;
      chosen.push_back(std::move(c));
      progress(fmt::format("{:<56} {} correct{}", name, k.solution,
                           results[*best].speedup ? fmt::format(", {:.2f}x", *results[*best].speedup) : ""));
    } else {
      k.message = message_of(results);
      progress(fmt::format("{:<56} not packaged: {}", name, k.message));
    }
    result.kernels.push_back(std::move(k));
  }
  if (chosen.empty()) return result;

  const fs::path out(options.out_dir);
  fs::remove_all(out);
  for (const char* d : {"include/ekb", "lib", "src", "example"}) fs::create_directories(out / d);
  const fs::path scratch = out / ".build";
  fs::create_directories(scratch);
  std::vector<std::string> archive = {cpu.cpu_target().binutils_prefix + "ar", "rcs", (out / "lib" / kLibrary).string()};
  for (Chosen& c : chosen) {
    const fs::path source = out / "src" / (c.function + (c.source.language == runtime::Language::Cpp ? ".cpp" : ".c"));
    runtime::write_file_atomically(source.string(), c.source.text);
    const fs::path object = scratch / (c.function + ".o");
    compile_object(cpu, c, source, object, scratch);
    archive.push_back(object.string());
  }
  run_or_throw(archive, "archiving the library");
  fs::copy_file(runtime::abi_header_path(), out / "include" / "ekb" / "ekb_abi.h", fs::copy_options::overwrite_existing);
  runtime::write_file_atomically((out / "include" / kHeader).string(),
                                 header_text(chosen, options.target.empty() ? "this machine" : options.target));
  runtime::write_file_atomically((out / "manifest.json").string(),
                                 manifest_json(chosen, cpu, options, result.kernels).dump(2) + "\n");

  // The example, and how to rebuild everything by hand.
  const Chosen* example = &chosen.front();
  if (!options.example_workload.empty()) {
    example = nullptr;
    for (const Chosen& c : chosen)
      if (c.candidate.workload.full_name() == options.example_workload) example = &c;
    if (!example) throw std::runtime_error("the example's workload " + options.example_workload + " is not in the package");
  }
  result.example_workload = example->candidate.workload.full_name();
  write_example(*example, out / "example", cache);
  const std::vector<std::string> link = cpu.program_command(
      {"-I" + (out / "include").string(), (out / "example" / "example.c").string(), (out / "lib" / kLibrary).string()},
      (out / "example" / "example").string());
  runtime::write_file_atomically(
      (out / "Makefile").string(),
      fmt::format("# Rebuilds the package's example with the flags it was built with (the kernels' own compile\n"
                  "# command is manifest.json's \"compile\").\n"
                  "CC = {}\nCFLAGS = {}\nLDLIBS = {}\n\n"
                  "example/example: example/example.c lib/{}\n"
                  "\t$(CC) $(CFLAGS) -Iinclude example/example.c lib/{} $(LDLIBS) -o $@\n",
                  cpu.c_compiler(), joined(cpu.program_flags()), joined(cpu.cpu_target().libraries), kLibrary, kLibrary));
  run_or_throw(link, "linking the example");
  fs::remove_all(scratch);
  if (options.run_example) {
    std::vector<std::string> run = cpu.cpu_target().worker_prefix;
    run.push_back((out / "example" / "example").string());
    run.push_back((out / "example" / "data").string());
    runtime::CommandOptions o;
    o.timeout_s = 600;
    const runtime::CommandResult r = runtime::run_command(run, o);
    result.example_ran = r.started;
    result.example_passed = r.ok();
    result.example_output = r.output;
  }
  return result;
}

}  // namespace ekb::package
