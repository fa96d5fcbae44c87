#include "eval/native_baseline.h"

#include "codegen/c_emitter.h"

namespace ekb::eval {

runtime::Source native_baseline(const ir::Instance& inst) {
  return runtime::Source{runtime::Language::C, codegen::emit_c_source(inst), "native:default"};
}

}  // namespace ekb::eval
