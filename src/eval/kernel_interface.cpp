#include "eval/kernel_interface.h"

namespace ekb::eval {

uint64_t KernelInterface::tensor_bytes() const {
  uint64_t n = 0;
  for (const auto* t : inputs) n += static_cast<uint64_t>(t->num_bytes());
  for (const auto* t : outputs) n += static_cast<uint64_t>(t->num_bytes());
  return n;
}

KernelInterface kernel_interface(const ir::Instance& inst) {
  KernelInterface k;
  for (const ir::TensorInstance& t : inst.tensors) {
    if (t.decl->role == ir::TensorRole::Input) k.inputs.push_back(&t);
    if (t.decl->role == ir::TensorRole::Output) k.outputs.push_back(&t);
  }
  for (const ir::Ident& p : inst.pattern().params) k.params.push_back(inst.params.at(p.name));
  return k;
}

}  // namespace ekb::eval
