#include "codegen/target.h"

namespace ekb::codegen {

using ir::ScalarType;

std::string_view source_language(Target t) {
  switch (t) {
    case Target::Cpu: return "C or C++";
    case Target::Cuda: return "CUDA C++";
    case Target::OpenCL: return "OpenCL C";
  }
  return "?";
}

std::string_view code_fence_language(Target t) {
  switch (t) {
    case Target::Cpu: return "c";
    case Target::Cuda: return "cuda";
    case Target::OpenCL: return "opencl";
  }
  return "";
}

std::string element_type_name(ScalarType t, Target target) {
  if (target == Target::OpenCL) {
    switch (t) {
      case ScalarType::Bool: return "uchar";
      case ScalarType::I8: return "char";
      case ScalarType::U8: return "uchar";
      case ScalarType::I16: return "short";
      case ScalarType::I32: return "int";
      case ScalarType::I64: case ScalarType::Index: return "long";
      case ScalarType::F16: return "half";
      case ScalarType::BF16: return "ushort";
      case ScalarType::F32: return "float";
      case ScalarType::F64: return "double";
    }
  }
  switch (t) {
    case ScalarType::Bool: return target == Target::Cuda ? "uint8_t" : "ekb_bool";
    case ScalarType::I8: return "int8_t";
    case ScalarType::U8: return "uint8_t";
    case ScalarType::I16: return "int16_t";
    case ScalarType::I32: return "int32_t";
    case ScalarType::I64: case ScalarType::Index: return "int64_t";
    case ScalarType::F16: return target == Target::Cuda ? "__half" : "ekb_f16";
    case ScalarType::BF16: return target == Target::Cuda ? "__nv_bfloat16" : "ekb_bf16";
    case ScalarType::F32: return "float";
    case ScalarType::F64: return "double";
  }
  return "?";
}

}  // namespace ekb::codegen
