#include "codegen/signature.h"

namespace ekb::codegen {

std::string kernel_signature(const ir::Instance& inst, Target target) {
  const ir::Pattern& p = inst.pattern();
  std::vector<std::string> args;
  for (ir::TensorRole role : {ir::TensorRole::Input, ir::TensorRole::Output}) {
    for (const auto& t : inst.tensors) {
      if (t.decl->role != role) continue;
      std::string elem = element_type_name(t.type, target);
      std::string cst = role == ir::TensorRole::Input ? "const " : "";
      if (target == Target::OpenCL)
        args.push_back("__global " + cst + elem + "* " + t.decl->name);
      else
        args.push_back(cst + elem + "* " + t.decl->name);
    }
  }
  for (const auto& prm : p.params)
    args.push_back(std::string(target == Target::OpenCL ? "long " : "int64_t ") + prm.name);
  if (target == Target::Cuda) args.push_back("cudaStream_t stream");

  std::string head = target == Target::Cpu    ? "void ekb_main("
                     : target == Target::Cuda ? "extern \"C\" void ekb_main("
                                              : "/* kernel arguments, by name */ (";
  std::string out = head;
  std::string indent(head.size(), ' ');
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ",\n" + indent;
    out += args[i];
  }
  out += ")";
  if (target != Target::OpenCL) out += ";";
  return out;
}

}  // namespace ekb::codegen
