#include "eval/element_type_check.h"

#include <map>
#include <regex>
#include <set>

#include "codegen/target.h"
#include "eval/kernel_interface.h"
#include "runtime/compile_step.h"

namespace ekb::eval {

namespace {

using ir::ScalarType;
using TypeBinding = std::map<std::string, ScalarType>;  // `types` name -> element type

// The type a spelling stands for: typedefs of one type are the same type to the compiler, so a
// source cannot be told to use one rather than the other.
std::string type_identity(ScalarType t, ir::Target target) {
  if (target == ir::Target::Cpu && (t == ScalarType::F16 || t == ScalarType::BF16)) return "uint16_t";
  if (t == ScalarType::Bool) return "uint8_t";  // ekb_bool on cpu, uint8_t on cuda
  return codegen::element_type_name(t, target);
}

// The element type of each tensor argument (inputs, then outputs) under `types`.
std::vector<ScalarType> argument_types(const KernelInterface& k, const TypeBinding& types) {
  std::vector<ScalarType> out;
  for (const auto* list : {&k.inputs, &k.outputs})
    for (const ir::TensorInstance* t : *list) {
      auto bound = types.find(t->decl->type.name);
      out.push_back(bound == types.end() ? t->type : bound->second);
    }
  return out;
}

// Every other binding of the pattern's `types` a source might have been written for: the pattern's
// workloads, and each name bound to each other scalar type with the rest as in `inst`.
std::vector<TypeBinding> other_bindings(const ir::Instance& inst) {
  const auto& names = inst.pattern().type_params;
  std::vector<TypeBinding> out;
  for (const ir::Workload& w : inst.module->workloads) {
    TypeBinding b;
    for (const auto& n : names)
      if (const ir::Binding* bound = w.find_binding(n.name))
        if (auto t = ir::parse_scalar_type(bound->type_name)) b[n.name] = *t;
    if (b.size() == names.size() && b != inst.type_params) out.push_back(std::move(b));
  }
  for (const auto& n : names)
    for (int i = 0; i <= static_cast<int>(ScalarType::F64); ++i) {
      TypeBinding b = inst.type_params;
      b[n.name] = static_cast<ScalarType>(i);
      if (b != inst.type_params) out.push_back(std::move(b));
    }
  return out;
}

// "void (*)(const float*, float*, int64_t, int64_t)", with `void*` scratch when asked.
std::string entry_pointer_type(const KernelInterface& k, const std::vector<ScalarType>& types,
                               ir::Target target, bool scratch) {
  std::string args;
  auto add = [&](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
  for (size_t i = 0; i < types.size(); ++i)
    add((i < k.inputs.size() ? "const " : "") + codegen::element_type_name(types[i], target) + "*");
  for (size_t i = 0; i < k.params.size(); ++i) add("int64_t");
  if (target == ir::Target::Cuda) add("cudaStream_t");
  if (scratch) add("void*");
  return "void (*)(" + args + ")";
}

// What a source declaring `other` is told: the first tensor whose type differs, and how many more.
std::string mismatch_message(const KernelInterface& k, const std::vector<ScalarType>& expected,
                             const std::vector<ScalarType>& other, ir::Target target) {
  std::vector<const ir::TensorInstance*> tensors = k.inputs;
  tensors.insert(tensors.end(), k.outputs.begin(), k.outputs.end());
  std::string first;
  int more = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (type_identity(expected[i], target) == type_identity(other[i], target)) continue;
    if (!first.empty()) {
      ++more;
      continue;
    }
    first = "this workload's " + tensors[i]->decl->name + " is " + std::string(ir::scalar_type_name(expected[i])) +
            " (" + codegen::element_type_name(expected[i], target) + ") but the source's ekb_main declares " +
            codegen::element_type_name(other[i], target);
  }
  std::string message = std::string(runtime::kCheckFailureMarker) + "element types differ: " + first;
  if (more) message += " (and " + std::to_string(more) + (more == 1 ? " more tensor)" : " more tensors)");
  return message;
}

// Whether `ekb_main` appears in the code outside comments and string literals: a source whose
// entry point is misspelt (it only says "ekb_main" in a comment) must still fail to load as
// before, not on an undeclared name in the check.
bool code_names_entry_point(const std::string& text) {
  std::string code;
  code.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      i = std::min(text.find("*/", i + 2), text.size()) + 1;
    } else if (text[i] == '"' || text[i] == '\'') {
      const char quote = text[i];
      for (++i; i < text.size() && text[i] != quote && text[i] != '\n'; ++i)
        if (text[i] == '\\') ++i;
    } else {
      code += text[i];
      continue;
    }
    code += ' ';
  }
  static const std::regex kEntryPoint(R"(\bekb_main\b)");
  return std::regex_search(code, kEntryPoint);
}

}  // namespace

std::string element_type_check(const ir::Instance& inst, runtime::Language language, const std::string& source_text) {
  if (language == runtime::Language::OpenCL) return "";
  if (!code_names_entry_point(source_text)) return "";
  const ir::Target target = language == runtime::Language::Cuda ? ir::Target::Cuda : ir::Target::Cpu;
  const KernelInterface k = kernel_interface(inst);
  const std::vector<ScalarType> expected = argument_types(k, inst.type_params);
  auto identity = [&](const std::vector<ScalarType>& types) {
    std::string key;
    for (ScalarType t : types) key += type_identity(t, target) + ",";
    return key;
  };
  std::set<std::string> seen = {identity(expected)};

  std::string out = "\n#line 1 \"<ekb element type check>\"\n";
  // The spellings below need <cstdint> (a .cu file need not include it: nvcc's own headers
  // declare int64_t but not uint8_t) and std::is_same.
  if (language != runtime::Language::C) out += "#include <cstdint>\n#include <type_traits>\n";
  for (const TypeBinding& b : other_bindings(inst)) {
    const std::vector<ScalarType> other = argument_types(k, b);
    if (!seen.insert(identity(other)).second) continue;
    const std::string plain = entry_pointer_type(k, other, target, false);
    const std::string with_scratch = entry_pointer_type(k, other, target, true);
    const std::string message = mismatch_message(k, expected, other, target);
    if (language == runtime::Language::C)
      out += "_Static_assert(!_Generic(&ekb_main, " + plain + ": 1, " + with_scratch + ": 1, default: 0), \"" +
             message + "\");\n";
    else
      out += "static_assert(!(std::is_same<decltype(&ekb_main), " + plain +
             ">::value || std::is_same<decltype(&ekb_main), " + with_scratch + ">::value), \"" + message + "\");\n";
  }
  return out;
}

}  // namespace ekb::eval
